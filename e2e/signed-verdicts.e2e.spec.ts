/**
 * Signed verdicts on the embedded default, as separate `sf` processes: a run verifies and passes
 * with the keys the engine makes for itself; a verdict appended to the run's subject by hand
 * (unsigned, as anyone with write access to the log could) is not applied: the attempt ends
 * `error`, the run fails, and `sf runs show` says why.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EVENT_VERSION, type RunEvent, type RunSummary } from '@stageflow/domain';
import { loadConfig, openInfrastructure } from '@stageflow/runtime';
import { embedded, type Embedded } from './support/embedded';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..');
const HELLO = path.join(ROOT, 'examples/hello/hello.pipeline.yaml');
const SLOW = path.join(ROOT, 'e2e/fixtures/slow-verify.pipeline.yaml');
const AGENT = `script:${path.join(ROOT, 'examples/hello/agent.script.yaml')}`;

describe('signed verdicts (embedded default)', () => {
  let sf: Embedded;
  beforeEach(() => {
    sf = embedded();
  });
  afterEach(() => sf.cleanup());

  const home = () => path.join(sf.dir, 'home');

  it('runs hello to a verified success with signatures on; the keys are private files in the state directory', async () => {
    const summary = await sf.json<RunSummary>(['run', '--pipeline', HELLO, '--agent', AGENT, '--json'], 0);
    expect(summary).toMatchObject({ status: 'succeeded', stages: [{ status: 'succeeded', attempts: [{ disposition: 'passed' }] }] });
    expect(summary.security).toBeUndefined();
    expect(fs.statSync(path.join(home(), 'keys', 'verifier.jwk')).mode & 0o777).toBe(0o600);
    const infra = await openInfrastructure(loadConfig({ STAGEFLOW_HOME: home() }));
    try {
      const verdict = (await infra.runs.load(summary.run_id)).events.find((e) => e.type === 'AttemptVerified');
      expect(verdict?.signature).toMatchObject({ kid: expect.stringMatching(/^verifier-/), candidate: expect.stringMatching(/^checkout:/) });
    } finally {
      await infra.close();
    }
  });

  it('a verdict appended by hand makes the attempt error, visible in sf runs show', async () => {
    const running = sf.sf(['run', '--pipeline', SLOW, '--agent', AGENT, '--json'], 90_000);
    const infra = await openInfrastructure(loadConfig({ STAGEFLOW_HOME: home() }));
    let runId: string;
    try {
      // Wait for the candidate (the slow check keeps the genuine verdict away for seconds).
      const captured = async (): Promise<RunEvent | undefined> => {
        for (const message of await infra.log.read('sf.evt.run.>')) {
          const event = infra.runs.eventsOf(message).find((e) => e.type === 'EnvelopeCaptured');
          if (event) return event;
        }
        return undefined;
      };
      let capture: RunEvent | undefined;
      for (let i = 0; i < 300 && !capture; i++) {
        capture = await captured();
        if (!capture) await new Promise((r) => setTimeout(r, 100));
      }
      expect(capture).toBeDefined();
      runId = capture!.runId;
      const forged: RunEvent = { v: EVENT_VERSION, runId, at: new Date().toISOString(), type: 'AttemptVerified', stageId: 'greet', attempt: 1, disposition: 'passed', checks: [], failure: null };
      await infra.log.append(infra.runs.subject(runId), { events: [forged] });
    } finally {
      await infra.close();
    }
    const run = await running;
    expect(run.code).not.toBe(0);
    const shown = await sf.json<RunSummary>(['runs', 'show', '--run', runId, '--json'], 1);
    expect(shown).toMatchObject({
      status: 'failed',
      stages: [{ id: 'greet', status: 'failed', attempts: [{ n: 1, disposition: 'error', failure: 'verdict refused: unsigned' }] }],
      security: [{ refused: 'AttemptVerified', stage: 'greet', attempt: 1, reason: 'unsigned' }],
    });
    const human = await sf.sf(['runs', 'show', '--run', runId]);
    expect(human.stdout).toMatch(/verdict refused: unsigned/);
    expect(human.stdout).toMatch(/^security: AttemptVerified of greet attempt 1 refused \(unsigned\); not applied$/m);
  });
});
