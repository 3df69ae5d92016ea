/** Real sandboxed processes (bubblewrap): exit statuses, timeouts, output caps, scratch env, limits, redaction. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { baseContext, tempDir } from '../__tests__/support.spec';
import type { CommandCheck } from '../domain';
import type { AfterCheckContext } from '../types';
import { runAfterChecks } from './run-after-checks';

const checkoutDir = tempDir('command');
const outsideDir = tempDir('command-outside');
const artifactsDir = tempDir('command-artifacts');
const ctx = baseContext({ checkoutDir, artifactsDir });
const command = (run: string, fields: Partial<CommandCheck> = {}): CommandCheck => ({ id: 'cmd', type: 'command', when: ['after'], run, ...fields });

async function runOne(item: CommandCheck, context: AfterCheckContext = ctx) {
  const [result] = await runAfterChecks([item], context);
  return result!;
}

/** Live (non-zombie) host processes whose command line contains `marker`. */
function liveProcesses(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes('ps -eo') && !/^Z/.test(line.trim()));
}

beforeAll(() => {
  mkdirSync(join(checkoutDir, 'sub'));
  symlinkSync(outsideDir, join(checkoutDir, 'escape'));
});

describe('command check', () => {
  it('passes on exit 0 and records its evidence', async () => {
    const result = await runOne(command('echo hello; echo oops >&2'));
    expect(result.status).toBe('passed');
    expect(result.evidence).toEqual(
      expect.objectContaining({
        command: 'echo hello; echo oops >&2',
        cwd: '.',
        exit_code: 0,
        signal: null,
        timed_out: false,
        stdout: 'hello\n',
        stderr: 'oops\n',
        stdout_truncated: false,
        stderr_truncated: false,
        started_at: expect.any(String),
        finished_at: expect.any(String),
        duration_ms: expect.any(Number),
      }),
    );
  });

  it('fails on a non-zero exit status', async () => {
    const result = await runOne(command('echo partial; exit 3'));
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'command exited with status 3' }));
    expect(result.evidence).toEqual(expect.objectContaining({ exit_code: 3, stdout: 'partial\n' }));
  });

  it('fails when killed by a signal (the sandbox reports 128 + the signal)', async () => {
    const result = await runOne(command('kill -KILL $$'));
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'command exited with status 137' }));
    expect(result.evidence).toEqual(expect.objectContaining({ exit_code: 137, timed_out: false, isolation: 'bwrap' }));
  });

  it('runs in a cwd inside the checkout', async () => {
    const result = await runOne(command('pwd -P', { cwd: './sub' }));
    expect(result.status).toBe('passed');
    expect(String(result.evidence['stdout']).trim()).toMatch(/\/sub$/);
  });

  it.each([
    ['a parent path', '../', 'refused'],
    ['an absolute path', '/tmp', 'refused'],
    ['a symlink out of the checkout', 'escape', 'resolves outside the checkout'],
    ['a missing directory', 'nope', 'does not exist'],
  ])('fails a cwd that is %s without running anything', async (_name, cwd, reason) => {
    const result = await runOne(command('touch ran-here', { cwd }));
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: expect.stringContaining(reason) }));
    expect(result.evidence).toEqual({ command: 'touch ran-here', cwd });
  });

  it('is an error when the command cannot be spawned', async () => {
    // One argument above the kernel's MAX_ARG_STRLEN (128 KiB): execve fails with E2BIG.
    const result = await runOne(command(`echo ${'x'.repeat(200 * 1024)}`));
    expect(result).toEqual(expect.objectContaining({ status: 'error', message: expect.stringContaining('command could not be started') }));
  });

  it('is an error when the checkout itself is unavailable', async () => {
    const result = await runOne(command('true'), baseContext({ checkoutDir: join(checkoutDir, 'missing') }));
    expect(result).toEqual(expect.objectContaining({ status: 'error', message: expect.stringContaining('checkout directory unavailable') }));
  });

  it('ends everything at the deadline and leaves nothing behind', async () => {
    const started = Date.now();
    const result = await runOne(command('sleep 3601 & setsid sleep 3602 & wait', { timeout_ms: 300 }));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'timed out after 300 ms' }));
    expect(result.evidence).toEqual(expect.objectContaining({ timed_out: true, exit_code: null, signal: 'SIGKILL' }));
    expect(liveProcesses('sleep 360')).toEqual([]);
  });

  it('ends what a finished command left running, setsid or not', async () => {
    const started = Date.now();
    const result = await runOne(command('sleep 3701 & setsid sleep 3702 & (sleep 3703 &); exit 0'));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.status).toBe('passed');
    expect(liveProcesses('sleep 370')).toEqual([]);
  });

  it('names the resource limit that stopped a command', async () => {
    const result = await runOne(command(`node -e "Buffer.alloc(4 * 1024 ** 3, 1)"`));
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: expect.stringMatching(/stopped by the sandbox's memory limit$/) }));
    expect(result.evidence).toEqual(expect.objectContaining({ limit: 'memory' }));
  });

  it('cannot write outside the checkout and the artifact directory', async () => {
    const result = await runOne(command('echo x > "$SF_ARTIFACTS_DIR/out.txt" && echo y > made.txt && ! (echo z > /etc/x) 2>/dev/null'), { ...ctx, env: { set: { SF_ARTIFACTS_DIR: artifactsDir } } });
    expect(result.status).toBe('passed');
  });

  it('has no network unless the check says network: true', async () => {
    const probe = 'grep -q tap0 /proc/net/dev';
    expect((await runOne(command(probe))).status).toBe('failed');
    expect((await runOne(command(probe, { network: true }))).status).toBe('passed');
  });

  it('caps an output flood at 64 KiB and marks the truncation', async () => {
    const result = await runOne(command('yes | head -c 50000000; yes err | head -c 100000 >&2'));
    expect(result.status).toBe('passed');
    expect(result.evidence).toEqual(
      expect.objectContaining({ stdout_truncated: true, stdout_bytes: 50_000_000, stderr_truncated: true, stderr_bytes: 100_000 }),
    );
    expect(Buffer.byteLength(String(result.evidence['stdout']))).toBe(64 * 1024);
    expect(Buffer.byteLength(String(result.evidence['stderr']))).toBe(64 * 1024);
  });

  it('calls onProgress while the command runs', async () => {
    let ticks = 0;
    const result = await runOne(command('sleep 0.5'), { ...ctx, progressIntervalMs: 50, onProgress: () => ticks++ });
    expect(result.status).toBe('passed');
    expect(ticks).toBeGreaterThanOrEqual(2);
  });

  describe('environment and secrets', () => {
    const canary = `canary-${process.pid}-${Date.now()}-do-not-leak`;
    const openaiKey = `sk-test-${Date.now()}-openai-canary-value`;
    const saved = { canary: process.env['SF_CANARY_TOKEN'], key: process.env['OPENAI_API_KEY'], other: process.env['UNLISTED_VARIABLE'] };
    beforeAll(() => {
      process.env['SF_CANARY_TOKEN'] = canary;
      process.env['OPENAI_API_KEY'] = openaiKey;
      process.env['UNLISTED_VARIABLE'] = 'unlisted-value';
    });
    afterAll(() => {
      for (const [name, value] of [['SF_CANARY_TOKEN', saved.canary], ['OPENAI_API_KEY', saved.key], ['UNLISTED_VARIABLE', saved.other]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    // /proc/$PPID/environ shows the verifier's environment as exec'd; the canaries are set later, so
    // the literal echo of the canary below is what exercises redaction of output.
    it("never puts the verifier's secrets in evidence", async () => {
      const run = 'env; echo "key=$OPENAI_API_KEY"; echo "canary=$SF_CANARY_TOKEN"; tr "\\0" "\\n" < /proc/$PPID/environ; echo ' + canary + ' >&2; false';
      const result = await runOne(command(run));
      const json = JSON.stringify(result);
      expect(json).not.toContain(canary);
      expect(json).not.toContain(openaiKey);
      expect(json).not.toContain('canary-');
      const stdout = String(result.evidence['stdout']);
      expect(stdout).toContain('key=\n');
      expect(String(result.evidence['stderr'])).toBe('[REDACTED]\n');
      expect(String(result.evidence['command'])).toContain('[REDACTED]');
    });

    it('passes the scratch environment plus the explicit values, nothing of the verifier', async () => {
      const result = await runOne(command('env'), { ...ctx, env: { set: { SF_RUN_ID: 'run-1' }, base: { PATH: process.env['PATH'], UNLISTED_VARIABLE: 'x', GITHUB_TOKEN: 'ghp_secretvalue' } } });
      const names = String(result.evidence['stdout']).split('\n').map((line) => line.split('=')[0]).filter((name) => name !== '').sort();
      expect(names).toEqual(['HOME', 'LANG', 'LC_ALL', 'PATH', 'PWD', 'SF_RUN_ID', 'SHLVL', 'TMPDIR', '_']);
    });

    it('redacts explicit secrets, including one straddling the output cap', async () => {
      const secret = 'explicit-secret-XYZ123';
      const run = `head -c 65530 /dev/zero | tr '\\0' a; printf '${secret}'`;
      const result = await runOne(command(run), { ...ctx, secrets: [secret] });
      const stdout = String(result.evidence['stdout']);
      expect(result.evidence['stdout_truncated']).toBe(true);
      expect(stdout).not.toContain('explic');
      expect(JSON.stringify(result)).not.toContain(secret);
    });
  });
});
