/**
 * Collects a stream's bytes up to a cap, counting everything. It keeps `slack` bytes beyond the cap
 * so a secret that straddles the cap is still whole when redacted (see `text`).
 */
import { redact } from './redact';

export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(
    private readonly cap: number,
    private readonly slack: number,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.cap + this.slack - this.kept;
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
    return redacted.subarray(0, this.cap).toString('utf8');
  }
}
