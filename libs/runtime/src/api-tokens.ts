/**
 * The API's bearer tokens: each has a name (recorded as the operator of what it decides) and
 * scopes. Configured in one place, read at start:
 * - `SF_API_TOKENS_FILE`: a JSON or YAML list of `{name, token | sha256, scopes}`; `sha256` is the
 *   hex SHA-256 of the token's UTF-8 bytes, so the file need not hold the token itself.
 * - `SF_API_TOKENS`: comma-separated `name:scope+scope:token` (the token is everything after the
 *   second colon). A bare `token` (the older form) is named `legacy-<n>` (its 1-based position
 *   in the list) and has every scope.
 * Both may be set; names and tokens must then be unique across them.
 *
 * Guarantees:
 * - Only digests are kept: a configured token is never held, logged or put in an error message.
 * - `authenticate` compares SHA-256 digests (equal length whatever the input) with
 *   `timingSafeEqual` against every configured token: its time does not depend on where or
 *   whether a token matches, and no input makes it throw.
 * - `admin` includes every other scope.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { parse as parseYaml } from 'yaml';

export const API_SCOPES = ['read', 'operate', 'publish', 'admin'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

export interface ApiToken {
  readonly name: string;
  readonly scopes: readonly ApiScope[];
  /** SHA-256 of the token's UTF-8 bytes. */
  readonly digest: Buffer;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
const HEX_DIGEST = /^[0-9a-f]{64}$/i;

export class ApiTokensInvalid extends Error {
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'ApiTokensInvalid';
  }
}

export const tokenDigest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** The configured token the presented one is, if any. */
export function authenticate(tokens: readonly ApiToken[], presented: string): ApiToken | undefined {
  const digest = tokenDigest(presented);
  let found: ApiToken | undefined;
  for (const token of tokens) {
    if (timingSafeEqual(token.digest, digest) && !found) found = token;
  }
  return found;
}

export const hasScope = (token: ApiToken, scope: ApiScope): boolean => token.scopes.includes('admin') || token.scopes.includes(scope);

/** Every configured token; throws ApiTokensInvalid (naming the entry, never its token) on a malformed one. */
export function loadApiTokens(env: NodeJS.ProcessEnv, readFile: (path: string) => string): readonly ApiToken[] {
  const fromFile = env.SF_API_TOKENS_FILE ? tokensFromFile(env.SF_API_TOKENS_FILE, readFile) : [];
  const tokens = [...fromFile, ...tokensFromList(env.SF_API_TOKENS ?? '')];
  const names = new Set<string>();
  const digests = new Set<string>();
  for (const token of tokens) {
    if (names.has(token.name)) throw new ApiTokensInvalid(`API token name ${token.name} is configured twice`);
    const hex = token.digest.toString('hex');
    if (digests.has(hex)) throw new ApiTokensInvalid(`API token ${token.name} has the same token as another one`);
    names.add(token.name);
    digests.add(hex);
  }
  return tokens;
}

function tokensFromList(list: string): ApiToken[] {
  const entries = list
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries.map((entry, i) => {
    const where = `SF_API_TOKENS entry ${i + 1}`;
    if (!entry.includes(':')) return { name: `legacy-${i + 1}`, scopes: [...API_SCOPES], digest: tokenDigest(entry) };
    const first = entry.indexOf(':');
    const second = entry.indexOf(':', first + 1);
    if (second < 0) throw new ApiTokensInvalid(`${where} is not name:scope+scope:token`);
    const token = entry.slice(second + 1);
    if (!token) throw new ApiTokensInvalid(`${where} has no token after name:scopes:`);
    return { name: nameOf(entry.slice(0, first), where), scopes: scopesOf(entry.slice(first + 1, second).split('+'), where), digest: tokenDigest(token) };
  });
}

function tokensFromFile(file: string, readFile: (path: string) => string): ApiToken[] {
  let text: string;
  try {
    text = readFile(file);
  } catch (err) {
    throw new ApiTokensInvalid(`SF_API_TOKENS_FILE ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).name}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    // The parser's message may quote the file's text; only its kind is reported.
    throw new ApiTokensInvalid(`SF_API_TOKENS_FILE ${file} cannot be read as JSON or YAML (${(err as Error).name})`);
  }
  if (!Array.isArray(parsed)) throw new ApiTokensInvalid(`SF_API_TOKENS_FILE ${file} must hold a list of {name, token | sha256, scopes}`);
  return parsed.map((entry: unknown, i) => {
    const where = `SF_API_TOKENS_FILE entry ${i + 1}`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new ApiTokensInvalid(`${where} must be {name, token | sha256, scopes}`);
    const { name, token, sha256, scopes, ...rest } = entry as Record<string, unknown>;
    if (Object.keys(rest).length) throw new ApiTokensInvalid(`${where} has unknown field(s) ${Object.keys(rest).join(', ')}`);
    if (!Array.isArray(scopes)) throw new ApiTokensInvalid(`${where}: scopes must be a list of ${API_SCOPES.join(', ')}`);
    const named = nameOf(name, where);
    if ((token === undefined) === (sha256 === undefined)) throw new ApiTokensInvalid(`${where} (${named}) needs exactly one of token and sha256`);
    if (token !== undefined && (typeof token !== 'string' || !token)) throw new ApiTokensInvalid(`${where} (${named}): token must be a non-empty string`);
    if (sha256 !== undefined && (typeof sha256 !== 'string' || !HEX_DIGEST.test(sha256))) throw new ApiTokensInvalid(`${where} (${named}): sha256 must be 64 hex digits`);
    const digest = typeof token === 'string' ? tokenDigest(token) : Buffer.from(sha256 as string, 'hex');
    return { name: named, scopes: scopesOf(scopes, where), digest };
  });
}

function nameOf(name: unknown, where: string): string {
  if (typeof name !== 'string' || !NAME.test(name)) throw new ApiTokensInvalid(`${where}: a name is 1..64 of A-Z a-z 0-9 . _ @ - (starting with a letter or digit)`);
  return name;
}

function scopesOf(scopes: readonly unknown[], where: string): ApiScope[] {
  const bad = scopes.filter((s) => !API_SCOPES.includes(s as ApiScope));
  if (bad.length || scopes.length === 0) throw new ApiTokensInvalid(`${where}: scopes are one or more of ${API_SCOPES.join(', ')}`);
  return [...new Set(scopes as ApiScope[])];
}
