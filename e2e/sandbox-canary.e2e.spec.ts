/**
 * The canary suite: secret-looking values sit in the environment of the services (the embedded
 * `sf run` and the cluster's agent-runner and verifier) and in files in their home, work and
 * state directories. An agent (`run` steps of the script backend, and an exec-backend CLI) and a
 * `command` check run e2e/fixtures/sandbox/probe.sh, which reads /proc/<every pid>/environ and
 * cmdline, its parent's environ, `env`, those files and the NATS and Postgres ports, and
 * publishes what it found as plain, base64, hex and reversed text on stdout, in artifacts, in the
 * checkout and in the envelope's summary and payload. Then every byte the system printed or kept
 * is searched for every canary in each of those forms: none may be there.
 *
 * So that "not found" means "could not be read" (and not "redacted" or "never published"): a
 * control value in a project file the agent may read must reach every one of those places, the
 * redaction marker must appear nowhere (redaction only fires on a value that was read), and the
 * probe's own report must show the reads failing (no service process visible, ports unreachable).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readModelSchema } from '@stageflow/readmodels';
import type { RunSummary } from '@stageflow/domain';
import { byCanary, canaryValue, filesUnder, natsStreamContents, postgresSchemaContents, search, text, type ByteSource } from './support/canaries';
import { assertBuilt, deployment, SF, type Deployment } from './support/cluster';
import { runSf, embeddedEnv, type SfResult } from './support/sf-process';
import { envCanaries, fromTemplate, plantFile, probeProject, reportSections, shellWords } from './support/sandbox-probe';

jest.setTimeout(240_000);

/** The marker every redaction writes: it appears only where a secret value was read. */
const REDACTED = '[REDACTED]';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What one probe report must show when the sandbox held: nothing of the service could be seen, and `absent` paths not at all. */
function expectReadsFailed(report: string, where: string, absent: readonly string[] = []): void {
  const sections = reportSections(report);
  for (const dir of absent) expect({ where, errors: sections['read errors'] }).toEqual({ where, errors: expect.stringMatching(new RegExp(`${escapeRegExp(dir)}.: No such file or directory`)) });
  expect({ where, reach: sections.reach }).toEqual({ where, reach: 'nats 127.0.0.1:4222 unreachable\npostgres 127.0.0.1:5432 unreachable\n' });
  // Host processes that are always there while this runs: the service, the test runner, Postgres.
  expect({ where, processes: sections.processes }).toEqual({ where, processes: expect.not.stringMatching(/sf\.js (run|serve)\b|jest|postgres/) });
}

/** The control value reached `sources` (in at least one encoding); returns the forms found. */
function controlForms(control: string, sources: readonly ByteSource[], where: string): string[] {
  const found = [...new Set(search({ control }, sources).map((h) => h.form.replace(/@\d$/, '').toLowerCase()))].sort();
  expect({ where, found: found.length > 0 }).toEqual({ where, found: true });
  return found;
}

/** Every probe report (from its `== reach ==` heading on) in a JSON value, also inside JSON-encoded strings. */
function probeReports(value: unknown): string[] {
  if (typeof value === 'string') {
    const at = value.indexOf('== reach ==');
    if (at < 0) return [];
    try {
      return probeReports(JSON.parse(value));
    } catch {
      return [value.slice(at)];
    }
  }
  if (Array.isArray(value)) return value.flatMap(probeReports);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(probeReports);
  return [];
}

/** stdout as JSON (a failed run prints its summary too); anything else throws with stderr. */
const jsonOf = (result: SfResult, what: string): unknown => {
  if ((result.code === 0 || result.code === 1) && result.stdout.trim().startsWith('{')) return JSON.parse(result.stdout);
  throw new Error(`${what} exited ${result.code}: ${result.stderr.slice(-2000)}`);
};

describe('sandbox canaries', () => {
  beforeAll(() => assertBuilt());

  describe('embedded default', () => {
    let dir: string;
    afterAll(() => dir && fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));

    it('an agent run step, an exec agent and a command check read no canary of sf run, in any encoding, anywhere', async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-e2e-canary-'));
      const project = path.join(dir, 'project');
      const state = path.join(project, '.stageflow');
      const serviceHome = path.join(dir, 'service-home');
      const workDir = path.join(dir, 'service-work');
      const control = canaryValue('control_');
      probeProject(project, control);
      const { values, env } = envCanaries();
      const planted = {
        HOME_FILE: path.join(serviceHome, '.config/stageflow/credentials'),
        WORK_FILE: path.join(workDir, 'deploy-token.txt'),
        STATE_FILE: path.join(state, 'credentials.json'),
      };
      const canaries: Record<string, string> = {
        ...values,
        HOME_FILE: plantFile(planted.HOME_FILE, (v) => `api_key = ${v}`),
        WORK_FILE: plantFile(planted.WORK_FILE, (v) => `token=${v}`),
        STATE_FILE: plantFile(planted.STATE_FILE, (v) => `{"secret":"${v}"}`),
      };
      const targets = [serviceHome, workDir, state, '.'];
      const pipeline = fromTemplate('canary.pipeline.yaml', dir, { TARGETS: shellWords(targets) });
      const script = fromTemplate('canary.script.yaml', dir, { TARGETS: shellWords(targets) });
      const sfEnv = embeddedEnv(state, { ...env, HOME: serviceHome, SF_WORK_DIR: workDir });
      const sf = (args: string[]) => runSf(args, { cwd: project, env: sfEnv, timeoutMs: 180_000 });

      const scripted = await sf(['run', '--pipeline', pipeline, '--agent', `script:${script}`, '--checkout', project, '--json', '--include', 'stages']);
      const scriptedRun = jsonOf(scripted, 'sf run (script agent)') as RunSummary;
      const exec = await sf(['run', '--pipeline', pipeline, '--agent', `exec:bash probe-agent.sh ${SF} ${shellWords(targets)}`, '--checkout', project, '--json', '--include', 'stages']);
      const execRun = jsonOf(exec, 'sf run (exec agent)') as RunSummary;

      const printed: ByteSource[] = [text('sf run (script) stdout', scripted.stdout), text('sf run (script) stderr', scripted.stderr), text('sf run (exec) stdout', exec.stdout), text('sf run (exec) stderr', exec.stderr)];
      const reports: { where: string; report: string }[] = [];
      for (const [name, run] of [['script', scriptedRun], ['exec', execRun]] as const) {
        const shown = await sf(['runs', 'show', '--run', run.run_id, '--json', '--include', 'stages']);
        const verified = await sf(['runs', 'verify', '--run', run.run_id, '--stage', 'probe', '--json']);
        const transcript = await sf(['runs', 'transcript', '--run', run.run_id, '--stage', 'probe', '--attempt', '1', '--json']);
        printed.push(text(`runs show (${name})`, shown.stdout + shown.stderr), text(`runs verify (${name})`, verified.stdout + verified.stderr), text(`runs transcript (${name})`, transcript.stdout + transcript.stderr));
        reports.push(...probeReports(jsonOf(verified, 'runs verify')).map((report) => ({ where: `check of the ${name} run`, report })));
      }
      for (const tag of ['agent', 'exec']) reports.push({ where: `${tag} agent`, report: fs.readFileSync(path.join(project, `loot/${tag}.report.txt`), 'utf8') });

      const kept = [project, workDir, serviceHome].flatMap((at) => filesUnder(at, Object.values(planted)));
      expect(byCanary(search(canaries, [...printed, ...kept]))).toEqual({});
      expect([...printed, ...kept].filter((s) => s.bytes.includes(REDACTED)).map((s) => s.source)).toEqual([]);
      expect(reports.map((r) => r.where).sort()).toEqual(['agent agent', 'check of the exec run', 'check of the script run', 'exec agent']);
      for (const { where, report } of reports) expectReadsFailed(report, where, [serviceHome]);

      // The control: the probe ran everywhere, each channel carried what it read, and the search
      // recognises every encoding the probe used.
      const from = (prefix: string) => printed.filter((s) => s.source.startsWith(prefix));
      const forms = [
        controlForms(control, from('runs transcript (script)'), 'agent stdout in the transcript'),
        controlForms(control, from('runs verify'), 'check stdout in the evidence'),
        controlForms(control, from('sf run (exec) stdout'), 'exec envelope summary and payload'),
        controlForms(control, kept.filter((s) => s.source.includes(`${path.sep}artifacts${path.sep}`)), 'artifacts'),
        controlForms(control, kept.filter((s) => s.source.startsWith(path.join(project, 'loot'))), 'checkout'),
      ];
      expect([...new Set(forms.flat())].sort()).toEqual(['base64', 'hex', 'plain', 'reversed']);
      expect([scriptedRun.status, execRun.status]).toEqual(['succeeded', 'succeeded']);
    });
  });

  describe('cluster services', () => {
    let d: Deployment;
    afterAll(async () => d?.stop());

    it('the agent-runner and verifier leak no canary into the streams, read models, service files or CLI output', async () => {
      const databaseUrl = new URL(process.env.SF_TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
      const { values, env } = envCanaries({ DATABASE_URL: (v) => Object.assign(new URL(databaseUrl.href), { password: v }).href });
      d = deployment(env);
      const control = canaryValue('control_');
      const seed = path.join(d.dir, 'seed');
      const bare = path.join(d.dir, 'probe.git');
      probeProject(seed, control);
      execFileSync('git', ['clone', '--quiet', '--bare', seed, bare], { stdio: 'pipe' });
      const serviceHome = path.join(d.dir, 'service-home');
      const planted = { HOME_FILE: path.join(serviceHome, '.config/stageflow/credentials') };
      const canaries: Record<string, string> = { ...values, HOME_FILE: plantFile(planted.HOME_FILE, (v) => `api_key = ${v}`) };
      const pipeline = fromTemplate('canary.pipeline.yaml', d.dir, { TARGETS: shellWords([d.dir, '.']) });
      const script = fromTemplate('canary.script.yaml', d.dir, { TARGETS: shellWords([d.dir, '.']) });
      for (const name of ['scheduler', 'recovery']) await d.start(name);
      const verifier = await d.start('verifier', [], { HOME: serviceHome });
      const runner = await d.start('agent-runner', ['--agent', `script:${script}`], { HOME: serviceHome });
      // Each service's STAGEFLOW_HOME is its `home`, and its SF_WORK_DIR `<home>/work`.
      const stateFiles = [verifier, runner].flatMap((p) => [path.join(p.home, 'credentials.json'), path.join(p.home, 'work', 'deploy-token.txt')]);
      stateFiles.forEach((file, i) => (canaries[`STATE_OR_WORK_FILE_${i}`] = plantFile(file, (v) => `{"secret":"${v}"}`)));

      const run = await d.sf(['run', '--pipeline', pipeline, '--git', `file://${bare}`, '--ref', 'main', '--json', '--include', 'stages'], { timeoutMs: 180_000 });
      const summary = jsonOf(run, 'sf run') as RunSummary;
      const verified = await d.sf(['runs', 'verify', '--run', summary.run_id, '--stage', 'probe', '--json']);
      const transcript = await d.sf(['runs', 'transcript', '--run', summary.run_id, '--stage', 'probe', '--attempt', '1', '--json']);
      const printed = [text('sf run', run.stdout + run.stderr), text('runs verify', verified.stdout + verified.stderr), text('runs transcript', transcript.stdout + transcript.stderr)];
      const logs = [verifier, runner].map((p) => text(`${p.name} log`, p.logs()));
      const streams = await natsStreamContents(String(d.env.NATS_URL), d.namespace);
      const readModels = await postgresSchemaContents(databaseUrl.href, readModelSchema(d.namespace));
      const kept = filesUnder(d.dir, [...Object.values(planted), ...stateFiles]);

      expect(byCanary(search(canaries, [...printed, ...logs, ...streams, ...readModels, ...kept]))).toEqual({});
      expect([...printed, ...streams, ...readModels, ...kept].filter((s) => s.bytes.includes(REDACTED)).map((s) => s.source)).toEqual([]);
      const checkReports = probeReports(jsonOf(verified, 'runs verify'));
      const agentReports = probeReports(jsonOf(transcript, 'runs transcript'));
      expect([checkReports.length, agentReports.length]).toEqual([1, 1]);
      expectReadsFailed(checkReports[0]!, 'verifier check');
      expectReadsFailed(agentReports[0]!, 'agent-runner run step');

      const forms = [
        controlForms(control, [printed[2]!], 'agent stdout in the transcript'),
        controlForms(control, [printed[1]!], 'check stdout in the evidence'),
        controlForms(control, streams, 'the NATS streams'),
      ];
      expect([...new Set(forms.flat())].sort()).toEqual(['base64', 'hex', 'plain', 'reversed']);
      expect(summary.status).toBe('succeeded');
    });
  });
});
