import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { foldRun, type PipelineDefinition, type RunEvent, type StageDefinition, type StageEnvelope } from '@stageflow/domain';
import { EventSignatures, KeyRing, loadConfig } from '@stageflow/runtime';
import { cliSummary, type CliRunSummary } from '../cli-summary';
import { detectSkipped, envelopeOutput, handoff, readSummaryFile } from '../commands/envelope';
import { main } from '../main';
import { UsageError, type Output } from '../output';

const stage = (id: string, entry = false): StageDefinition => ({
  id,
  system_prompt: `do ${id}`,
  model: 'script',
  io: { input: { schema: {} }, output: { schema: {} } },
  verify: [],
  gate_kinds: [],
  entry,
  route: [],
  replay_safe: true,
});

const pipeline: PipelineDefinition = { id: 'ci', stages: [stage('detect', true), stage('author'), stage('optional'), stage('broken')] };
const runId = 'run-ci';
const base = { v: 1 as const, runId };
const at = '2025-06-01T10:00:00.000Z';
const deadlineAt = '2025-06-01T11:00:00.000Z';

function succeeded(stageId: string, envelope: StageEnvelope): RunEvent[] {
  const a = { ...base, stageId, attempt: 1, at };
  return [
    { ...a, type: 'StageAttemptStarted', reason: 'initial', input: {}, upstream: {}, deadlineAt },
    { ...a, type: 'EnvelopeCaptured', envelope, checkoutSnapshot: 'sha256:c', artifactsSnapshot: 'sha256:a' },
    { ...a, type: 'AttemptVerified', disposition: 'passed', failure: null, checks: [] },
    { ...base, at, type: 'StageSucceeded', stageId, attempt: 1, envelope },
  ];
}

const detectEnvelope = (forkChoice?: string[]): StageEnvelope => ({
  status: 'success',
  summary: 'detected',
  artifacts: [],
  payload: { changed: true },
  ...(forkChoice ? { fork_choice: forkChoice } : {}),
});
const authorEnvelope: StageEnvelope = {
  status: 'success',
  summary: 'wrote notes',
  artifacts: ['stages/author/attempts/1/artifacts/NOTES.md', '/already/absolute.txt'],
  payload: { title: 'notes' },
  notes: 'two files',
};

function summaryOf(forkChoice?: string[], home = '/ci/home'): CliRunSummary {
  const events: RunEvent[] = [
    { ...base, at, type: 'RunRequested', pipeline, input: {}, checkout: { kind: 'fresh' }, labels: {}, requestedBy: 'test' },
    ...succeeded('detect', detectEnvelope(forkChoice)),
    ...succeeded('author', authorEnvelope),
    { ...base, at, type: 'StageSkipped', stageId: 'optional', reason: 'if_miss' },
    { ...base, stageId: 'broken', attempt: 1, at, type: 'StageAttemptStarted', reason: 'initial', input: {}, upstream: {}, deadlineAt },
    { ...base, stageId: 'broken', attempt: 1, at, type: 'AttemptFailed', kind: 'agent_failure', reason: 'gave up', envelope: { status: 'failure', summary: 'gave up', artifacts: ['x.md'] } },
    { ...base, at, type: 'StageFailed', stageId: 'broken', attempt: 1, kind: 'agent', reason: 'gave up' },
  ];
  return cliSummary(foldRun(new EventSignatures('sf', KeyRing.inMemory()).signAll(runId, events)), loadConfig({ STAGEFLOW_HOME: home }), true);
}

describe('envelope get: the command functions', () => {
  const summary = summaryOf();

  it('--format envelope prints the envelope as emitted', () => {
    expect(envelopeOutput(summary, { stage: 'author', format: 'envelope' })).toEqual(authorEnvelope);
    expect(envelopeOutput(summary, { stage: 'broken', format: 'envelope' })).toMatchObject({ status: 'failure', summary: 'gave up' });
  });

  it('--format handoff gives the verified deliverables with absolute artifact paths', () => {
    expect(envelopeOutput(summary, { stage: 'author', format: 'handoff' })).toEqual({
      skipped: false,
      run_id: runId,
      run_dir: '/ci/home/runs/run-ci',
      stage_id: 'author',
      status: 'success',
      summary: 'wrote notes',
      payload: { title: 'notes' },
      artifacts: ['/ci/home/runs/run-ci/stages/author/attempts/1/artifacts/NOTES.md', '/already/absolute.txt'],
      notes: 'two files',
    });
  });

  it('keeps artifact paths as they are when the summary has no run directory (cluster)', () => {
    const { run_dir: _dir, ...cluster } = summary;
    expect(handoff(cluster, 'author').artifacts).toEqual(authorEnvelope.artifacts);
  });

  it('prints {"skipped": true} when the detect stage chose no fork or was skipped, or the stage itself was skipped', () => {
    const noFork = summaryOf([]);
    expect(detectSkipped(noFork, 'detect')).toBe(true);
    expect(envelopeOutput(noFork, { stage: 'author', format: 'handoff', detectStage: 'detect' })).toEqual({ skipped: true });
    expect(envelopeOutput(summary, { stage: 'author', format: 'handoff', detectStage: 'optional' })).toEqual({ skipped: true });
    expect(envelopeOutput(summary, { stage: 'optional', format: 'handoff' })).toEqual({ skipped: true });
  });

  it('does not skip for a detect stage that chose a fork or emitted no fork_choice', () => {
    expect(detectSkipped(summaryOf(['author']), 'detect')).toBe(false);
    expect(detectSkipped(summary, 'detect')).toBe(false);
    expect(envelopeOutput(summaryOf(['author']), { stage: 'author', format: 'handoff', detectStage: 'detect' })).toMatchObject({ skipped: false, stage_id: 'author' });
  });

  it('refuses a handoff of a stage that did not succeed, and names unknown stages', () => {
    expect(() => envelopeOutput(summary, { stage: 'broken', format: 'handoff' })).toThrow('stage broken has no verified deliverables (status failed)');
    expect(() => envelopeOutput(summary, { stage: 'nope', format: 'envelope' })).toThrow('run run-ci has no stage nope');
    expect(() => envelopeOutput(summary, { stage: 'author', format: 'handoff', detectStage: 'nope' })).toThrow('run run-ci has no stage nope');
  });

  it('refuses a summary written without --include stages', () => {
    const bare = cliSummary(foldRun([{ ...base, at, type: 'RunRequested', pipeline, input: {}, checkout: { kind: 'fresh' }, labels: {}, requestedBy: 't' }]), loadConfig({}), false);
    expect(() => envelopeOutput(bare, { stage: 'detect', format: 'envelope' })).toThrow(/sf run --json --include stages/);
  });
});

describe('sf envelope get --from: a file and nothing else', () => {
  let dir: string;
  const captured = (): Output & { stdout: string[]; stderr: string[] } => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t), isTTY: false };
  };
  const home = () => path.join(dir, 'no-store-here');
  const saved = { ...process.env };

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-envelope-'));
    fs.writeFileSync(path.join(dir, 'sf-run.json'), JSON.stringify(summaryOf(), null, 2));
    fs.writeFileSync(path.join(dir, 'no-fork.json'), JSON.stringify(summaryOf([])));
    fs.writeFileSync(path.join(dir, 'garbage.json'), '{"not": "a summary"}');
    process.env.STAGEFLOW_HOME = home();
    process.env.NATS_URL = 'nats://127.0.0.1:1';
    process.env.DATABASE_URL = 'postgres://nobody@127.0.0.1:1/none';
  });
  afterAll(() => {
    process.env = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints the envelope and the handoff, touching no store, database or server', async () => {
    const out = captured();
    expect(await main(['node', 'sf', 'envelope', 'get', '--from', path.join(dir, 'sf-run.json'), '--stage', 'author', '--format', 'envelope', '--json'], out)).toBe(0);
    expect(JSON.parse(out.stdout.join(''))).toEqual(authorEnvelope);
    const h = captured();
    expect(await main(['node', 'sf', 'envelope', 'get', '--from', path.join(dir, 'sf-run.json'), '--stage', 'author', '--format', 'handoff', '--json'], h)).toBe(0);
    expect(JSON.parse(h.stdout.join(''))).toMatchObject({ skipped: false, artifacts: ['/ci/home/runs/run-ci/stages/author/attempts/1/artifacts/NOTES.md', '/already/absolute.txt'] });
    const skipped = captured();
    expect(await main(['node', 'sf', 'envelope', 'get', '--from', path.join(dir, 'no-fork.json'), '--stage', 'author', '--detect-stage', 'detect', '--format', 'handoff', '--json'], skipped)).toBe(0);
    expect(JSON.parse(skipped.stdout.join(''))).toEqual({ skipped: true });
    expect(fs.existsSync(home())).toBe(false);
  });

  it('exits 1 with a clear message on a bad file, a bad format or a misplaced --detect-stage', async () => {
    const cases: [string[], RegExp][] = [
      [['--from', path.join(dir, 'missing.json'), '--stage', 'author'], /cannot read .*missing\.json/],
      [['--from', path.join(dir, 'garbage.json'), '--stage', 'author'], /is not a run summary/],
      [['--from', path.join(dir, 'sf-run.json'), '--stage', 'author', '--format', 'yaml'], /--format yaml: envelope or handoff/],
      [['--from', path.join(dir, 'sf-run.json'), '--stage', 'author', '--detect-stage', 'detect'], /--detect-stage works with --format handoff/],
      [['--stage', 'author'], /give --from <sf-run.json> or --run <id>/],
    ];
    for (const [args, message] of cases) {
      const out = captured();
      expect(await main(['node', 'sf', 'envelope', 'get', ...args], out)).toBe(1);
      expect(out.stderr.join('\n')).toMatch(message);
      expect(out.stdout).toEqual([]);
    }
    expect(() => readSummaryFile(path.join(dir, 'garbage.json'))).toThrow(UsageError);
  });
});
