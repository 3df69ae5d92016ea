/**
 * Collects a stream's bytes up to a cap, counting everything: the first `cap` bytes (`head`, for
 * evidence) or the last (`tail`, for an agent reading an error at the end). It keeps `slack` bytes
 * beyond the cap so a secret that straddles the cut is still whole when redacted (see `text`).
 */
import { redact } from './redact';

export type OutputKeep = 'head' | 'tail';

export class CappedOutput {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(
    private readonly cap: number,
    private readonly slack: number,
    private readonly keep: OutputKeep = 'head',
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const limit = this.cap + this.slack;
    if (this.keep === 'tail') {
      this.chunks.push(chunk);
      this.kept += chunk.length;
      while (this.kept > limit) {
        const excess = this.kept - limit;
        const first = this.chunks[0]!;
        if (first.length <= excess) {
          this.chunks.shift();
          this.kept -= first.length;
        } else {
          this.chunks[0] = first.subarray(excess);
          this.kept -= excess;
        }
      }
      return;
    }
    const room = limit - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
  }

  get truncated(): boolean {
    return this.total > this.cap;
  }

  /** Redacted text of at most `cap` bytes' worth of the output. */
  text(secrets: readonly string[]): string {
    const all = Buffer.concat(this.chunks);
    if (!this.truncated) return redact(all.toString('utf8'), secrets);
    const redacted = Buffer.from(redact(all.toString('utf8'), secrets), 'utf8');
    const cut = this.keep === 'head' ? redacted.subarray(0, this.cap) : redacted.subarray(Math.max(0, redacted.length - this.cap));
    return cut.toString('utf8');
  }
}
