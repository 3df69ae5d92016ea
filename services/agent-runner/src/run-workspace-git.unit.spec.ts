import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BlobStore } from '@stageflow/eventlog';
import { CheckoutFailed, prepareWorkspace } from './run-workspace';

const noBlobs = {} as BlobStore;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, stdio: 'pipe' }).toString().trim();

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

describe('prepareWorkspace with a git checkout (a bare repository over file://)', () => {
  let root: string;
  let bare: string;
  let url: string;
  let commits: { main: string; feature: string };

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'sf-checkout-'));
    const seed = path.join(root, 'seed');
    await fs.mkdir(seed);
    git(seed, 'init', '--quiet');
    await fs.writeFile(path.join(seed, 'on-main.txt'), 'main');
    git(seed, 'add', '.');
    git(seed, 'commit', '--quiet', '-m', 'main');
    git(seed, 'checkout', '--quiet', '-b', 'feature');
    await fs.writeFile(path.join(seed, 'on-feature.txt'), 'feature');
    git(seed, 'add', '.');
    git(seed, 'commit', '--quiet', '-m', 'feature');
    git(seed, 'tag', 'v1');
    git(seed, 'checkout', '--quiet', 'main');
    commits = { main: git(seed, 'rev-parse', 'main'), feature: git(seed, 'rev-parse', 'feature') };
    bare = path.join(root, 'repo.git');
    git(root, 'clone', '--quiet', '--bare', seed, bare);
    url = `file://${bare}`;
  });
  afterAll(async () => fs.rm(root, { recursive: true, force: true }));

  const prepare = (runId: string, ref: string, checkoutUrl = url) =>
    prepareWorkspace({ root: path.join(root, 'replica'), runId, stageId: 's', attempt: 1, checkout: { kind: 'git', url: checkoutUrl, ref }, events: [], blobs: noBlobs });
  const checkoutOf = (runId: string) => path.join(root, 'replica', 'runs', runId, 'checkout');

  it.each([
    ['a branch that is not the default', 'feature', 'feature'],
    ['a tag', 'v1', 'feature'],
    ['a commit id', 'COMMIT', 'feature'],
    ['the default branch', 'main', 'main'],
    ['HEAD', 'HEAD', 'main'],
  ] as const)('checks out %s at that ref', async (_what, ref, at) => {
    const wanted = ref === 'COMMIT' ? commits.feature : ref;
    const workspace = await prepare(`ok-${ref}`, wanted);
    expect(git(workspace.checkoutDir, 'rev-parse', 'HEAD')).toBe(commits[at]);
    expect(await exists(path.join(workspace.checkoutDir, 'on-feature.txt'))).toBe(at === 'feature');
  });

  it('fails a ref the repository does not have with checkout.ref_not_found, not retryable, and leaves no clone behind', async () => {
    for (let delivery = 1; delivery <= 2; delivery++) {
      const failure = await prepare('missing', 'no-such-branch').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(CheckoutFailed);
      expect(failure).toMatchObject({ code: 'checkout.ref_not_found', retryable: false });
      expect((failure as Error).message).toContain('"no-such-branch"');
      expect(await exists(path.join(checkoutOf('missing'), '.git'))).toBe(false);
    }
  });

  it.each(['-b', '--upload-pack=touch /tmp/x', 'main^{tree}'])('refuses %j as a ref', async (ref) => {
    await expect(prepare(`odd-${Buffer.from(ref).toString('hex')}`, ref)).rejects.toMatchObject({ code: 'checkout.ref_not_found', retryable: false });
  });

  it('does not take the leftover of an interrupted clone for a checkout', async () => {
    const dir = checkoutOf('interrupted');
    await fs.mkdir(path.dirname(dir), { recursive: true });
    git(path.dirname(dir), 'clone', '--quiet', url, dir); // the default branch, as a clone killed before its checkout left it
    await expect(prepare('interrupted', 'no-such-branch')).rejects.toMatchObject({ code: 'checkout.ref_not_found' });
    git(path.dirname(dir), 'clone', '--quiet', url, dir);
    const workspace = await prepare('interrupted', 'feature');
    expect(git(workspace.checkoutDir, 'rev-parse', 'HEAD')).toBe(commits.feature);
  });

  it('makes one checkout for attempts of a run that start at the same time', async () => {
    const at = (stageId: string) =>
      prepareWorkspace({ root: path.join(root, 'replica'), runId: 'together', stageId, attempt: 1, checkout: { kind: 'git', url, ref: 'feature' }, events: [], blobs: noBlobs });
    const workspaces = await Promise.all([at('a'), at('b'), at('c')]);
    for (const workspace of workspaces) expect(git(workspace.checkoutDir, 'rev-parse', 'HEAD')).toBe(commits.feature);
  });

  it('keeps a made checkout as it is on the next delivery', async () => {
    const first = await prepare('kept', 'feature');
    await fs.writeFile(path.join(first.checkoutDir, 'work.txt'), 'the agent was here');
    const again = await prepare('kept', 'feature');
    expect(await fs.readFile(path.join(again.checkoutDir, 'work.txt'), 'utf8')).toBe('the agent was here');
  });

  it('a clone that fails (repository unreachable) is retryable and the next delivery starts from an empty directory', async () => {
    const later = path.join(root, 'later.git');
    await expect(prepare('transient', 'feature', `file://${later}`)).rejects.toMatchObject({ code: 'checkout.clone_failed', retryable: true });
    expect(await exists(checkoutOf('transient'))).toBe(false);
    git(root, 'clone', '--quiet', '--bare', bare, later);
    const workspace = await prepare('transient', 'feature', `file://${later}`);
    expect(git(workspace.checkoutDir, 'rev-parse', 'HEAD')).toBe(commits.feature);
  });

  it('names the repository without its credentials when a clone fails', async () => {
    const failure = (await prepare('secret', 'main', 'http://deploy:s3cr3t-token@127.0.0.1:1/repo.git').catch((err: unknown) => err)) as CheckoutFailed;
    expect(failure).toMatchObject({ code: 'checkout.clone_failed', retryable: true });
    expect(failure.message).toContain('127.0.0.1:1/repo.git');
    expect(failure.message).not.toContain('s3cr3t-token');
  });
});
