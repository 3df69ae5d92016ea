/**
 * The README's main job on the embedded default, as a user runs it: separate `sf` processes, no
 * NATS, no Postgres, state under STAGEFLOW_HOME.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertBuilt, ROOT } from './support/cluster';
import { embeddedHome, sfEmbedded } from './support/embedded';

jest.setTimeout(60_000);

const HELLO = path.join(ROOT, 'examples/hello/hello.pipeline.yaml');
const AGENT = `script:${path.join(ROOT, 'examples/hello/agent.script.yaml')}`;

describe('embedded default', () => {
  let cwd: string;
  beforeAll(() => {
    assertBuilt();
    cwd = embeddedHome();
  });
  afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('runs hello to a verified success, prints progress and a board, exit 0', async () => {
    const run = await sfEmbedded(['run', '--pipeline', HELLO, '--agent', AGENT], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/greet attempt 1 started/);
    expect(run.stdout).toMatch(/check greeting-file \(artifact\) passed/);
    expect(run.stdout).toMatch(/STAGE\s+STATUS\s+ATTEMPTS\s+DISPOSITION/);
    expect(run.stdout).toMatch(/greet\s+succeeded\s+1\s+passed/);
  });

  it('--json prints only the run summary, and runs show prints the same from a new process', async () => {
    const run = await sfEmbedded(['run', '--pipeline', HELLO, '--agent', AGENT, '--json'], { cwd });
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({
      pipeline: 'hello',
      status: 'succeeded',
      stages: [{ id: 'greet', status: 'succeeded', attempts: [{ n: 1, disposition: 'passed', failure: null, checks: [{ id: 'greeting-file', type: 'artifact', phase: 'after', status: 'passed' }, { id: 'greeting-says-hello', type: 'command', phase: 'after', status: 'passed' }] }] }],
    });
    const artifact = path.join(summary.run_dir, 'stages/greet/attempts/1/artifacts/greeting.md');
    expect(fs.readFileSync(artifact, 'utf8')).toMatch(/Hello/);
    const shown = await sfEmbedded(['runs', 'show', '--run', summary.run_id, '--json'], { cwd });
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual(summary);
  });

  it('refuses an invalid pipeline with the catalog error and exit 1, before running anything', async () => {
    const bad = path.join(cwd, 'bad.pipeline.yaml');
    fs.writeFileSync(bad, 'id: bad\nstages:\n  - id: a\n    entry: true\n    system_prompt: x\n');
    const run = await sfEmbedded(['run', '--pipeline', bad, '--agent', AGENT], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/stage\.invalid_io/);
    const validate = await sfEmbedded(['validate', bad, '--json'], { cwd });
    expect(validate.code).toBe(1);
    const report = JSON.parse(validate.stdout);
    expect(report.ok).toBe(false);
    expect(report.errors[0]).toMatchObject({ code: 'stage.invalid_io', file: bad });
    const good = await sfEmbedded(['validate', HELLO], { cwd });
    expect(good.code).toBe(0);
  });

  it('refuses a --checkout that is not the root of a git working tree', async () => {
    const run = await sfEmbedded(['run', '--pipeline', HELLO, '--agent', AGENT, '--checkout', cwd], { cwd });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/not inside a git working tree|not the root/);
  });

  it('exits 1 with a clear message for an unknown run', async () => {
    const shown = await sfEmbedded(['runs', 'show', '--run', 'run_nope', '--json'], { cwd });
    expect(shown.code).toBe(1);
    expect(shown.stderr).toMatch(/run run_nope not found/);
  });
});
