/**
 * The `exec` backend: an external agent CLI run in the checkout, one process per turn.
 *
 * Each turn: a ToolServer for the host is started; the command runs in its own process group in
 * the checkout (or the run directory when the stage has none) with the allow-listed environment,
 * the SF_* variables, SF_TOOL_URL/SF_TOOL_TOKEN, SF_TURN, SF_TURN_KIND (start|reminder|answer)
 * and SF_PROMPT_FILE; the turn's text (prompt, reminder or operator answer) is on stdin and in
 * that file. The agent reaches the stage tools through `sf stage emit|artifact|ask|check`.
 *
 * Guarantees: once an envelope is accepted or the session parks, the CLI gets `stopGraceMs` to
 * exit and is then killed with its whole group (so it cannot change the checkout after the
 * capture); on abort the group is killed at once and the turn is `aborted`; a non-zero exit with
 * no accepted envelope is a provider_error carrying the tail of stderr; the server and its token
 * live only for the turn, and the token never appears in the turn's result.
 *
 * With `stopHook: 'claude'`, each turn writes a Claude Code settings file next to the prompt
 * file (outside the checkout) registering `sf stage stop-hook` as its Stop hook, and appends
 * `--settings <file>` to the command.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { AgentBackend, AgentSession, TurnInput, TurnResult } from '../backend';
import { allowListedEnv } from '../tools/run-command';
import { defaultSfBin, installStopHook, type StopHookCli } from './stop-hook-settings';
import { ToolServer } from './tool-server';

export interface ExecBackendOptions {
  /** argv of the agent CLI, e.g. ['claude', '-p', '--output-format', 'json']. */
  readonly command: readonly string[];
  /** Names passed through from the runner's environment beyond the allow-list (e.g. the CLI's API key). */
  readonly passEnv?: readonly string[];
  /** Fixed extra environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly stopGraceMs?: number;
  /** Install `sf stage stop-hook` as this CLI's Stop hook each turn. */
  readonly stopHook?: StopHookCli;
  /** bin/sf.js the hook runs (default: `SF_BIN`, else this repository's). */
  readonly sfBin?: string;
}

const STDERR_TAIL = 2000;

export class ExecBackend implements AgentBackend {
  readonly name = 'exec';

  constructor(private readonly options: ExecBackendOptions) {
    if (!options.command.length) throw new Error('exec backend: command must name the agent CLI');
  }

  async startTurn(session: AgentSession): Promise<TurnResult> {
    const { host } = session;
    const server = new ToolServer(host);
    const toolEnv = await server.start();
    try {
      const attemptDir = path.dirname(host.artifactsDir);
      await fs.mkdir(attemptDir, { recursive: true });
      const promptFile = path.join(attemptDir, `turn-${session.turn}.prompt.md`);
      const text = turnText(session.input);
      await fs.writeFile(promptFile, text, 'utf8');
      const hookArgs = this.options.stopHook ? await installStopHook(this.options.stopHook, attemptDir, session.turn, this.options.sfBin ?? defaultSfBin()) : [];
      const passed: Record<string, string> = {};
      for (const name of this.options.passEnv ?? []) if (process.env[name] !== undefined) passed[name] = process.env[name]!;
      const env = allowListedEnv({
        ...passed,
        ...host.env(),
        ...toolEnv,
        SF_TURN: String(session.turn),
        SF_TURN_KIND: session.input.kind,
        SF_PROMPT_FILE: promptFile,
        ...this.options.env,
      });
      const result = await this.runCli(session, env, hookArgs, text, host.options.checkout ?? host.options.runDir);
      return withoutSecret(result, toolEnv.SF_TOOL_TOKEN);
    } finally {
      await server.close();
    }
  }

  private runCli(session: AgentSession, env: Record<string, string>, extraArgs: readonly string[], stdin: string, cwd: string): Promise<TurnResult> {
    const [file, ...command] = this.options.command;
    const args = [...command, ...extraArgs];
    return new Promise((resolve) => {
      let stderr = '';
      let stdout = '';
      let stopping = false;
      const child = spawn(file!, args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      const killGroup = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // gone
        }
      };
      const watch = setInterval(() => {
        if (!stopping && session.host.shouldStop) {
          stopping = true;
          setTimeout(killGroup, this.options.stopGraceMs ?? 5000).unref();
        }
      }, 50);
      const onAbort = () => killGroup();
      session.signal.addEventListener('abort', onAbort, { once: true });
      child.stdin.on('error', () => undefined);
      child.stdin.end(stdin);
      child.stdout.on('data', (c: Buffer) => (stdout = (stdout + c.toString('utf8')).slice(-STDERR_TAIL)));
      child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-STDERR_TAIL)));
      const done = (result: TurnResult) => {
        clearInterval(watch);
        session.signal.removeEventListener('abort', onAbort);
        killGroup();
        resolve(result);
      };
      child.once('error', (err) => done({ kind: 'provider_error', message: `cannot start agent command ${file}: ${err.message}` }));
      child.once('close', (code, signal) => {
        if (session.signal.aborted) return done({ kind: 'aborted' });
        if (code === 0 || session.host.shouldStop) return done({ kind: 'ended', text: stdout });
        done({ kind: 'provider_error', message: `agent command exited with ${code !== null ? `code ${code}` : `signal ${signal}`}: ${stderr.trim() || '(no stderr)'}` });
      });
    });
  }
}

function withoutSecret(result: TurnResult, secret: string): TurnResult {
  const scrub = (text: string) => text.split(secret).join('[REDACTED]');
  switch (result.kind) {
    case 'ended':
      return result.text === undefined ? result : { kind: 'ended', text: scrub(result.text) };
    case 'provider_error':
      return { kind: 'provider_error', message: scrub(result.message) };
    case 'aborted':
      return result;
    default: {
      const unreachable: never = result;
      throw new Error(`unknown turn result ${JSON.stringify(unreachable)}`);
    }
  }
}

function turnText(input: TurnInput): string {
  switch (input.kind) {
    case 'start':
      return `${input.prompt.system}\n\n${input.prompt.user}\n\nUse the stage tools through the sf stage commands: sf stage emit '<envelope json>', sf stage artifact '<{"path","content"}>', sf stage ask '<question json>', sf stage check.\n`;
    case 'reminder':
    case 'answer':
      return `${input.text}\n`;
    default: {
      const unreachable: never = input;
      throw new Error(`unknown turn input ${JSON.stringify(unreachable)}`);
    }
  }
}
