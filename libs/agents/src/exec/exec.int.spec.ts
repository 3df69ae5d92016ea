import * as fs from 'node:fs';
import * as path from 'node:path';
import { Sandbox } from '@stageflow/sandbox';
import { buildPrompt } from '../prompt';
import { runSession } from '../session';
import { goodEmit, makeHost, makeStage, tempRun, type TempRun } from '../testing/fixtures';
import { ExecBackend, type ExecBackendOptions } from './exec';
import { stopHook } from './stop-hook';
import { postToolServer, stageToolCommand } from './tool-client';
import { ToolServer } from './tool-server';

let run: TempRun;
beforeEach(() => {
  run = tempRun();
});
afterEach(() => run.cleanup());

/** An "agent CLI": node code that calls the tool server (Unix socket) like `sf stage ...` would. */
const agent = (code: string) => [
  process.execPath,
  '-e',
  `const call = (tool, args) => new Promise((resolve, reject) => {
     const req = require('http').request({ socketPath: process.env.SF_TOOL_SOCKET, path: '/tools/' + tool, method: 'POST', headers: { authorization: 'Bearer ' + process.env.SF_TOOL_TOKEN } }, (res) => {
       let body = ''; res.on('data', (c) => (body += c)); res.on('end', () => resolve(JSON.parse(body)));
     });
     req.on('error', reject); req.end(JSON.stringify(args));
   });
   (async () => { ${code} })().catch((e) => { console.error(e); process.exit(3); });`,
];

function session(command: string[], extra: { selfCheck?: () => Promise<{ ok: boolean; report: string }> } = {}, backend: Partial<ExecBackendOptions> = {}) {
  const stage = makeStage();
  const host = makeHost(run, { stage, ...extra });
  const reminders: number[] = [];
  return {
    host,
    reminders,
    go: () =>
      runSession({
        backend: new ExecBackend({ command, stopGraceMs: 200, ...backend }),
        host,
        stage,
        runId: 'run-1',
        attempt: 1,
        prompt: buildPrompt({ stage, input: {}, upstream: {}, answeredExchanges: [] }),
        recorder: { onReminder: (n) => void reminders.push(n) },
        deadlineAt: Date.now() + 20_000,
      }),
  };
}

describe('exec backend', () => {
  it('runs the CLI in the checkout with SF_* env; it writes an artifact and emits through the tool server', async () => {
    const { go } = session(
      agent(`
        require('fs').writeFileSync('cwd.txt', process.cwd() + ' ' + process.env.SF_STAGE_ID + ' ' + process.env.SF_TURN_KIND);
        const a = await call('write_stage_artifact', { path: 'r.md', content: 'R' });
        const p = JSON.parse(a.content).path;
        await call('emit_stage_envelope', ${JSON.stringify({ ...goodEmit })});
      `),
    );
    expect(await go()).toEqual({ kind: 'emitted', envelope: goodEmit });
    expect(fs.readFileSync(path.join(run.checkout, 'cwd.txt'), 'utf8')).toBe(`${run.checkout} build start`);
    expect(fs.existsSync(path.join(run.runDir, 'stages/build/attempts/1/artifacts/r.md'))).toBe(true);
  });

  it('with stopHook claude, passes --settings <file> (next to the prompt file, outside the checkout)', async () => {
    const { go, host } = session(
      [
        ...agent(`
        await call('emit_stage_envelope', { ...${JSON.stringify(goodEmit)}, summary: JSON.stringify(process.argv.slice(1)) });
      `),
        '--',
      ],
      {},
      { stopHook: 'claude', sfBin: '/opt/sf/bin/sf.js' },
    );
    expect((await go()).kind).toBe('emitted');
    const file = path.join(run.runDir, 'stages/build/attempts/1/turn-1.claude-settings.json');
    expect(JSON.parse(host.accepted!.summary)).toEqual(['--settings', file]);
    expect(fs.readFileSync(file, 'utf8')).toContain('/opt/sf/bin/sf.js stage stop-hook');
  });

  it('reminds with a new CLI turn when it exits without an emit', async () => {
    const { go, reminders } = session(agent(`if (process.env.SF_TURN_KIND === 'reminder') await call('emit_stage_envelope', ${JSON.stringify(goodEmit)});`));
    expect((await go()).kind).toBe('emitted');
    expect(reminders).toEqual([1]);
  });

  it('a non-zero exit without an emit is a provider error carrying stderr', async () => {
    const { go, reminders } = session(agent(`console.error('not logged in'); process.exit(1);`));
    expect(await go()).toMatchObject({ kind: 'failed', failureKind: 'provider_error', reason: expect.stringMatching(/code 1: not logged in/) });
    expect(reminders).toEqual([]);
  });

  it('runs the CLI sandboxed: scratch environment, no service files, `sf stage` on PATH over the bound socket', async () => {
    const canary = `exec-canary-${process.pid}-${Date.now()}`;
    process.env.SF_EXEC_TEST_SECRET = canary;
    try {
      const { go, host } = session([
        'bash',
        '-c',
        `{ env; cat /proc/*/environ; ls /root; } > seen.txt 2>&1; sf stage artifact '{"path":"r.md","content":"R"}' && sf stage emit '${JSON.stringify(goodEmit)}'`,
      ]);
      expect(await go()).toEqual({ kind: 'emitted', envelope: goodEmit });
      expect(host.accepted).toEqual(goodEmit);
      const seen = fs.readFileSync(path.join(run.checkout, 'seen.txt'), 'utf8');
      expect(seen).not.toContain(canary);
      expect(seen).toContain('SF_TOOL_SOCKET=/run/stageflow/tool.sock');
      expect(fs.readFileSync(path.join(run.runDir, 'stages/build/attempts/1/artifacts/r.md'), 'utf8')).toBe('R');
    } finally {
      delete process.env.SF_EXEC_TEST_SECRET;
    }
  });

  it('with SF_SANDBOX=off the CLI reaches the tools on the host path of the socket', async () => {
    const { go } = session(['bash', '-c', `sf stage emit '${JSON.stringify(goodEmit)}'`], {}, { sandbox: Sandbox.fromEnv({ SF_SANDBOX: 'off' }) });
    expect(await go()).toEqual({ kind: 'emitted', envelope: goodEmit });
  });

  it('kills a CLI that keeps running after its envelope was accepted', async () => {
    const started = Date.now();
    const { go } = session(agent(`await call('emit_stage_envelope', ${JSON.stringify(goodEmit)}); await new Promise((r) => setTimeout(r, 30000));`));
    expect((await go()).kind).toBe('emitted');
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('tool server', () => {
  it('refuses requests without the bearer token', async () => {
    const server = new ToolServer(makeHost(run));
    const env = await server.start();
    try {
      const response = await postToolServer(env.SF_TOOL_SOCKET, 'wrong', '/tools/emit_stage_envelope', '{}');
      expect(response.status).toBe(401);
      const viaClient = await stageToolCommand('emit', JSON.stringify(goodEmit), { ...env, SF_TOOL_TOKEN: 'x'.repeat(64) });
      expect(viaClient.exitCode).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('sf stage commands map to the tools with exit codes 0 / 1 / 2', async () => {
    const host = makeHost(run, { stage: makeStage({ gate_kinds: ['confirm'] }) });
    const server = new ToolServer(host);
    const env = await server.start();
    try {
      expect((await stageToolCommand('artifact', '{"path":"a.md","content":"x"}', env)).exitCode).toBe(0);
      expect(await stageToolCommand('emit', '{"status":', env)).toMatchObject({ exitCode: 1, output: expect.stringMatching(/not valid JSON/) });
      expect((await stageToolCommand('ask', '{"kind":"confirm","question":"ok?"}', env)).exitCode).toBe(2);
      expect(await stageToolCommand('check', '', {})).toMatchObject({ exitCode: 1, output: expect.stringMatching(/SF_TOOL_SOCKET/) });
    } finally {
      await server.close();
    }
  });
});

describe('stopHook', () => {
  async function withServer(ok: boolean, fn: (env: NodeJS.ProcessEnv, server: ToolServer, calls: () => number) => Promise<void>) {
    let n = 0;
    const server = new ToolServer(makeHost(run, { selfCheck: async () => (n++, { ok, report: 'report.md is missing' }) }));
    const env = await server.start();
    try {
      await fn(env, server, () => n);
    } finally {
      await server.close();
    }
  }

  it('blocks once per turn when outputs are missing', async () => {
    await withServer(false, async (env, server) => {
      const first = JSON.parse(await stopHook('{"stop_hook_active": false}', env));
      expect(first).toEqual({ decision: 'block', reason: expect.stringContaining('report.md is missing') });
      expect(await stopHook('{}', env)).toBe('');
      server.beginTurn();
      expect(await stopHook('{}', env)).not.toBe('');
    });
  });

  it('makes no decision when stop_hook_active is true, whatever the outputs', async () => {
    await withServer(false, async (env, _s, calls) => {
      expect(await stopHook('{"stop_hook_active": true}', env)).toBe('');
      expect(calls()).toBe(0);
    });
  });

  it('makes no decision when the outputs are complete', async () => {
    await withServer(true, async (env) => expect(await stopHook('{}', env)).toBe(''));
  });

  it.each([
    ['malformed stdin', 'not json', true],
    ['a non-object payload', '[1]', true],
    ['a non-boolean stop_hook_active', '{"stop_hook_active": "yes"}', true],
    ['no tool server env', '{}', false],
  ])('fails open on %s', async (_n, stdin, withEnv) => {
    await withServer(false, async (env) => expect(await stopHook(stdin, withEnv ? env : {})).toBe(''));
  });

  it('fails open when the server is unreachable', async () => {
    expect(await stopHook('{}', { SF_TOOL_SOCKET: path.join(run.root, 'no.sock'), SF_TOOL_TOKEN: 't' })).toBe('');
  });
});
