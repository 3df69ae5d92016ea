import { createHash } from 'node:crypto';
import { API_SCOPES, ApiTokensInvalid, authenticate, hasScope, loadApiTokens, tokenDigest, type ApiToken } from './api-tokens';

const noFile = (file: string): string => {
  throw Object.assign(new Error(`ENOENT: ${file}`), { code: 'ENOENT' });
};
const files = (content: Record<string, string>) => (file: string) => content[file] ?? noFile(file);
const load = (env: NodeJS.ProcessEnv, read: (file: string) => string = noFile) => loadApiTokens(env, read);
const failure = (run: () => unknown): Error => {
  try {
    run();
  } catch (err) {
    return err as Error;
  }
  throw new Error('did not fail');
};
const view = (tokens: readonly ApiToken[]) => tokens.map((t) => ({ name: t.name, scopes: t.scopes }));

describe('loadApiTokens', () => {
  it('reads SF_API_TOKENS entries as name:scope+scope:token (the token may hold colons)', () => {
    const tokens = load({ SF_API_TOKENS: 'ci:publish+read:t0k:with:colons, alice:operate:s3cret' });
    expect(view(tokens)).toEqual([
      { name: 'ci', scopes: ['publish', 'read'] },
      { name: 'alice', scopes: ['operate'] },
    ]);
    expect(authenticate(tokens, 't0k:with:colons')?.name).toBe('ci');
    expect(authenticate(tokens, 's3cret')?.name).toBe('alice');
  });

  it('names a bare token legacy-<position> with every scope', () => {
    const tokens = load({ SF_API_TOKENS: 'alice:read:a-token,old-token' });
    expect(view(tokens)).toEqual([
      { name: 'alice', scopes: ['read'] },
      { name: 'legacy-2', scopes: [...API_SCOPES] },
    ]);
  });

  it('reads SF_API_TOKENS_FILE (YAML or JSON) with a token or its sha256, together with SF_API_TOKENS', () => {
    const sha256 = createHash('sha256').update('deploy-token', 'utf8').digest('hex');
    const read = files({
      '/etc/sf/tokens.yaml': `- name: deploy\n  sha256: ${sha256}\n  scopes: [publish]\n- { name: ops, token: ops-token, scopes: [operate, read] }\n`,
      '/etc/sf/tokens.json': JSON.stringify([{ name: 'root', token: 'root-token', scopes: ['admin'] }]),
    });
    const yaml = load({ SF_API_TOKENS_FILE: '/etc/sf/tokens.yaml', SF_API_TOKENS: 'alice:read:alice-token' }, read);
    expect(view(yaml)).toEqual([
      { name: 'deploy', scopes: ['publish'] },
      { name: 'ops', scopes: ['operate', 'read'] },
      { name: 'alice', scopes: ['read'] },
    ]);
    expect(authenticate(yaml, 'deploy-token')?.name).toBe('deploy');
    expect(view(load({ SF_API_TOKENS_FILE: '/etc/sf/tokens.json' }, read))).toEqual([{ name: 'root', scopes: ['admin'] }]);
  });

  it('keeps no token, only its digest', () => {
    const [token] = load({ SF_API_TOKENS: 'alice:read:very-secret-value' });
    expect(token.digest.equals(tokenDigest('very-secret-value'))).toBe(true);
    expect(JSON.stringify(token)).not.toContain('very-secret');
  });

  it.each([
    ['a name with spaces', { SF_API_TOKENS: 'bad name:read:secret-1' }, /entry 1: a name/],
    ['an unknown scope', { SF_API_TOKENS: 'alice:root:secret-1' }, /entry 1: scopes are/],
    ['no token after the scopes', { SF_API_TOKENS: 'alice:read:' }, /entry 1 has no token/],
    ['name and token without scopes', { SF_API_TOKENS: 'alice:secret-1' }, /entry 1 is not name:scope\+scope:token/],
    ['a name twice', { SF_API_TOKENS: 'alice:read:secret-1,alice:operate:secret-2' }, /alice is configured twice/],
    ['one token under two names', { SF_API_TOKENS: 'alice:read:secret-1,bob:operate:secret-1' }, /bob has the same token/],
    ['a missing file', { SF_API_TOKENS_FILE: '/nope.yaml' }, /cannot be read: ENOENT/],
  ])('refuses %s without quoting any token', (_what, env, message) => {
    const err = failure(() => load(env));
    expect(err).toBeInstanceOf(ApiTokensInvalid);
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('secret-');
  });

  it.each([
    ['not a list', 'name: x'],
    ['token and sha256 both', '- { name: a, token: secret-1, sha256: "00", scopes: [read] }'],
    ['neither token nor sha256', '- { name: a, scopes: [read] }'],
    ['a short sha256', '- { name: a, sha256: abc, scopes: [read] }'],
    ['an unknown field', '- { name: a, token: secret-1, scopes: [read], admin: true }'],
    ['no scopes', '- { name: a, token: secret-1, scopes: [] }'],
    ['text that is neither JSON nor YAML', '- { name: a, token: "secret-1'],
  ])('refuses a file with %s without quoting any token', (_what, text) => {
    const err = failure(() => load({ SF_API_TOKENS_FILE: '/t.yaml' }, files({ '/t.yaml': text })));
    expect(err).toBeInstanceOf(ApiTokensInvalid);
    expect(err.message).not.toContain('secret-');
  });
});

describe('authenticate', () => {
  const tokens = load({ SF_API_TOKENS: 'alice:read:abcdef,bob:operate:ghijkl' });

  it.each([
    ['another token of the same length', 'zzzzzz'],
    ['the same length in characters, not in bytes', 'ébcdef'],
    ['a longer multibyte token', 'abcdéf'],
    ['a prefix', 'abcde'],
    ['an empty token', ''],
  ])('finds no token for %s (and never throws)', (_what, presented) => {
    expect(authenticate(tokens, presented)).toBeUndefined();
  });

  it('finds the token presented', () => {
    expect(authenticate(tokens, 'ghijkl')?.name).toBe('bob');
  });

  it('admin holds every scope; other scopes only themselves', () => {
    const [reader, root] = load({ SF_API_TOKENS: 'r:read:t1,root:admin:t2' });
    expect(API_SCOPES.filter((s) => hasScope(reader, s))).toEqual(['read']);
    expect(API_SCOPES.filter((s) => hasScope(root, s))).toEqual([...API_SCOPES]);
  });
});
