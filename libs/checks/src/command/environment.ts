/**
 * Which values must never appear in evidence. The command's own environment is built from scratch
 * by the sandbox (@stageflow/sandbox); this only names the secrets redaction looks for.
 */
import type { CommandEnvironment } from '../types';

const SECRET_SEGMENTS = new Set([
  'TOKEN', 'TOKENS', 'SECRET', 'SECRETS', 'PASSWORD', 'PASSWD', 'PASSPHRASE', 'CREDENTIAL', 'CREDENTIALS',
  'AUTH', 'COOKIE', 'SESSION', 'KEY', 'KEYS', 'APIKEY', 'DSN', 'PRIVATE', 'SIGNATURE',
]);
const SECRET_SUBSTRINGS = ['TOKEN', 'SECRET', 'PASSWORD', 'PASSWD', 'APIKEY', 'CREDENTIAL', 'DATABASE_URL'];

/** True for names like OPENAI_API_KEY, GITHUB_TOKEN, SF_CANARY_TOKEN, PGPASSWORD, DATABASE_URL. */
export function looksSecret(name: string): boolean {
  const upper = name.toUpperCase();
  return upper.split(/[^A-Z0-9]+/).some((segment) => SECRET_SEGMENTS.has(segment)) || SECRET_SUBSTRINGS.some((part) => upper.includes(part));
}

/** Env-derived secrets shorter than this are not redacted (they would erase ordinary words). */
const MIN_ENV_SECRET_LENGTH = 6;

/** Every string that must never appear in evidence. */
export function secretValues(options: CommandEnvironment = {}, explicit: readonly string[] = []): string[] {
  const values = new Set(explicit.filter((value) => value.length > 0));
  const sources = [options.base ?? process.env, options.set ?? {}];
  for (const source of sources) {
    for (const [name, value] of Object.entries(source)) {
      if (value !== undefined && value.length >= MIN_ENV_SECRET_LENGTH && looksSecret(name)) values.add(value);
    }
  }
  return [...values].sort((a, b) => b.length - a.length);
}
