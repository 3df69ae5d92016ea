/**
 * The `exec` backend: an external agent CLI run in the sandbox (@stageflow/sandbox), one process
 * per turn.
 *
 * Each turn: a ToolServer for the host listens on a Unix socket in a fresh directory, bound into
 * the sandbox at TOOL_DIR_INSIDE; the CLI runs in the checkout (or, without one, the attempt's
 * artifact directory) with the sandbox's scratch environment plus: the names in `passEnv` taken
 * from the agent-runner's own environment (its configuration, e.g. the CLI's API key and model
 * endpoint; never from the pipeline YAML), the SF_* variables, SF_TOOL_SOCKET/SF_TOOL_TOKEN,
 * SF_TURN, SF_TURN_KIND (start|reminder|answer) and SF_PROMPT_FILE; the turn's text (prompt,
 * reminder or operator answer) is on stdin and in that file (bound read-only). An `sf` command on
 * PATH (beside the socket) runs this installation's bin/sf.js (bound read-only), so `sf stage emit|artifact|ask|check`
 * reach the stage tools. The CLI has a network (user-mode, never the host loopback) when the stage
 * says `network: true` or the agent-runner's `network` option is set.
 *
 * Guarantees: once an envelope is accepted or the session parks, the CLI gets `stopGraceMs` to
 * exit and is then killed with its whole sandbox (so it cannot change the checkout after the
 * capture); on abort the sandbox is killed at once and the turn is `aborted`; a non-zero exit with
 * no accepted envelope is a provider_error carrying the tail of stderr; the server and its token
 * live only for the turn, and the token never appears in the turn's result.
 *
 * With `stopHook: 'claude'`, each turn writes a Claude Code settings file next to the prompt
 * file (outside the checkout) registering `sf stage stop-hook` as its Stop hook, and appends
 * `--settings <file>` to the command.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { defaultSandbox, type Bind, type Sandbox } from '@stageflow/sandbox';
import type { AgentBackend, AgentSession, TurnInput, TurnResult } from '../backend';
import { defaultSfBin, installStopHook, type StopHookCli } from './stop-hook-settings';
import { TOOL_SOCKET_NAME, ToolServer } from './tool-server';

export interface ExecBackendOptions {
  /** argv of the agent CLI, e.g. ['claude', '-p', '--output-format', 'json']. */
  readonly command: readonly string[];
  /** Names passed through from the runner's environment (e.g. the CLI's API key); nothing else is. */
  readonly passEnv?: readonly string[];
  /** Fixed extra environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly stopGraceMs?: number;
  /** Install `sf stage stop-hook` as this CLI's Stop hook each turn. */
  readonly stopHook?: StopHookCli;
  /** bin/sf.js the hook runs (default: `SF_BIN`, else this repository's). */
  readonly sfBin?: string;
  /** Give every turn a network (for a CLI that calls a remote model), whatever the stage says. */
  readonly network?: boolean;
  /** Default: the process-wide sandbox. */
  readonly sandbox?: Sandbox;
}

/** Where the tool server's socket directory appears inside the sandbox. */
export const TOOL_DIR_INSIDE = '/run/stageflow';
const OUTPUT_TAIL = 2000;
const TURN_TIMEOUT_MS = 24 * 60 * 60_000;

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
      await fs.mkdir(host.artifactsDir, { recursive: true });
      const promptFile = path.join(attemptDir, `turn-${session.turn}.prompt.md`);
      const text = turnText(session.input);
      await fs.writeFile(promptFile, text, 'utf8');
      const sfBin = this.options.sfBin ?? defaultSfBin();
      const hookArgs = this.options.stopHook ? await installStopHook(this.options.stopHook, attemptDir, session.turn, sfBin) : [];
      const passed: Record<string, string> = {};
      for (const name of this.options.passEnv ?? []) if (process.env[name] !== undefined) passed[name] = process.env[name]!;
      const sandbox = this.options.sandbox ?? defaultSandbox();
      const socketDir = server.socketDir!;
      // Without bubblewrap (SF_SANDBOX=off) there are no binds: the CLI sees the host's paths.
      const toolDir = (await sandbox.isolation()) === 'bwrap' ? TOOL_DIR_INSIDE : socketDir;
      await writeSfWrapper(socketDir, sfBin);
      const env = {
        ...passed,
        ...host.env(),
        SF_TOOL_SOCKET: path.join(toolDir, TOOL_SOCKET_NAME),
        SF_TOOL_TOKEN: toolEnv.SF_TOOL_TOKEN,
        SF_TURN: String(session.turn),
        SF_TURN_KIND: session.input.kind,
        SF_PROMPT_FILE: promptFile,
        ...this.options.env,
      };
      const install = installRoot(sfBin);
      const hasInstall = await fs.stat(install).then(
        () => true,
        () => false,
      );
      const readOnly: Bind[] = [promptFile, ...hookArgs.filter((arg) => path.isAbsolute(arg)), ...(hasInstall ? [install] : [])].map((src) => ({ src }));
      const result = await this.runCli(session, sandbox, env, hookArgs, text, readOnly, socketDir, toolDir);
      return withoutSecret(result, toolEnv.SF_TOOL_TOKEN);
    } finally {
      await server.close();
    }
  }

  private async runCli(
    session: AgentSession,
    sandbox: Sandbox,
    env: Record<string, string>,
    extraArgs: readonly string[],
    stdin: string,
    readOnly: readonly Bind[],
    socketDir: string,
    toolDir: string,
  ): Promise<TurnResult> {
    const { host } = session;
    const [file] = this.options.command;
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    session.signal.addEventListener('abort', onAbort, { once: true });
    if (session.signal.aborted) stop.abort();
    let stopping = false;
    const watch = setInterval(() => {
      if (!stopping && host.shouldStop) {
        stopping = true;
        setTimeout(() => stop.abort(), this.options.stopGraceMs ?? 5000).unref();
      }
    }, 50);
    try {
      const checkout = host.options.checkout;
      const outcome = await sandbox.run({
        argv: [...this.options.command, ...extraArgs],
        cwd: checkout ?? host.artifactsDir,
        env,
        writable: [...(checkout ? [checkout] : []), host.artifactsDir],
        binds: [...readOnly, { src: socketDir, dest: TOOL_DIR_INSIDE, writable: true }],
        pathPrepend: [toolDir],
        network: host.stage.network === true || this.options.network === true,
        // The session's signal ends the turn at the attempt deadline.
        timeoutMs: TURN_TIMEOUT_MS,
        stdin,
        outputCapBytes: OUTPUT_TAIL,
        outputKeep: 'tail',
        signal: stop.signal,
      });
      if (outcome.start_error !== undefined) return { kind: 'provider_error', message: `cannot start agent command ${file}: ${outcome.start_error}` };
      if (session.signal.aborted) return { kind: 'aborted' };
      if (outcome.exit_code === 0 || host.shouldStop) return { kind: 'ended', text: outcome.stdout };
      const how = outcome.timed_out ? 'ran past the attempt deadline' : outcome.exit_code !== null ? `exited with code ${outcome.exit_code}` : `exited with signal ${outcome.signal}`;
      return { kind: 'provider_error', message: `agent command ${how}: ${outcome.stderr.trim() || '(no stderr)'}` };
    } finally {
      clearInterval(watch);
      session.signal.removeEventListener('abort', onAbort);
    }
  }
}

/** The installation holding bin/sf.js (its node_modules and dist/ included), bound read-only. */
function installRoot(sfBin: string): string {
  return path.dirname(path.dirname(path.resolve(sfBin)));
}

/** `sf` on the sandbox's PATH (beside the socket): this Node binary running `sfBin`. */
async function writeSfWrapper(binDir: string, sfBin: string): Promise<void> {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  await fs.writeFile(path.join(binDir, 'sf'), `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(sfBin)} "$@"\n`, { mode: 0o755 });
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
