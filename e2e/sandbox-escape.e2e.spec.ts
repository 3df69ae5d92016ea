/**
 * What agent-influenced code tries beyond reading secrets, against the five services as separate
 * processes on the shared NATS and Postgres, with the script agent's `run` steps and `command`
 * checks: processes left behind (setsid, a child holding the tool's stdout), a hard link to a host
 * file and a 1 GiB file in the artifact directory, the host's NATS port, a fork bomb and a 4 GiB
 * allocation. Each is stopped with its reason in the evidence, and the services keep serving.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { RunSummary } from '@stageflow/domain';
import { natsStreamContents, search } from './support/canaries';
import { assertBuilt, deployment, type Deployment, type ServiceProcess } from './support/cluster';
import { fromTemplate } from './support/sandbox-probe';
import { stageOf } from './support/summaries';

jest.setTimeout(90_000);

/** Names every process the fixtures start (as argv[0]), so `pgrep -f` finds only this run's. */
const MARKER = `sfcanary${randomBytes(4).toString('hex')}`;

interface CheckRecord {
  readonly id: string;
  readonly status: string;
  readonly evidence?: Record<string, unknown>;
  readonly [k: string]: unknown;
}
interface VerificationReport {
  readonly attempts: readonly { readonly n: number; readonly failure: string | null; readonly checks: readonly CheckRecord[] }[];
}

/** Pids of live processes whose command line contains `pattern`. */
function processesMatching(pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** The pids still matching after the processes had up to `ms` to go away (an empty list passes at once). */
async function leftAfter(pattern: string, ms = 5000): Promise<number[]> {
  const until = Date.now() + ms;
  let pids = processesMatching(pattern);
  while (pids.length && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    pids = processesMatching(pattern);
  }
  return pids;
}

describe('sandbox escapes e2e (cluster services, script agent)', () => {
  let d: Deployment;
  let services: ServiceProcess[];

  const runPipeline = async (name: string): Promise<RunSummary> => {
    const result = await d.sf(['run', '--pipeline', fromTemplate(`${name}.pipeline.yaml`, d.dir, { MARKER }), '--json', '--include', 'stages'], { timeoutMs: 150_000 });
    if (!result.stdout.trim().startsWith('{')) throw new Error(`sf run ${name} exited ${result.code}: ${result.stderr.slice(-2000)}`);
    return JSON.parse(result.stdout) as RunSummary;
  };
  const verification = async (runId: string, stage: string): Promise<VerificationReport> => JSON.parse((await d.sf(['runs', 'verify', '--run', runId, '--stage', stage, '--json'])).stdout) as VerificationReport;
  const checkOf = (report: VerificationReport, id: string): CheckRecord => {
    const found = report.attempts.flatMap((a) => a.checks).find((c) => c.id === id);
    if (!found) throw new Error(`no check ${id} in ${JSON.stringify(report).slice(0, 3000)}`);
    return found;
  };
  const expectServing = () => expect(services.map((s) => [s.name, s.child.exitCode, s.child.signalCode])).toEqual(services.map((s) => [s.name, null, null]));

  beforeAll(async () => {
    assertBuilt();
    d = deployment();
    const script = fromTemplate('escape.script.yaml', d.dir, { MARKER });
    services = [];
    for (const name of ['scheduler', 'recovery', 'verifier']) services.push(await d.start(name));
    services.push(await d.start('agent-runner', ['--agent', `script:${script}`]));
  });
  afterAll(async () => {
    for (const pid of processesMatching(MARKER)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await d?.stop();
  });

  // The run step `(sleep 999 &)` has the default 120 s tool timeout: this test's 60 s timeout
  // fails unless the tool returns when its shell exits.
  it('a setsid child of a tool and of a check, and a child holding a tool\'s stdout, end with the attempt; the tool returns when its command exits', async () => {
    const summary = await runPipeline('leftovers');
    expect(stageOf(summary, 'leftovers')).toMatchObject({ status: 'succeeded', attempts: [expect.objectContaining({ n: 1, disposition: 'passed' })] });
    expect({
      toolSetsid: await leftAfter(`${MARKER}-tool-setsid`),
      toolHeld: await leftAfter(`${MARKER}-tool-held`),
      checkSetsid: await leftAfter(`${MARKER}-check-setsid`),
    }).toEqual({ toolSetsid: [], toolHeld: [], checkSetsid: [] });
    expectServing();
  }, 60_000);

  it('an artifact hard-linked to /etc/passwd fails the attempt with the reason, and no line of /etc/passwd is stored', async () => {
    const summary = await runPipeline('hardlink');
    const stage = stageOf(summary, 'hardlink');
    expect(stage.status).toBe('failed');
    const report = await verification(summary.run_id, 'hardlink');
    const first = report.attempts[0]!;
    const why = `${first.failure ?? ''} ${JSON.stringify(first.checks)}`;
    // Refused by the seal (hard_link), or the link could not even be made across the sandbox's mounts.
    expect(why).toMatch(/x\.md.*(hard.link|cross-device|missing|not found|does not exist|no such file)/i);
    const passwd = fs.readFileSync('/etc/passwd', 'utf8').split('\n').filter((line) => line.length >= 16);
    const found = search(Object.fromEntries(passwd.map((line, i) => [`passwd:${i}`, line])), await natsStreamContents(String(d.env.NATS_URL), d.namespace));
    expect(found.filter((h) => h.form === 'plain')).toEqual([]);
  });

  it('a 1 GiB artifact fails the attempt on its first delivery with a clear reason, and the blob store does not grow by it', async () => {
    const summary = await runPipeline('big');
    const stage = stageOf(summary, 'big');
    expect(stage.status).toBe('failed');
    const failure = stage.attempts[0]!.failure ?? '';
    expect(failure).toMatch(/big\.md/);
    expect(failure).toMatch(/limit/);
    expect(failure).not.toMatch(/deliveries/);
    const nc = await connect({ servers: String(d.env.NATS_URL) });
    try {
      const jsm = await jetstreamManager(nc);
      const blobs = await jsm.streams.info(`OBJ_${d.namespace}_blobs`);
      expect(blobs.state.bytes).toBeLessThan(64 * 1024 ** 2);
    } finally {
      await nc.close();
    }
  });

  it('a check reaches no host port: not by default, and not with network: true', async () => {
    const summary = await runPipeline('network');
    expect(stageOf(summary, 'network').status).toBe('failed');
    const report = await verification(summary.run_id, 'network');
    for (const id of ['nats-by-default', 'nats-with-network']) {
      const check = checkOf(report, id);
      expect({ id, status: check.status, stdout: check.evidence?.stdout }).toEqual({ id, status: 'failed', stdout: expect.not.stringContaining('INFO') });
    }
  });

  // Bounded by the sandbox's process limit (RLIMIT_NPROC of its non-root uid); without the
  // sandbox, as root, nothing but the check's timeout bounds it.
  it('fork bombs in a check are stopped: the one that waits fails naming the process limit, none leaves a process, and the services keep serving', async () => {
    const summary = await runPipeline('forkbomb');
    const report = await verification(summary.run_id, 'forkbomb');
    const waiting = checkOf(report, 'fork-bomb');
    expect(waiting.status).toBe('failed');
    expect(waiting.evidence).toMatchObject({ limit: 'processes' });
    checkOf(report, 'fork-bomb-detached');
    expect(await leftAfter(`${MARKER}-bomb`)).toEqual([]);
    expectServing();
  });

  it('a 4 GiB allocation in a check is stopped, the check fails naming the memory limit, and the services keep serving', async () => {
    const summary = await runPipeline('memory');
    const check = checkOf(await verification(summary.run_id, 'memory'), 'memory-hog');
    expect(check.status).toBe('failed');
    expect(check.evidence).toMatchObject({ limit: 'memory' });
    expect(check.evidence?.stdout).not.toMatch(/allocated/);
    expectServing();
  });

  it('after all of that, a plain run still passes', async () => {
    const summary = await runPipeline('afterwards');
    expect(summary.status).toBe('succeeded');
    expectServing();
  });
});
