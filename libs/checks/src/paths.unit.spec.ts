import { parseRelativePath } from './paths';

describe('parseRelativePath', () => {
  it.each([
    ['a.md', 'a.md'],
    ['./a.md', 'a.md'],
    ['dir//sub/./b.txt', 'dir/sub/b.txt'],
    ['100%.md', '100%.md'],
  ])('accepts %j as %j', (raw, normalized) => {
    expect(parseRelativePath(raw)).toEqual(expect.objectContaining({ ok: true, normalized }));
  });

  it.each([
    ['', 'empty'],
    ['/etc/passwd', 'absolute'],
    ['C:/x', 'absolute'],
    ['../x', '".."'],
    ['a/../../x', '".."'],
    ['a\0b', 'NUL'],
    ['..\\x', 'backslash'],
    ['%2e%2e/x', 'percent-encoded'],
    ['a/%2F..', 'percent-encoded'],
    ['%252e%252e/x', 'percent-encoded'],
    ['.', 'names no file'],
  ])('refuses %j (%s)', (raw, reason) => {
    const parsed = parseRelativePath(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toContain(reason);
  });

  it('accepts the root only when asked', () => {
    expect(parseRelativePath('./', { allowRoot: true })).toEqual({ ok: true, normalized: '.', segments: [] });
  });
});
