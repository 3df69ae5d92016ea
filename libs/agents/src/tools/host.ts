/**
 * ToolHost: the stage tool set of one attempt session, real implementations.
 *
 * Guarantees:
 *  - the first accepted emit wins; later emits are answered "already accepted" and change nothing;
 *  - a rejected emit (contract or emit-phase check) is a soft reject: an error result to the
 *    agent, recorded through `onRejected` before the result returns;
 *  - ask_operator exists only when the stage declares gate_kinds, accepts only those kinds, and
 *    parks the host: `parked` is set and `shouldStop` turns true;
 *  - every path tool is confined (see artifacts.ts / checkout-fs.ts); commands run in the sandbox
 *    (@stageflow/sandbox): scratch environment plus the SF_* values, writes only to the checkout,
 *    the attempt's artifact directory and a private tmp, a network only when the stage says
 *    `network: true`; they are killed by `close()` or by the session signal;
 *  - a tool failure is an error result for the agent, never an exception out of `call`.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Exchange, OperatorQuestion, StageDefinition, StageEnvelope } from '@stageflow/domain';
import { runEmitChecks, validateEmit, type ValidatePayload } from '@stageflow/envelope';
import { defaultSandbox, type Sandbox } from '@stageflow/sandbox';
import { parseQuestion } from './ask-operator';
import { artifactsDir, writeArtifact } from './artifacts';
import { CheckoutFs } from './checkout-fs';
import { relativeSegments } from './paths';
import { toolError, toolOk, ToolRefusal, type ToolResult } from './result';
import { askOperatorSpec, CHECK_OUTPUTS_SPEC, CODING_SPECS, EMIT_SPEC, WRITE_ARTIFACT_SPEC, type ToolName, type ToolSpec } from './schemas';

/** Each output stream of a command keeps its last 64 KiB. */
export const OUTPUT_CAP_BYTES = 64 * 1024;
export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
export const MAX_COMMAND_TIMEOUT_MS = 30 * 60_000;

/** What run_command (and a script `run` step) answers. */
export interface CommandResult {
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly timed_out: boolean;
  /** The sandbox limit that stopped the command (processes, open_files, file_size, memory), if told. */
  readonly limit: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdout_truncated: boolean;
  readonly stderr_truncated: boolean;
}

export interface SelfCheckResult {
  /** True when every required output is present, fresh and valid. */
  readonly ok: boolean;
  /** What is missing or invalid, for the agent (or "all required outputs present"). */
  readonly report: string;
}
/** The checks library's self-check (003_*), bound to this attempt by the caller. */
export type SelfCheck = () => Promise<SelfCheckResult>;

export interface ToolHostOptions {
  readonly runId: string;
  /** Absolute run directory; artifacts go to stages/<stageId>/attempts/<n>/artifacts below it. */
  readonly runDir: string;
  readonly stage: StageDefinition;
  readonly attempt: number;
  /** The checkout root. When set, the coding tools (read/write/list files, run_command) are offered. */
  readonly checkout?: string;
  readonly validatePayload: ValidatePayload;
  /** This attempt's exchanges so far (answered ones included), oldest first. */
  readonly exchanges: readonly Exchange[];
  /** false once the loop used its max_replays (a send_back emit is then rejected). */
  readonly loopAllowsSendBack?: boolean;
  /** Without it, check_outputs is not offered. */
  readonly selfCheck?: SelfCheck;
  /** Called (and awaited) for every rejected emit, before the agent sees the rejection. */
  readonly onRejected?: (reason: string) => void | Promise<void>;
  /** Deterministic by default: `<stageId>-a<attempt>-q<k>` (k = exchanges so far + 1). */
  readonly newExchangeId?: () => string;
  /** run_command's default timeout. */
  readonly commandTimeoutMs?: number;
  /** Extra environment for commands (merged after the SF_* variables). */
  readonly commandEnv?: Readonly<Record<string, string>>;
  /** Where commands run. Default: the process-wide sandbox (`defaultSandbox()`). */
  readonly sandbox?: Sandbox;
  /** Sees every call with its raw arguments and its result, after the call (the transcript's source). */
  readonly onToolCall?: (name: string, args: unknown, result: ToolResult) => void;
}

export interface ParkedQuestion {
  readonly exchangeId: string;
  readonly question: OperatorQuestion;
}

export class ToolHost {
  private acceptedEnvelope?: StageEnvelope;
  private parkedOn?: ParkedQuestion;
  private rejection?: string;
  private readonly controller = new AbortController();
  private readonly checkoutFs?: CheckoutFs;

  constructor(readonly options: ToolHostOptions) {
    if (options.checkout) this.checkoutFs = new CheckoutFs(options.checkout);
  }

  get stage(): StageDefinition {
    return this.options.stage;
  }
  /** The accepted envelope, once one is. */
  get accepted(): StageEnvelope | undefined {
    return this.acceptedEnvelope;
  }
  get parked(): ParkedQuestion | undefined {
    return this.parkedOn;
  }
  get lastRejection(): string | undefined {
    return this.rejection;
  }
  /** The agent must end its turn now: an envelope was accepted or the session parked. */
  get shouldStop(): boolean {
    return this.acceptedEnvelope !== undefined || this.parkedOn !== undefined;
  }
  get artifactsDir(): string {
    return artifactsDir(this.dirs);
  }

  /** SF_* variables every command, script step and exec agent sees. */
  env(): Record<string, string> {
    const o = this.options;
    return {
      SF_RUN_ID: o.runId,
      SF_STAGE_ID: o.stage.id,
      SF_ATTEMPT: String(o.attempt),
      SF_RUN_DIR: o.runDir,
      SF_ARTIFACTS_DIR: this.artifactsDir,
      ...(o.checkout ? { SF_CHECKOUT: o.checkout } : {}),
    };
  }

  /** The tools this stage offers, with their JSON schemas. */
  tools(): ToolSpec[] {
    const o = this.options;
    return [
      EMIT_SPEC,
      WRITE_ARTIFACT_SPEC,
      ...(o.stage.gate_kinds.length ? [askOperatorSpec(o.stage.gate_kinds)] : []),
      ...(o.selfCheck ? [CHECK_OUTPUTS_SPEC] : []),
      ...(o.checkout ? CODING_SPECS : []),
    ];
  }

  offers(name: string): name is ToolName {
    return this.tools().some((t) => t.name === name);
  }

  /** Runs one tool call. Never throws: every failure is an error result. Reported to `onToolCall`. */
  async call(name: string, args: unknown): Promise<ToolResult> {
    const result = await this.callTool(name, args);
    this.options.onToolCall?.(name, args, result);
    return result;
  }

  private async callTool(name: string, args: unknown): Promise<ToolResult> {
    if (!this.offers(name)) {
      return toolError(`unknown tool ${name}; this stage offers ${this.tools().map((t) => t.name).join(', ')}`);
    }
    if (this.parkedOn) {
      return toolError('the session is parked on an operator question; end your turn and wait for the answer');
    }
    try {
      // The emit validates its raw arguments itself (JSON text included) so its messages stay exact.
      if (name === 'emit_stage_envelope') return await this.emit(args);
      return await this.dispatch(name, asArgs(args));
    } catch (err) {
      if (err instanceof ToolRefusal) return toolError(`${name}: ${err.message}`);
      return toolError(`${name} failed: ${(err as Error).message ?? String(err)}`);
    }
  }

  /** Kills every sandbox the tools started. Idempotent. */
  close(): void {
    this.controller.abort();
  }

  private get dirs() {
    return { runDir: this.options.runDir, stageId: this.options.stage.id, attempt: this.options.attempt };
  }

  private async dispatch(name: ToolName, args: { readonly [k: string]: unknown }): Promise<ToolResult> {
    switch (name) {
      case 'emit_stage_envelope':
        return this.emit(args);
      case 'write_stage_artifact':
        return toolOk({ path: await writeArtifact(this.dirs, args.path, args.content) });
      case 'ask_operator':
        return this.ask(args);
      case 'check_outputs': {
        const result = await this.options.selfCheck!();
        return { content: result.report, isError: !result.ok };
      }
      case 'read_file':
        return toolOk(await this.coding().readFile(args.path));
      case 'write_file':
        return toolOk({ path: await this.coding().writeFile(args.path, args.content) });
      case 'list_files':
        return toolOk(await this.coding().listFiles(args.path ?? '.', args.recursive === true));
      case 'run_command':
        return this.runCommand(args);
      default: {
        const unreachable: never = name;
        return toolError(`unknown tool ${String(unreachable)}`);
      }
    }
  }

  private async emit(args: unknown): Promise<ToolResult> {
    if (this.acceptedEnvelope) return toolOk('already accepted: this attempt has its envelope; later emits are ignored. End your turn.');
    const ctx = {
      stage: this.options.stage,
      validatePayload: this.options.validatePayload,
      exchangesThisAttempt: this.options.exchanges,
      loopAllowsSendBack: this.options.loopAllowsSendBack,
    };
    const validation = validateEmit(args, ctx);
    const reason = validation.ok ? runEmitChecks(ctx.stage, validation.envelope, ctx.exchangesThisAttempt) : validation.error;
    if (reason !== null || !validation.ok) {
      const text = reason ?? 'rejected';
      this.rejection = text;
      await this.options.onRejected?.(text);
      return toolError(`${text}\nFix the envelope and call emit_stage_envelope again.`);
    }
    this.acceptedEnvelope = validation.envelope;
    return toolOk('envelope accepted; the attempt is complete. End your turn now.');
  }

  private async ask(args: { readonly [k: string]: unknown }): Promise<ToolResult> {
    const question = parseQuestion(args, this.options.stage.gate_kinds);
    for (const artifact of question.artifacts ?? []) {
      const stat = await fs.lstat(path.join(this.options.runDir, ...relativeSegments(artifact, 'artifact'))).catch(() => null);
      if (!stat?.isFile()) throw new ToolRefusal(`artifact ${artifact} is not a file of this run; write it with write_stage_artifact first`);
    }
    const exchangeId = this.options.newExchangeId?.() ?? `${this.options.stage.id}-a${this.options.attempt}-q${this.options.exchanges.length + 1}`;
    this.parkedOn = { exchangeId, question };
    return { content: JSON.stringify({ parked: true, exchange_id: exchangeId, note: 'End your turn now; the answer arrives when the session resumes.' }), isError: false, parked: true };
  }

  private async runCommand(args: { readonly [k: string]: unknown }): Promise<ToolResult> {
    if (typeof args.command !== 'string' || !args.command.trim()) throw new ToolRefusal('command must be a non-empty string');
    const result = await this.runShell(args.command, args.cwd, typeof args.timeout_ms === 'number' ? args.timeout_ms : undefined);
    return { content: JSON.stringify(result), isError: result.exit_code !== 0 };
  }

  /** A shell command in the checkout, in the sandbox (coding tools and the script backend's `run` step). */
  async runShell(command: string, cwd?: unknown, timeoutMs?: number): Promise<CommandResult> {
    const root = await this.coding().rootReal();
    const dir = cwd === undefined ? root : await this.coding().resolveExisting(cwd, true);
    const timeout = Math.min(Math.max(1, timeoutMs ?? this.options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS), MAX_COMMAND_TIMEOUT_MS);
    await fs.mkdir(this.artifactsDir, { recursive: true });
    const outcome = await (this.options.sandbox ?? defaultSandbox()).run({
      argv: ['bash', '-c', command],
      cwd: dir,
      env: { ...this.env(), ...this.options.commandEnv },
      writable: [root, this.artifactsDir],
      network: this.options.stage.network === true,
      timeoutMs: timeout,
      outputCapBytes: OUTPUT_CAP_BYTES,
      outputKeep: 'tail',
      signal: this.controller.signal,
    });
    return {
      exit_code: outcome.exit_code,
      signal: outcome.signal,
      timed_out: outcome.timed_out,
      limit: outcome.limit,
      stdout: outcome.stdout,
      stderr: outcome.start_error === undefined ? outcome.stderr : `could not start: ${outcome.start_error}`,
      stdout_truncated: outcome.stdout_truncated,
      stderr_truncated: outcome.stderr_truncated,
    };
  }

  private coding(): CheckoutFs {
    if (!this.checkoutFs) throw new ToolRefusal('this stage has no checkout');
    return this.checkoutFs;
  }
}

function asArgs(args: unknown): { readonly [k: string]: unknown } {
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      throw new ToolRefusal('arguments are not valid JSON');
    }
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return {};
  return args as { readonly [k: string]: unknown };
}
