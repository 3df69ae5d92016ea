import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { sealDirectory } from '@stageflow/checks';
import type { BlobStore } from '@stageflow/eventlog';
import { parkedWorkspace, prepareWorkspace } from './run-workspace';

function memoryBlobs(): BlobStore {
  const store = new Map<string, Uint8Array>();
  const put = async (bytes: Uint8Array) => {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    store.set(digest, bytes);
    return digest;
  };
  return {
    put,
    putStream: async (source) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of source) chunks.push(Uint8Array.from(chunk));
      return put(Buffer.concat(chunks));
    },
    get: async (digest) => store.get(digest),
    has: async (digest) => store.has(digest),
    close: async () => undefined,
  };
}

describe('parkedWorkspace', () => {
  it('reads the snapshots a park recorded', () => {
    expect(parkedWorkspace({ turn: 2, workspace: { artifacts: 'sha256:a', checkout: 'sha256:c' } })).toEqual({ artifacts: 'sha256:a', checkout: 'sha256:c' });
    expect(parkedWorkspace({ workspace: { artifacts: 'sha256:a' } })).toEqual({ artifacts: 'sha256:a' });
  });

  it.each([[undefined], [{}], [{ workspace: null }], [{ workspace: { checkout: 'sha256:c' } }], [{ workspace: { artifacts: 1 } }], [{ workspace: { artifacts: 'a', checkout: 2 } }]])(
    'ignores %j',
    (resume) => {
      expect(parkedWorkspace(resume as { [key: string]: unknown } | undefined)).toBeUndefined();
    },
  );
});

describe('prepareWorkspace after a park', () => {
  let root: string;
  beforeEach(async () => (root = await fs.mkdtemp(path.join(os.tmpdir(), 'sf-workspace-'))));
  afterEach(async () => fs.rm(root, { recursive: true, force: true }));

  it('on a replica that shares no disk, starts from the checkout and artifacts the session parked with', async () => {
    const blobs = memoryBlobs();
    const left = path.join(root, 'left');
    await fs.mkdir(path.join(left, 'checkout', 'src'), { recursive: true });
    await fs.writeFile(path.join(left, 'checkout', 'src', 'a.txt'), 'edited before the question');
    await fs.mkdir(path.join(left, 'artifacts'));
    await fs.writeFile(path.join(left, 'artifacts', 'plan.md'), '# Plan');
    const parked = { checkout: (await sealDirectory(path.join(left, 'checkout'), blobs)).digest, artifacts: (await sealDirectory(path.join(left, 'artifacts'), blobs)).digest };

    const workspace = await prepareWorkspace({ root: path.join(root, 'replica-2'), runId: 'r1', stageId: 's', attempt: 1, checkout: { kind: 'fresh' }, events: [], blobs, parked });
    expect(await fs.readFile(path.join(workspace.checkoutDir, 'src', 'a.txt'), 'utf8')).toBe('edited before the question');
    expect(await fs.readFile(path.join(workspace.artifactsDir, 'plan.md'), 'utf8')).toBe('# Plan');
  });

  it('keeps what this replica left in a non-empty artifact directory', async () => {
    const blobs = memoryBlobs();
    const source = path.join(root, 'source');
    await fs.mkdir(source);
    await fs.writeFile(path.join(source, 'plan.md'), 'sealed');
    const artifacts = (await sealDirectory(source, blobs)).digest;
    const first = await prepareWorkspace({ root, runId: 'r1', stageId: 's', attempt: 1, checkout: { kind: 'fresh' }, events: [], blobs });
    await fs.writeFile(path.join(first.artifactsDir, 'plan.md'), 'local');
    const again = await prepareWorkspace({ root, runId: 'r1', stageId: 's', attempt: 1, checkout: { kind: 'fresh' }, events: [], blobs, parked: { artifacts } });
    expect(await fs.readFile(path.join(again.artifactsDir, 'plan.md'), 'utf8')).toBe('local');
  });
});
