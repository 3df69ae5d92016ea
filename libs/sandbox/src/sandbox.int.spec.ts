/**
 * The sandbox's guarantees, against the real bubblewrap of this host (no NATS or Postgres needed;
 * NATS on 127.0.0.1:4222 is only the target that must stay unreachable).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_LIMITS, sandboxConfigFromEnv, type SandboxConfig } from './config';
import { Sandbox } from './sandbox';
import type { SandboxCommand } from './run';

const canary = `sf-canary-${randomBytes(12).toString('hex')}`;
let root: string;
let checkout: string;
let artifacts: string;
let stateDir: string;

function sandboxWith(limits: Partial<SandboxConfig['limits']> = {}): Sandbox {
  const config = sandboxConfigFromEnv({ STAGEFLOW_HOME: stateDir, SF_SIGNING_KEY_FILE: path.join(checkout, 'keys', 'verifier.jwk') });
  return new Sandbox({ ...config, limits: { ...DEFAULT_LIMITS, ...limits } });
}

function sh(script: string, extra: Partial<SandboxCommand> = {}, sandbox = sandboxWith()) {
  return sandbox.run({
    argv: ['bash', '-c', script],
    cwd: checkout,
    env: { SF_CHECKOUT: checkout, SF_ARTIFACTS_DIR: artifacts },
    writable: [checkout, artifacts],
    timeoutMs: 20_000,
    outputCapBytes: 64 * 1024,
    ...extra,
  });
}

/** Host processes whose command line contains `marker` (the sandbox's leftovers, if any). */
function hostProcesses(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

beforeAll(async () => {
  process.env.SF_CANARY_TOKEN = canary;
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-int-'));
  checkout = path.join(root, 'project');
  stateDir = path.join(checkout, '.stageflow');
  artifacts = path.join(stateDir, 'runs', 'r1', 'stages', 's', 'attempts', '1', 'artifacts');
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(stateDir, 'events.db'), canary);
  fs.writeFileSync(path.join(checkout, 'README.md'), 'hello\n');
  fs.mkdirSync(path.join(checkout, 'keys'));
  fs.writeFileSync(path.join(checkout, 'keys', 'verifier.jwk'), canary);
  expect((await sandboxWith().probe()).available).toBe(true);
});

afterAll(() => {
  delete process.env.SF_CANARY_TOKEN;
  fs.rmSync(root, { recursive: true, force: true });
});

describe('sandbox isolation', () => {
  it('/proc shows only the sandbox, and no environ there holds the service canary', async () => {
    const result = await sh(`ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr '\\0' '\\n'; cat /proc/$PPID/environ | tr '\\0' '\\n'`);
    expect(result.exit_code).toBe(0);
    expect(Number(result.stdout.split('\n')[0])).toBeLessThanOrEqual(6);
    expect(result.stdout).not.toContain(canary);
    expect(result.stdout).not.toContain('SF_CANARY_TOKEN');
  });

  it('builds the environment from scratch: PATH, HOME, TMPDIR, locale and the given values only', async () => {
    const result = await sh('env -0', { argv: ['env', '-0'] });
    const names = result.stdout.split('\0').filter(Boolean).map((line) => line.split('=')[0]).sort();
    // PWD and SHLVL are set by the limits prologue's bash, not inherited.
    expect(names).toEqual(['HOME', 'LANG', 'LC_ALL', 'PATH', 'PWD', 'SF_ARTIFACTS_DIR', 'SF_CHECKOUT', 'SHLVL', 'TMPDIR']);
    expect(result.stdout).not.toContain(canary);
  });

  it('hides the state dir and a key file inside the checkout, /root and the host home; the checkout stays readable', async () => {
    const result = await sh(`cat README.md; ls -A .stageflow | grep -v runs; cat .stageflow/events.db; cat keys/verifier.jwk; ls /root; ls ${os.homedir()}; echo done`);
    expect(result.stdout).toBe('hello\ndone\n');
    expect(result.stderr).toMatch(/events.db: No such file/);
    expect(result.stdout + result.stderr).not.toContain(canary);
  });

  it('writes only to the checkout, the artifacts dir and the private tmp', async () => {
    const result = await sh(`for target in /usr/x /etc/x /x /var/x /proc/x /home/x /dev/x /run/x; do (echo x > $target) 2>/dev/null && echo "wrote $target"; done
      echo c > made.txt && echo a > "$SF_ARTIFACTS_DIR/a.md" && echo t > /tmp/t && echo h > "$HOME/h" && echo n > /dev/null && echo ok`);
    expect(result).toMatchObject({ stdout: 'ok\n', stderr: '' });
    expect(fs.readFileSync(path.join(checkout, 'made.txt'), 'utf8')).toBe('c\n');
    expect(fs.readFileSync(path.join(artifacts, 'a.md'), 'utf8')).toBe('a\n');
  });

  it('has no network by default: the host loopback (NATS on 127.0.0.1:4222) is unreachable', async () => {
    const connect = `node -e "require('net').connect(4222, process.argv[1]).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(1); })"`;
    const result = await sh(`${connect} 127.0.0.1; ${connect} 10.0.2.2`);
    expect(result.stdout).not.toContain('connected');
    expect(result.stdout).toMatch(/ECONNREFUSED/);
  });

  it('with network: true gets its own user-mode network, still without the host loopback', async () => {
    const connect = `node -e "const s = require('net').connect(4222, process.argv[1]).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(1); }); setTimeout(() => { console.log('timeout'); process.exit(1); }, 3000)"`;
    const result = await sh(`grep -o tap0 /proc/net/dev; ${connect} 127.0.0.1; ${connect} 10.0.2.2`, { network: true });
    expect(result.start_error).toBeUndefined();
    expect(result.stdout).toMatch(/^tap0\n/);
    expect(result.stdout).not.toContain('connected');
  });
});

describe('sandbox lifetime', () => {
  it('a setsid grandchild is dead once the call returns', async () => {
    const result = await sh('setsid sleep 3101 & setsid bash -c "sleep 3102" & sleep 0.2; echo started');
    expect(result.stdout).toBe('started\n');
    expect(hostProcesses('sleep 310')).toEqual([]);
  });

  it('returns when the command exits even though a background child holds stdout', async () => {
    const result = await sh('(sleep 3201 &); echo back', { timeoutMs: 60_000 });
    expect(result).toMatchObject({ exit_code: 0, timed_out: false, stdout: 'back\n' });
    expect(result.duration_ms).toBeLessThan(30_000);
    expect(hostProcesses('sleep 3201')).toEqual([]);
  });

  it('a timeout kills everything the command started', async () => {
    const result = await sh('sleep 3301 & setsid sleep 3302 & sleep 3303', { timeoutMs: 500 });
    expect(result.timed_out).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hostProcesses('sleep 330')).toEqual([]);
  });

  it('an abort kills the sandbox at once', async () => {
    const controller = new AbortController();
    const pending = sh('sleep 3401', { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    expect(await pending).toMatchObject({ aborted: true, exit_code: null });
    expect(hostProcesses('sleep 3401')).toEqual([]);
  });
});

describe('sandbox limits', () => {
  it('stops a fork bomb at the process limit and names it; this process keeps working', async () => {
    const result = await sh('for i in $(seq 400); do sleep 3501 & done; wait', { timeoutMs: 8_000 }, sandboxWith({ processes: 40 }));
    expect(result.limit).toBe('processes');
    expect(hostProcesses('sleep 3501')).toEqual([]);
    expect((await sh('echo alive')).stdout).toBe('alive\n');
  }, 30_000);

  it('stops a 4 GiB allocation at the memory limit and names it', async () => {
    const result = await sh(`node -e "const b = Buffer.alloc(4 * 1024 ** 3, 1); console.log(b.length)"`, {}, sandboxWith({ memoryBytes: 1024 ** 3 }));
    expect(result.exit_code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.limit).toBe('memory');
  });

  it('stops a file larger than the file-size limit and names it', async () => {
    const result = await sh('head -c 3000000 /dev/zero > big.bin', {}, sandboxWith({ fileSizeBytes: 1024 ** 2 }));
    expect(result.limit).toBe('file_size');
    expect(fs.statSync(path.join(checkout, 'big.bin')).size).toBeLessThanOrEqual(1024 ** 2);
  });

  it('names the open-file limit', async () => {
    const result = await sh('for i in $(seq 100); do exec {fd}</dev/null || exit 1; done', {}, sandboxWith({ openFiles: 32 }));
    expect(result.limit).toBe('open_files');
  });
});

describe('without bubblewrap (SF_SANDBOX=off)', () => {
  const off = () => new Sandbox({ ...sandboxConfigFromEnv({ STAGEFLOW_HOME: stateDir, SF_SANDBOX: 'off' }), limits: { ...DEFAULT_LIMITS, fileSizeBytes: 1024 ** 2 } });

  it('still builds the environment from scratch, runs as the sandbox uid, applies the limits', async () => {
    const result = await sh(`env | cut -d= -f1 | sort | tr '\\n' ' '; id -u; head -c 3000000 /dev/zero > big-off.bin`, {}, off());
    expect(result.isolation).toBe('none');
    const [names, uid] = /^(.*) (\d+)\n$/.exec(result.stdout)!.slice(1);
    expect(names).toBe('HOME LANG LC_ALL PATH PWD SF_ARTIFACTS_DIR SF_CHECKOUT SHLVL TMPDIR _');
    expect(Number(uid)).toBe(process.getuid?.() === 0 ? 65534 : process.getuid?.());
    expect(result.stdout + result.stderr).not.toContain(canary);
    expect(result.limit).toBe('file_size');
  });

  it('kills what the command left in its process group when it exits', async () => {
    const result = await sh('sleep 3801 & echo started', {}, off());
    expect(result.stdout).toBe('started\n');
    expect(hostProcesses('sleep 3801')).toEqual([]);
  });
});

