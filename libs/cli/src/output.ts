/** Where command output goes: stdout for results, stderr for diagnostics. Swappable in tests. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
  readonly isTTY: boolean;
}

export const processOutput: Output = {
  out: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => void process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  isTTY: Boolean(process.stdout.isTTY),
};

/** A failure the user caused or can fix: printed as `sf: <message>`, exit code 1, no stack. */
export class UsageError extends Error {
  readonly retryable = false;
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'UsageError';
  }
}
