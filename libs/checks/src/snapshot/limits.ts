/** Bounds on what one attempt may add to the blob store through its sealed snapshots. */

export interface SnapshotLimits {
  /** Largest file (bytes) the attempt may add or change. */
  readonly maxFileBytes: number;
  /** Most bytes the attempt's added or changed files may hold together, checkout and artifacts. */
  readonly maxAttemptBytes: number;
}

export const DEFAULT_SNAPSHOT_LIMITS: SnapshotLimits = { maxFileBytes: 100 * 1024 * 1024, maxAttemptBytes: 1024 * 1024 * 1024 };

/** The per-attempt allowance shared by every seal of one outcome (its checkout and its artifacts). */
export class SnapshotBudget {
  private used = 0;

  constructor(readonly limits: SnapshotLimits) {}

  get remaining(): number {
    return Math.max(0, this.limits.maxAttemptBytes - this.used);
  }

  /** Counts `bytes` as added by the attempt; false once the total is past the per-attempt limit. */
  take(bytes: number): boolean {
    this.used += bytes;
    return this.used <= this.limits.maxAttemptBytes;
  }
}
