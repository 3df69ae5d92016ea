/**
 * CI consumption (001, "CI consumption"), as a CI job does it: `sf run --json --include stages`
 * writes a file, then separate `sf envelope get` processes read it with no NATS_URL and no
 * DATABASE_URL — and with no store at all for `--from`. `examples/ci/ci-job.sh` runs as is.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assertBuilt, ROOT, SF } from './support/cluster';
import { embedded, type Embedded } from './support/embedded';

jest.setTimeout(90_000);

const CI = path.join(ROOT, 'examples/ci');
const PIPELINE = path.join(CI, 'release-notes.pipeline.yaml');
const CHANGES = `script:${path.join(CI, 'agent.script.yaml')}`;
const NO_CHANGES = `script:${path.join(CI, 'agent.no-changes.script.yaml')}`;

describe('CI consumption of envelopes', () => {
  let e: Embedded;
  /** Processes whose STAGEFLOW_HOME does not exist: they can only read the file. */
  let reader: Embedded;
  let cwd: string;
  let file: string;
  let summary: { run_id: string; run_dir: string; stages: { id: string; envelope: unknown }[] };

  beforeAll(async () => {
    assertBuilt();
    e = embedded();
    cwd = e.dir;
    reader = embedded({ STAGEFLOW_HOME: path.join(cwd, 'nowhere') });
    const run = await e.sf(['run', '--pipeline', PIPELINE, '--agent', CHANGES, '--json', '--include', 'stages']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    file = path.join(cwd, 'sf-run.json');
    fs.writeFileSync(file, run.stdout);
    summary = JSON.parse(run.stdout);
  });
  afterAll(async () => {
    await reader.cleanup();
    await e.cleanup();
  });

  const fromFile = (args: string[]) => reader.sf(['envelope', 'get', '--from', file, ...args]);

  it('--format envelope prints the stage envelope from the file alone', async () => {
    const got = await fromFile(['--stage', 'write-notes', '--format', 'envelope', '--json']);
    expect(got.stderr).toBe('');
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual(summary.stages.find((s) => s.id === 'write-notes')!.envelope);
    expect(fs.existsSync(path.join(cwd, 'nowhere'))).toBe(false);
  });

  it('--format handoff gives absolute artifact paths that exist, and --run reads the same from the store', async () => {
    const got = await fromFile(['--stage', 'write-notes', '--detect-stage', 'detect-changes', '--format', 'handoff', '--json']);
    expect(got.code).toBe(0);
    const handoff = JSON.parse(got.stdout);
    expect(handoff).toMatchObject({ skipped: false, run_id: summary.run_id, stage_id: 'write-notes', status: 'success', payload: { title: 'Faster startup and list --json' } });
    expect(handoff.artifacts).toEqual([path.join(summary.run_dir, 'stages/write-notes/attempts/1/artifacts/RELEASE_NOTES.md')]);
    expect(fs.readFileSync(handoff.artifacts[0], 'utf8')).toMatch(/Faster startup/);

    const stored = await e.sf(['envelope', 'get', '--run', summary.run_id, '--stage', 'write-notes', '--detect-stage', 'detect-changes', '--format', 'handoff', '--json']);
    expect(stored.code).toBe(0);
    expect(JSON.parse(stored.stdout)).toEqual(handoff);
  });

  it('prints {"skipped": true} when the stage was skipped, from the file and from the store', async () => {
    const run = await e.sf(['run', '--pipeline', PIPELINE, '--agent', NO_CHANGES, '--json', '--include', 'stages']);
    expect(run.code).toBe(0);
    const skippedFile = path.join(cwd, 'sf-run-skipped.json');
    fs.writeFileSync(skippedFile, run.stdout);
    const got = await e.sf(['envelope', 'get', '--from', skippedFile, '--stage', 'write-notes', '--detect-stage', 'write-notes', '--format', 'handoff', '--json']);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual({ skipped: true });
    const stored = await e.sf(['envelope', 'get', '--run', JSON.parse(run.stdout).run_id, '--stage', 'write-notes', '--format', 'handoff', '--json']);
    expect(JSON.parse(stored.stdout)).toEqual({ skipped: true });
  });

  it('refuses a stage without an envelope with exit 1 and a message', async () => {
    const got = await fromFile(['--stage', 'nope', '--format', 'envelope', '--json']);
    expect(got.code).toBe(1);
    expect(got.stderr).toMatch(/has no stage nope/);
  });

  it('examples/ci/ci-job.sh publishes the verified notes, and no-ops when the stage is skipped', async () => {
    const job = (out: string, agent: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const env: NodeJS.ProcessEnv = { ...process.env, SF: `${process.execPath} ${SF}`, AGENT: agent, STAGEFLOW_HOME: path.join(cwd, '.stageflow-ci') };
        delete env.NATS_URL;
        delete env.DATABASE_URL;
        execFile(path.join(CI, 'ci-job.sh'), [out], { cwd, env, timeout: 60_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const published = await job(path.join(cwd, 'out-changes'), CHANGES);
    expect(published.stderr).toBe('');
    expect(published.code).toBe(0);
    expect(published.stdout).toMatch(/published 1 file\(s\)/);
    expect(fs.readFileSync(path.join(cwd, 'out-changes/publish/RELEASE_NOTES.md'), 'utf8')).toMatch(/# Release notes/);

    const skipped = await job(path.join(cwd, 'out-none'), NO_CHANGES);
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toMatch(/skipped, nothing to publish/);
    expect(JSON.parse(fs.readFileSync(path.join(cwd, 'out-none/envelope.json'), 'utf8'))).toEqual({ skipped: true });
    expect(fs.existsSync(path.join(cwd, 'out-none/publish'))).toBe(false);
  });
});
