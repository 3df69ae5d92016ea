/**
 * Seals end to end on the embedded default with the script agent, every `sf` command its own OS
 * process: an attempt that leaves a sparse 3 GiB artifact, or a hard-linked one, fails on its first
 * delivery with the seal's reason (path, rule, size and limit), and no byte of the big file reaches
 * the blob store; a state directory inside an in-place checkout is never part of its snapshots.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunSummary } from '@stageflow/domain';
import { assertBuilt, ROOT } from './support/cluster';
import { embedded, type Embedded } from './support/embedded';
import { embeddedEnv, runSf } from './support/sf-process';
import { stageOf } from './support/summaries';

jest.setTimeout(60_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/snapshots');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;

function directorySize(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? directorySize(full) : fs.lstatSync(full).blocks * 512;
  }
  return total;
}

describe('seal refusals e2e (embedded default, script agent)', () => {
  let sf: Embedded;
  const run = (name: string) => sf.json<RunSummary>(['run', '--pipeline', path.join(FIXTURES, `${name}.pipeline.yaml`), '--json', '--include', 'stages'], 1);

  beforeAll(() => assertBuilt());
  beforeEach(() => (sf = embedded({ SF_AGENT: AGENT })));
  afterEach(() => sf.cleanup());

  it('a sparse 3 GiB artifact fails the attempt on its first delivery, naming the file, its size and the limit', async () => {
    // The sandbox's own file size limit (1 GiB) would stop truncate first; raised here so the seal is what refuses.
    await sf.cleanup();
    sf = embedded({ SF_AGENT: AGENT, SF_SANDBOX_FSIZE_BYTES: String(4 * 1024 ** 3) });
    const summary = await run('bloat');
    expect(summary.status).toBe('failed');
    const [attempt] = stageOf(summary, 'bloat').attempts;
    expect(attempt!.n).toBe(1);
    expect(attempt!.failure).toContain(`cannot seal the artifact directory: big.md (file_too_large): ${3 * 1024 ** 3} bytes, over the per-file limit of ${100 * 1024 ** 2} bytes`);
    expect(attempt!.failure).not.toMatch(/deliveries/);
    expect(directorySize(path.join(sf.dir, 'home'))).toBeLessThan(10 * 1024 * 1024);
  });

  it('a hard-linked artifact fails the attempt on its first delivery with the rule it broke', async () => {
    const summary = await run('alias');
    expect(summary.status).toBe('failed');
    const [attempt] = stageOf(summary, 'alias').attempts;
    expect(attempt!.failure).toMatch(/cannot seal the artifact directory: report\.md \(hard_link\): a hard link \(2 links\).*; x\.md \(hard_link\)/);
    expect(attempt!.failure).not.toMatch(/deliveries/);
  });

  it.each([['.stageflow'], ['state']])('a state directory (%s) inside the in-place checkout is never sealed', async (home) => {
    const project = path.join(sf.dir, 'project');
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'README.md'), 'project\n');
    execFileSync('git', ['init', '-q', project]);
    const env = embeddedEnv(path.join(project, home), { SF_AGENT: AGENT, SF_WORK_DIR: path.join(project, 'scratch') });
    const result = await runSf(['run', '--pipeline', path.join(FIXTURES, 'state-in-checkout.pipeline.yaml'), '--checkout', project, '--json', '--include', 'stages'], { cwd: project, env, timeoutMs: 50_000 });
    expect(fs.existsSync(path.join(project, home))).toBe(true);
    const summary = JSON.parse(result.stdout) as RunSummary;
    expect(stageOf(summary, 'edit').attempts).toEqual([expect.objectContaining({ n: 1, disposition: 'passed' })]);
    expect(summary.status).toBe('succeeded');
  });

  it('a checkout that cannot be sealed before the agent acts fails the attempt as a runner error on its first delivery', async () => {
    const project = path.join(sf.dir, 'project');
    fs.mkdirSync(project, { recursive: true });
    execFileSync('git', ['init', '-q', project]);
    execFileSync('mkfifo', [path.join(project, 'pipe')]);
    const env = embeddedEnv(path.join(project, '.stageflow'), { SF_AGENT: AGENT });
    const result = await runSf(['run', '--pipeline', path.join(FIXTURES, 'state-in-checkout.pipeline.yaml'), '--checkout', project, '--json', '--include', 'stages'], { cwd: project, env, timeoutMs: 50_000 });
    const summary = JSON.parse(result.stdout) as RunSummary;
    expect(summary.status).toBe('failed');
    const [attempt] = stageOf(summary, 'edit').attempts;
    expect(attempt!.failure).toContain('cannot seal the checkout before the agent acted: pipe (fifo)');
    expect(attempt!.failure).toContain('(after 1 deliveries)');
  });
});
