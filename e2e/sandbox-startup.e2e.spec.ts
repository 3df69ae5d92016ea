/**
 * Without a sandbox: the services that run agent code refuse to start unless SF_SANDBOX=off, and
 * sf doctor names what is missing. (No sandbox is simulated with a bubblewrap path that does not exist.)
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT, runSf } from './support/sf-process';

jest.setTimeout(60_000);

const NO_BWRAP = { SF_SANDBOX_BWRAP: '/nonexistent/bwrap' };
let home: string;

beforeAll(() => {
  for (const pkg of ['libs/cli', 'libs/sandbox']) {
    if (!fs.existsSync(path.join(ROOT, pkg, 'dist'))) throw new Error(`${pkg}/dist missing: run node scripts/build.js first`);
  }
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-sandbox-startup-'));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const env = (extra: NodeJS.ProcessEnv) => ({ ...process.env, STAGEFLOW_HOME: home, ...extra });

describe('no sandbox available', () => {
  it.each(['agent-runner', 'verifier'])('sf serve %s refuses to start, naming the missing property and SF_SANDBOX=off', async (service) => {
    const result = await runSf(['serve', service, '--agent', 'openai'], { cwd: home, env: env(NO_BWRAP), timeoutMs: 30_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/refusing to start: no sandbox can be made here \(missing: bwrap_present/);
    expect(result.stderr).toContain('SF_SANDBOX=off');
  });

  it('sf doctor names it and exits 1', async () => {
    const result = await runSf(['doctor', '--json'], { cwd: home, env: env(NO_BWRAP), timeoutMs: 30_000 });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.sections[0].checks).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'bwrap_present', ok: false, required: true })]));
  });
});
