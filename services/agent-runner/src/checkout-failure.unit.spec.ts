import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentBackend } from '@stageflow/agents';
import { decideAdvance, decideRequest, type StageDefinition } from '@stageflow/domain';
import type { Job } from '@stageflow/eventlog';
import type { AgentJob } from '@stageflow/proto';
import { loadConfig, openInfrastructure, silentLogger, type Infrastructure } from '@stageflow/runtime';
import { AgentRunnerController } from './agent-runner.controller';

const STAGE: StageDefinition = {
  id: 'build',
  system_prompt: 'build it',
  model: 'test/model',
  io: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } },
  verify: [],
  gate_kinds: [],
  entry: true,
  route: [],
  replay_safe: true,
};

describe('agent-runner: a run whose git ref does not exist', () => {
  let home: string;
  let url: string;
  let infra: Infrastructure;

  beforeAll(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-checkout-failure-'));
    const seed = path.join(home, 'seed');
    fs.mkdirSync(seed);
    const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, stdio: 'pipe' });
    git(seed, 'init', '--quiet');
    fs.writeFileSync(path.join(seed, 'README.md'), 'main');
    git(seed, 'add', '.');
    git(seed, 'commit', '--quiet', '-m', 'main');
    git(home, 'clone', '--quiet', '--bare', seed, path.join(home, 'repo.git'));
    url = `file://${path.join(home, 'repo.git')}`;
  });
  beforeEach(async () => {
    infra = await openInfrastructure(loadConfig({ STAGEFLOW_HOME: path.join(home, `state-${Date.now()}`) }));
  });
  afterEach(async () => infra.close());
  afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

  it('fails the attempt with checkout.ref_not_found on its first delivery, without the agent and without a clone left', async () => {
    const runId = 'run_missing_ref';
    const now = new Date().toISOString();
    await infra.runs.execute(runId, (s) =>
      decideRequest({ type: 'RequestRun', runId, pipeline: { id: 'p', stages: [STAGE] }, input: {}, checkout: { kind: 'git', url, ref: 'release/9' }, requestedBy: 'test', now }, s),
    );
    await infra.runs.execute(runId, (s) => decideAdvance({ type: 'AdvanceRun', now, validateInput: () => null }, s));
    const backend = { name: 'never', startTurn: jest.fn() } as unknown as AgentBackend;
    const controller = new AgentRunnerController(infra, silentLogger, Promise.resolve(backend));
    const delivery = { deliveryCount: 1, working: async () => undefined } as unknown as Job<AgentJob>;

    await expect(controller.run({ runId, stageId: 'build', attempt: 1, resume: 0 }, delivery)).resolves.toBeUndefined();

    const attempt = (await infra.runs.load(runId)).state.stages.build.attempts[0];
    expect(attempt).toMatchObject({ phase: 'failed', failureKind: 'runner_error' });
    expect(attempt.failure).toMatch(/^checkout\.ref_not_found: ref "release\/9" does not exist in file:\/\//);
    expect(backend.startTurn).not.toHaveBeenCalled();
    expect(fs.existsSync(path.join(infra.config.home, 'runs', runId, 'checkout', '.git'))).toBe(false);
  });
});
