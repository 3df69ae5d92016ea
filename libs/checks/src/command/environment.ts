/**
 * The environment a verify command runs with: only allow-listed variables of the verifier, never
 * one whose name looks secret, plus the caller's explicit values.
 */
import type { CommandEnvironment } from '../types';

export const DEFAULT_ALLOWED_ENV: readonly string[] = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'LC_*', 'TERM', 'TMPDIR', 'TZ', 'CI', 'SF_*',
];

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

function allowed(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
}

export function buildCommandEnv(options: CommandEnvironment = {}): Record<string, string> {
  const base = options.base ?? process.env;
  const patterns = [...DEFAULT_ALLOWED_ENV, ...(options.allow ?? [])];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && allowed(name, patterns) && !looksSecret(name)) env[name] = value;
  }
  return { ...env, ...options.set };
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
