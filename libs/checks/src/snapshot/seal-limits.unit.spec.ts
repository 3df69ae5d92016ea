/** What a seal refuses (file kinds, hard links, sizes), against real files, FIFOs, sockets and devices. */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { MemoryBlobStore, tempDir } from '../__tests__/support.spec';
import { DEFAULT_SNAPSHOT_LIMITS, SnapshotBudget } from './limits';
import { materializeSnapshot } from './materialize';
import { CapExceeded, readChunks } from './read-chunks';
import { SnapshotRefusedError, type SnapshotRefusal } from './refusal';
import { sealDirectory } from './seal';

const MiB = 1024 * 1024;
const root = tempDir('seal-limits');
let counter = 0;
const fresh = (name: string): string => {
  const dir = join(root, `${name}-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

async function refusalsOf(promise: Promise<unknown>): Promise<readonly SnapshotRefusal[]> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SnapshotRefusedError);
  expect((error as SnapshotRefusedError).retryable).toBe(false);
  return (error as SnapshotRefusedError).refusals;
}

const rules = (refusals: readonly SnapshotRefusal[]) => refusals.map(({ path, rule }) => ({ path, rule }));

describe('sealDirectory refuses what is not a plain file', () => {
  const secret = `outside ${randomBytes(8).toString('hex')}`;
  let server: Server | undefined;
  afterAll(() => server?.close());

  it('a hard link to a file outside the directory: refused with its path and rule, its bytes never stored', async () => {
    const outside = join(fresh('outside'), 'passwd');
    writeFileSync(outside, secret);
    const artifacts = fresh('artifacts');
    writeFileSync(join(artifacts, 'report.md'), '# fine\n');
    linkSync(outside, join(artifacts, 'x.md'));
    const blobs = new MemoryBlobStore();

    const refusals = await refusalsOf(sealDirectory(artifacts, blobs, { ignoreGit: true, label: 'artifact directory' }));

    expect(rules(refusals)).toEqual([{ path: 'x.md', rule: 'hard_link' }]);
    expect(refusals[0]!.detail).toContain('2 links');
    await expect(sealDirectory(artifacts, blobs, { ignoreGit: true, label: 'artifact directory' })).rejects.toThrow(/cannot seal the artifact directory: x\.md \(hard_link\)/);
    expect([...blobs.blobs.values()].some((bytes) => Buffer.from(bytes).toString().includes(secret))).toBe(false);
  });

  it('a FIFO, a socket and a character device: all refused at once, without blocking on the FIFO', async () => {
    const dir = fresh('special');
    writeFileSync(join(dir, 'ok.txt'), 'ok');
    execFileSync('mkfifo', [join(dir, 'pipe.md')]);
    server = createServer();
    await new Promise<void>((resolve) => server!.listen(join(dir, 'sock.md'), resolve));
    execFileSync('mknod', [join(dir, 'null.md'), 'c', '1', '3']);

    const refusals = await refusalsOf(sealDirectory(dir, new MemoryBlobStore(), { ignoreGit: true }));

    expect(rules(refusals)).toEqual([
      { path: 'null.md', rule: 'device' },
      { path: 'pipe.md', rule: 'fifo' },
      { path: 'sock.md', rule: 'socket' },
    ]);
  });

  it('the same kinds in a git checkout (untracked files are sealed too)', async () => {
    const checkout = fresh('checkout');
    execFileSync('git', ['init', '-q', checkout]);
    writeFileSync(join(checkout, 'a.txt'), 'a');
    const outside = join(fresh('outside'), 'key');
    writeFileSync(outside, secret);
    linkSync(outside, join(checkout, 'key.txt'));
    execFileSync('mkfifo', [join(checkout, 'pipe')]);

    const refusals = await refusalsOf(sealDirectory(checkout, new MemoryBlobStore(), { label: 'checkout' }));

    expect(rules(refusals)).toEqual([
      { path: 'key.txt', rule: 'hard_link' },
      { path: 'pipe', rule: 'fifo' },
    ]);
  });

  it('many refusals with long names: a short reason that lists ten and counts the rest', async () => {
    const dir = fresh('many');
    const long = 'n'.repeat(250);
    for (let i = 0; i < 12; i++) execFileSync('mkfifo', [join(dir, `${long}${i}`)]);
    const caught = await sealDirectory(dir, new MemoryBlobStore(), { ignoreGit: true, label: 'artifact directory' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(caught).toBeInstanceOf(SnapshotRefusedError);
    const error = caught as SnapshotRefusedError;
    expect(error.refusals).toHaveLength(12);
    expect(error.message).toMatch(/; and 2 more$/);
    expect(error.message.length).toBeLessThan(3000);
  });

  it('a name the materializer would refuse', async () => {
    const dir = fresh('names');
    writeFileSync(join(dir, '%2e%2e'), 'x');
    expect(rules(await refusalsOf(sealDirectory(dir, new MemoryBlobStore(), { ignoreGit: true })))).toEqual([{ path: '%2e%2e', rule: 'unsafe_path' }]);
  });
});

describe('sealDirectory size limits', () => {
  it.each([
    ['1 GiB', 1024 * MiB],
    ['3 GiB', 3 * 1024 * MiB],
  ])('a sparse %s file: refused at the default per-file limit before any byte is read or stored', async (_name, size) => {
    const dir = fresh('sparse');
    writeFileSync(join(dir, 'small.md'), 'kept');
    execFileSync('truncate', ['-s', String(size), join(dir, 'big.md')]);
    const blobs = new MemoryBlobStore();
    const rssBefore = process.memoryUsage().rss;

    const refusals = await refusalsOf(sealDirectory(dir, blobs, { ignoreGit: true, budget: new SnapshotBudget(DEFAULT_SNAPSHOT_LIMITS) }));

    expect(refusals).toEqual([{ path: 'big.md', rule: 'file_too_large', detail: `${size} bytes, over the per-file limit of ${100 * MiB} bytes` }]);
    expect(blobs.bytesReceived).toBe(4);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * MiB);
  });

  it('counts every added file against the per-attempt limit, across the seals of one outcome', async () => {
    const limits = { maxFileBytes: 2 * MiB, maxAttemptBytes: 5 * MiB };
    const checkout = fresh('budget-checkout');
    const artifacts = fresh('budget-artifacts');
    writeFileSync(join(checkout, 'a'), randomBytes(2 * MiB));
    for (const name of ['c', 'd']) writeFileSync(join(artifacts, name), randomBytes(2 * MiB));
    const blobs = new MemoryBlobStore();
    const budget = new SnapshotBudget(limits);

    await sealDirectory(checkout, blobs, { ignoreGit: true, budget });
    const refusals = await refusalsOf(sealDirectory(artifacts, blobs, { ignoreGit: true, budget }));

    // c and d each fit what is left (3 MiB) and are read side by side: the one that crosses the limit while streaming is refused.
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) {
      expect(refusal.rule).toBe('attempt_too_large');
      expect(refusal.detail).toContain(`past its limit of ${5 * MiB} bytes`);
    }
    expect(blobs.bytesReceived).toBeLessThanOrEqual(limits.maxAttemptBytes + 2 * MiB);
  });

  it('files identical to their baseline cost nothing; a changed one is counted in full', async () => {
    const checkout = fresh('baseline');
    writeFileSync(join(checkout, 'vendored.bin'), randomBytes(3 * MiB));
    writeFileSync(join(checkout, 'notes.md'), 'v1');
    const blobs = new MemoryBlobStore();
    const baseline = await sealDirectory(checkout, blobs, { ignoreGit: true });
    const limits = { maxFileBytes: 1 * MiB, maxAttemptBytes: 2 * MiB };
    writeFileSync(join(checkout, 'notes.md'), 'v2');

    const unchanged = await sealDirectory(checkout, blobs, { ignoreGit: true, baseline: baseline.manifest, budget: new SnapshotBudget(limits) });
    expect(unchanged.manifest.files.find((entry) => entry.path === 'vendored.bin')).toEqual(baseline.manifest.files.find((entry) => entry.path === 'vendored.bin'));

    const handle = await open(join(checkout, 'vendored.bin'), 'r+');
    await handle.write(Buffer.from('changed'), 0, 7, 0);
    await handle.close();
    const refusals = await refusalsOf(sealDirectory(checkout, blobs, { ignoreGit: true, baseline: baseline.manifest, budget: new SnapshotBudget(limits) }));
    expect(rules(refusals)).toEqual([{ path: 'vendored.bin', rule: 'file_too_large' }]);
  });

  it('a file within the limits is sealed and materialized byte for byte', async () => {
    const dir = fresh('within');
    const content = randomBytes(5 * MiB + 123);
    writeFileSync(join(dir, 'data.bin'), content);
    const blobs = new MemoryBlobStore();
    const sealed = await sealDirectory(dir, blobs, { ignoreGit: true, budget: new SnapshotBudget(DEFAULT_SNAPSHOT_LIMITS) });
    const target = join(root, `copy-${++counter}`);
    await materializeSnapshot(sealed.digest, blobs, target);
    expect(readFileSync(join(target, 'data.bin')).equals(content)).toBe(true);
    expect(sealed.manifest.files[0]!.size).toBe(content.length);
  });
});

describe('readChunks', () => {
  it('stops after cap + 1 bytes of a longer file', async () => {
    const path = join(fresh('chunks'), 'f');
    writeFileSync(path, randomBytes(3 * MiB));
    const handle = await open(path, 'r');
    let read = 0;
    try {
      const draining = (async () => {
        for await (const chunk of readChunks(handle, 2 * MiB + 10, (bytes) => void (read += bytes))) expect(chunk.length).toBeLessThanOrEqual(MiB);
      })();
      await expect(draining).rejects.toBeInstanceOf(CapExceeded);
    } finally {
      await handle.close();
    }
    expect(read).toBe(2 * MiB);
  });
});
