export const REDACTED = '[REDACTED]';

/** Replaces every occurrence of every secret (longest first, so overlapping secrets vanish whole). */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length > 0 && result.includes(secret)) result = result.split(secret).join(REDACTED);
  }
  return result;
}
