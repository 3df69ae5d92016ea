/**
 * Signed verdicts across the services, with keys from files as a deployment configures them
 * (`sf keys new`, SF_SIGNING_KEY_FILE for the verifier, SF_TRUSTED_KEYS_FILE everywhere): a run
 * passes with the configured key; a verifier whose key the others do not trust passes nothing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { assertBuilt, deployment, ROOT, type Deployment } from './support/cluster';
import { natsRunEvents } from './support/events';
import { sfEmbedded } from './support/embedded';

jest.setTimeout(180_000);

const HELLO = path.join(ROOT, 'examples/hello/hello.pipeline.yaml');
const AGENT = `script:${path.join(ROOT, 'examples/hello/agent.script.yaml')}`;

describe('signed verdicts (cluster, keys from files)', () => {
  let d: Deployment | undefined;
  let dir: string;
  const key = async (role: string, kid: string) => {
    const file = path.join(dir, `${kid}.jwk`);
    const made = await sfEmbedded(['keys', 'new', '--role', role, '--kid', kid, '--out', file], { cwd: dir });
    expect(made.code).toBe(0);
    return { file, public: JSON.parse(made.stdout) as unknown };
  };

  beforeAll(() => {
    assertBuilt();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-e2e-keys-'));
  });
  afterEach(async () => {
    await d?.stop();
    d = undefined;
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('passes a stage with the configured verifier key, and refuses the verdicts of a verifier whose key is not trusted', async () => {
    const verifier = await key('verifier', 'verifier-e2e');
    const stray = await key('verifier', 'verifier-stray');
    const trusted = path.join(dir, 'trusted.json');
    fs.writeFileSync(trusted, JSON.stringify({ keys: [verifier.public] }));

    d = deployment({ SF_TRUSTED_KEYS_FILE: trusted });
    await Promise.all([d.start('scheduler'), d.start('recovery'), d.start('agent-runner', ['--agent', AGENT]), d.start('verifier', [], { SF_SIGNING_KEY_FILE: verifier.file })]);
    const passed = await d.sf(['run', '--pipeline', HELLO, '--json']);
    expect(passed.code).toBe(0);
    const summary = JSON.parse(passed.stdout);
    expect(summary).toMatchObject({ status: 'succeeded', stages: [{ attempts: [{ disposition: 'passed' }] }] });
    const verdict = (await natsRunEvents(d, summary.run_id)).find((e) => e.type === 'AttemptVerified');
    expect(verdict?.signature?.kid).toBe('verifier-e2e');
    await d.stop();

    d = deployment({ SF_TRUSTED_KEYS_FILE: trusted });
    await Promise.all([d.start('scheduler'), d.start('recovery'), d.start('agent-runner', ['--agent', AGENT]), d.start('verifier', [], { SF_SIGNING_KEY_FILE: stray.file })]);
    const refused = await d.sf(['run', '--pipeline', HELLO, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      status: 'failed',
      stages: [{ status: 'failed', attempts: [{ disposition: 'error', failure: 'verdict refused: key verifier-stray is not trusted' }] }],
      security: [{ refused: 'AttemptVerified', stage: 'greet', attempt: 1, kid: 'verifier-stray' }],
    });
  });
});
