/** Why a path of a directory cannot be sealed. A refusal is final: sealing the same files again is refused again. */

export type SnapshotRule = 'hard_link' | 'fifo' | 'socket' | 'device' | 'unsafe_path' | 'changed_while_sealing' | 'file_too_large' | 'attempt_too_large';

export interface SnapshotRefusal {
  /** Relative to the sealed directory. */
  readonly path: string;
  readonly rule: SnapshotRule;
  readonly detail: string;
}

const LISTED = 10;
const SHOWN_PATH_CHARS = 200;

function shown(path: string): string {
  return path.length > SHOWN_PATH_CHARS ? `${path.slice(0, SHOWN_PATH_CHARS)}…` : path;
}

/** At most LISTED refusals, each path cut to SHOWN_PATH_CHARS, so the text stays short whatever the names. */
export function describeRefusals(refusals: readonly SnapshotRefusal[]): string {
  const listed = refusals.slice(0, LISTED).map((refusal) => `${shown(refusal.path)} (${refusal.rule}): ${refusal.detail}`);
  const more = refusals.length > LISTED ? `; and ${refusals.length - LISTED} more` : '';
  return `${listed.join('; ')}${more}`;
}

/** Not retryable: the files stay what they are, so a redelivery would be refused the same way. */
export class SnapshotRefusedError extends Error {
  readonly retryable = false;

  constructor(
    readonly label: string,
    readonly refusals: readonly SnapshotRefusal[],
  ) {
    super(`cannot seal the ${label}: ${describeRefusals(refusals)}`);
    this.name = 'SnapshotRefusedError';
  }
}
