'use strict';
/**
 * `npm run bench:sandbox [-- --runs N]`: the sandbox's extra cost per command. Times `bash -c true`
 * N times each (alternating) as: a plain spawn; the bubblewrap process alone with the sandbox's
 * flags; and the whole `Sandbox.run` (scratch tmp, permission grants on a small checkout and
 * artifact directory, bubblewrap, limits prologue, output capture). Prints p50/p99 of each and the
 * extra over the plain spawn, and writes bench/results/sandbox-<timestamp>.json. Not part of npm test.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Sandbox } = require('../libs/sandbox/dist');
const { mountArgs } = require('../libs/sandbox/dist/mounts');
const { limitedArgv } = require('../libs/sandbox/dist/limits');
const { sandboxIdentity } = require('../libs/sandbox/dist/run');

const runsFlag = process.argv.indexOf('--runs');
const RUNS = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 300;

function timed(file, args, options) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`${file} exited ${code}`))));
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), runs: sorted.length };
};

async function main() {
  const sandbox = Sandbox.fromEnv({});
  const probe = await sandbox.probe();
  if (!probe.available) throw new Error(`no sandbox here: ${JSON.stringify(probe.properties)}`);
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sf-bench-sandbox-')));
  const checkout = path.join(root, 'checkout');
  const artifacts = path.join(root, 'run', 'artifacts');
  fs.mkdirSync(artifacts, { recursive: true });
  fs.mkdirSync(path.join(checkout, 'src'), { recursive: true });
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(checkout, 'src', `f${i}.txt`), 'x');
  const identity = sandboxIdentity(sandbox.config);
  const scratchTmp = path.join(root, 'tmp');
  fs.mkdirSync(scratchTmp);
  if (identity) fs.chownSync(scratchTmp, identity.uid, identity.gid);
  // Grants done once, so the raw bubblewrap variant times the process alone.
  await sandbox.run({ argv: ['true'], cwd: checkout, env: {}, writable: [checkout, artifacts], timeoutMs: 10_000, outputCapBytes: 1024 });
  const bwrapFlags = ['--unshare-all', '--unshare-user', '--die-with-parent', '--new-session'];
  const bwrapArgs = [
    ...bwrapFlags,
    ...mountArgs({ binds: [{ src: checkout, writable: true }, { src: artifacts, writable: true }], hidden: [], privateTmp: scratchTmp }),
    '--chdir', checkout, '--', ...limitedArgv(sandbox.config.limits, ['bash', '-c', 'true']),
  ];
  const env = { PATH: '/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8' };
  const samples = { plain: [], bwrap: [], sandbox: [] };
  for (let i = 0; i < 10; i++) await timed('bash', ['-c', 'true'], { env }); // warm-up
  for (let i = 0; i < RUNS; i++) {
    samples.plain.push(await timed('bash', ['-c', 'true'], { env }));
    samples.bwrap.push(await timed(sandbox.config.bwrapPath, bwrapArgs, { env, ...(identity ?? {}) }));
    const started = process.hrtime.bigint();
    const outcome = await sandbox.run({ argv: ['bash', '-c', 'true'], cwd: checkout, env: {}, writable: [checkout, artifacts], timeoutMs: 10_000, outputCapBytes: 64 * 1024 });
    if (outcome.exit_code !== 0) throw new Error(`sandboxed run failed: ${outcome.stderr || outcome.start_error}`);
    samples.sandbox.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  fs.rmSync(root, { recursive: true, force: true });
  const result = {
    at: new Date().toISOString(),
    runs: RUNS,
    identity: identity ? `uid ${identity.uid}, gid ${identity.gid}` : `this process (uid ${process.getuid()})`,
    bwrap_flags: [...bwrapFlags, '--ro-bind /usr (+ merged-/usr symlinks, /etc pieces)', '--proc /proc', '--tmpfs /dev + --dev-bind null,zero,full,random,urandom', '--bind <private tmp> /tmp', '--bind <checkout>', '--bind <artifacts>', '--remount-ro /dev', '--remount-ro /', '--chdir'],
    limits: sandbox.config.limits,
    loadavg: os.loadavg(),
    plain: summary(samples.plain),
    bwrap_process: summary(samples.bwrap),
    sandbox_run: summary(samples.sandbox),
  };
  result.extra = {
    bwrap_process: { p50: result.bwrap_process.p50 - result.plain.p50, p99: result.bwrap_process.p99 - result.plain.p99 },
    sandbox_run: { p50: result.sandbox_run.p50 - result.plain.p50, p99: result.sandbox_run.p99 - result.plain.p99 },
  };
  const out = path.join(__dirname, 'results', `sandbox-${result.at.replace(/[:.]/g, '-')}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  const ms = (v) => `${v.toFixed(1)} ms`;
  console.log(`runs ${RUNS} each, ${result.identity}, load ${result.loadavg.map((l) => l.toFixed(2)).join(' ')}`);
  for (const key of ['plain', 'bwrap_process', 'sandbox_run']) console.log(`${key.padEnd(14)} p50 ${ms(result[key].p50)}  p99 ${ms(result[key].p99)}`);
  for (const key of ['bwrap_process', 'sandbox_run']) console.log(`extra ${key.padEnd(14)} p50 ${ms(result.extra[key].p50)}  p99 ${ms(result.extra[key].p99)}`);
  console.log(`written ${path.relative(process.cwd(), out)}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
