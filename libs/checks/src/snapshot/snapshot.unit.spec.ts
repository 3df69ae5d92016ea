/** Sealed snapshots against real directories and a real `git init` repository. */
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryBlobStore, tempDir } from '../__tests__/support.spec';
import { blobDigest } from './digest';
import { diffManifests, MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK, type SnapshotManifest } from './manifest';
import { materializeSnapshot } from './materialize';
import { sealDirectory } from './seal';

const root = tempDir('snapshot');
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'pipe', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' } });
const paths = (manifest: SnapshotManifest) => manifest.files.map((entry) => entry.path);

describe('sealDirectory / materializeSnapshot', () => {
  it('round-trips files, modes and symlinks (recorded, never followed)', async () => {
    const source = join(root, 'plain');
    mkdirSync(join(source, 'b', 'c'), { recursive: true });
    writeFileSync(join(source, 'a.txt'), 'alpha\n');
    writeFileSync(join(source, 'b', 'c', 'deep.md'), '# deep\n');
    writeFileSync(join(source, 'run.sh'), '#!/bin/sh\necho hi\n');
    chmodSync(join(source, 'run.sh'), 0o755);
    writeFileSync(join(source, 'empty'), '');
    symlinkSync('/etc/passwd', join(source, 'link-out'));
    const blobs = new MemoryBlobStore();

    const sealed = await sealDirectory(source, blobs);
    expect(paths(sealed.manifest)).toEqual(['a.txt', 'b/c/deep.md', 'empty', 'link-out', 'run.sh']);
    const byPath = new Map(sealed.manifest.files.map((entry) => [entry.path, entry]));
    expect(byPath.get('a.txt')).toEqual({ path: 'a.txt', digest: blobDigest(Buffer.from('alpha\n')), size: 6, mode: MODE_FILE });
    expect(byPath.get('run.sh')!.mode).toBe(MODE_EXECUTABLE);
    expect(byPath.get('link-out')).toEqual({ path: 'link-out', digest: blobDigest(Buffer.from('/etc/passwd')), size: 11, mode: MODE_SYMLINK });
    expect(await blobs.get(sealed.digest)).toEqual(Uint8Array.from(Buffer.from(JSON.stringify(sealed.manifest))));

    const target = join(root, 'plain-copy');
    const manifest = await materializeSnapshot(sealed.digest, blobs, target);
    expect(manifest).toEqual(sealed.manifest);
    expect(readFileSync(join(target, 'b', 'c', 'deep.md'), 'utf8')).toBe('# deep\n');
    expect(lstatSync(join(target, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(lstatSync(join(target, 'a.txt')).mode & 0o777).toBe(0o644);
    expect(readlinkSync(join(target, 'link-out'))).toBe('/etc/passwd');
    expect((await sealDirectory(target, blobs)).digest).toBe(sealed.digest);
  });

  it('stores identical content once', async () => {
    const source = join(root, 'dupes');
    mkdirSync(source);
    for (const name of ['one', 'two', 'three']) writeFileSync(join(source, name), 'same bytes');
    const blobs = new MemoryBlobStore();
    const sealed = await sealDirectory(source, blobs);
    expect(new Set(sealed.manifest.files.map((entry) => entry.digest)).size).toBe(1);
    expect(blobs.blobs.size).toBe(2); // the content and the manifest
  });

  it('in a git checkout: tracked and untracked non-ignored files, no .git, no ignored files', async () => {
    const repo = join(root, 'repo');
    mkdirSync(join(repo, 'src'), { recursive: true });
    git(repo, 'init', '-q');
    writeFileSync(join(repo, '.gitignore'), 'dist/\n*.log\n');
    writeFileSync(join(repo, 'src', 'a.ts'), 'a');
    writeFileSync(join(repo, 'gone.txt'), 'soon deleted');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'init');
    mkdirSync(join(repo, 'dist'));
    writeFileSync(join(repo, 'dist', 'bundle.js'), 'ignored');
    writeFileSync(join(repo, 'debug.log'), 'ignored');
    writeFileSync(join(repo, 'untracked.md'), 'new');
    unlinkSync(join(repo, 'gone.txt'));
    const sealed = await sealDirectory(repo, new MemoryBlobStore());
    expect(paths(sealed.manifest)).toEqual(['.gitignore', 'src/a.ts', 'untracked.md']);

    const everything = await sealDirectory(repo, new MemoryBlobStore(), { ignoreGit: true });
    expect(paths(everything.manifest)).toEqual(['.gitignore', 'debug.log', 'dist/bundle.js', 'src/a.ts', 'untracked.md']);
  });

  it('diffs two seals of a changing git checkout like git status does', async () => {
    const repo = join(root, 'repo2');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, '.gitignore'), 'build/\n');
    writeFileSync(join(repo, 'keep.txt'), 'keep');
    writeFileSync(join(repo, 'edit.txt'), 'v1');
    writeFileSync(join(repo, 'drop.txt'), 'drop');
    writeFileSync(join(repo, 'tool.sh'), 'echo');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'init');
    const blobs = new MemoryBlobStore();
    const before = await sealDirectory(repo, blobs);
    writeFileSync(join(repo, 'edit.txt'), 'v2');
    rmSync(join(repo, 'drop.txt'));
    chmodSync(join(repo, 'tool.sh'), 0o755);
    writeFileSync(join(repo, 'added.txt'), 'new');
    mkdirSync(join(repo, 'build'));
    writeFileSync(join(repo, 'build', 'out.bin'), 'ignored');
    const afterSeal = await sealDirectory(repo, blobs);
    expect(diffManifests(before.manifest, afterSeal.manifest)).toEqual({ added: ['added.txt'], modified: ['edit.txt', 'tool.sh'], deleted: ['drop.txt'] });
    expect(diffManifests(before.manifest, before.manifest)).toEqual({ added: [], modified: [], deleted: [] });
  });
});

describe('materializeSnapshot refuses unsafe manifests before writing anything', () => {
  const blobs = new MemoryBlobStore();
  async function manifestWith(path: string, extra: object[] = []): Promise<string> {
    const digest = await blobs.put(Buffer.from('x'));
    return blobs.put(Buffer.from(JSON.stringify({ files: [...extra, { path, digest, size: 1, mode: MODE_FILE }] })));
  }

  it.each([
    ['absolute', '/tmp/evil'],
    ['parent traversal', '../evil'],
    ['inner traversal', 'a/../../evil'],
    ['NUL', 'a\0b'],
    ['unnormalised', './a'],
    ['encoded traversal', '%2e%2e/evil'],
  ])('%s path', async (_name, path) => {
    const target = join(root, `refuse-${_name.replace(/\s/g, '-')}`);
    await expect(materializeSnapshot(await manifestWith(path), blobs, target)).rejects.toThrow(/refused path/);
    expect(() => lstatSync(join(target, 'x'))).toThrow();
  });

  it('a file beneath a symlink entry (would write through the link)', async () => {
    const link = { path: 'a', digest: await blobs.put(Buffer.from('/tmp')), size: 4, mode: MODE_SYMLINK };
    await expect(materializeSnapshot(await manifestWith('a/evil', [link]), blobs, join(root, 'refuse-link'))).rejects.toThrow(/lies beneath the entry a/);
  });

  it('a blob whose bytes do not match its digest', async () => {
    const forged = await blobs.put(Buffer.from(JSON.stringify({ files: [{ path: 'f', digest: `sha256:${'0'.repeat(64)}`, size: 1, mode: MODE_FILE }] })));
    blobs.blobs.set(`sha256:${'0'.repeat(64)}`, Buffer.from('tampered'));
    await expect(materializeSnapshot(forged, blobs, join(root, 'refuse-forged'))).rejects.toThrow(/does not match its digest/);
  });

  it('a blob whose length differs from the size the manifest records; the refusal is not retryable', async () => {
    const digest = await blobs.put(Buffer.from('four'));
    const lying = await blobs.put(Buffer.from(JSON.stringify({ files: [{ path: 'f', digest, size: 4000, mode: MODE_FILE }] })));
    await expect(materializeSnapshot(lying, blobs, join(root, 'refuse-size'))).rejects.toMatchObject({ retryable: false, message: expect.stringMatching(/holds 4 bytes, the manifest says 4000/) });
  });

  it('a non-empty target directory', async () => {
    const target = join(root, 'occupied');
    mkdirSync(target);
    writeFileSync(join(target, 'existing'), '');
    await expect(materializeSnapshot(await manifestWith('ok.txt'), blobs, target)).rejects.toThrow(/not empty/);
  });
});
