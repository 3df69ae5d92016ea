/**
 * The session driver: runs an attempt's turns until an envelope is accepted, the session parks,
 * or the attempt fails.
 *
 * Guarantees (001_* "When the agent stops without emitting"):
 *  - a turn that ends with no accepted envelope gets up to `maxReminders` (2) reminder turns,
 *    each quoting the last rejection, recorded through `recorder.onReminder` before it is sent;
 *    the count is per attempt (it survives a park/resume);
 *  - no reminder after a provider error, an abort (deadline → timeout, signal → cancelled), a
 *    park on ask_operator, or an accepted envelope (a `failure` emit is accepted and ends the
 *    session as agent_failure);
 *  - an accepted envelope wins over anything that happens after it in the same turn;
 *  - at the deadline the session's signal aborts and every process the tools started is killed;
 *    the driver does not wait for a backend that ignores the signal;
 *  - the host is closed (its processes killed) whenever the session returns.
 */
import { timerDelayMs, type Exchange, type OperatorQuestion, type StageDefinition, type StageEnvelope } from '@stageflow/domain';
import type { AgentBackend, AgentSession, JsonMemory, TurnInput, TurnResult } from './backend';
import type { Prompt } from './prompt';
import type { ToolHost } from './tools/host';

export type SessionFailureKind = 'agent_failure' | 'missing_emit' | 'provider_error' | 'timeout' | 'cancelled';

/** What OperatorQuestionAsked.resume records: enough to continue the session on any replica. */
export interface ResumeState {
  readonly backend: string;
  readonly turn: number;
  readonly remindersUsed: number;
  readonly memory: JsonMemory;
}

export type SessionOutcome =
  | { readonly kind: 'emitted'; readonly envelope: StageEnvelope }
  | { readonly kind: 'failed'; readonly failureKind: SessionFailureKind; readonly reason: string; readonly envelope?: StageEnvelope }
  | { readonly kind: 'parked'; readonly exchangeId: string; readonly question: OperatorQuestion; readonly resume: ResumeState };

export interface SessionRecorder {
  /** Before reminder n (1-based) is sent. Append ReminderSent here. */
  onReminder(n: number, lastRejection: string | undefined): void | Promise<void>;
  /** Optional transcript hook: after every turn. */
  onTurn?(turn: number, input: TurnInput, result: TurnResult): void | Promise<void>;
}

export interface RunSessionOptions {
  readonly backend: AgentBackend;
  readonly host: ToolHost;
  readonly stage: StageDefinition;
  readonly runId: string;
  readonly attempt: number;
  /** The assembled prompt (buildPrompt); used by the first turn of a fresh session. */
  readonly prompt: Prompt;
  readonly maxReminders?: number;
  /** Cancel (operator cancel, shutdown). */
  readonly signal?: AbortSignal;
  /** The attempt's recorded deadline (StageAttemptStarted.deadlineAt). */
  readonly deadlineAt?: Date | string | number;
  readonly recorder: SessionRecorder;
  /** Continue a parked session: its resume state and the now-answered exchange. */
  readonly resume?: { readonly state: ResumeState; readonly exchange: Exchange };
}

export const PROVIDER_ERROR_MAX = 500;

export async function runSession(opts: RunSessionOptions): Promise<SessionOutcome> {
  const { backend, host, recorder } = opts;
  const maxReminders = opts.maxReminders ?? 2;
  const abort = new AbortController();
  let timedOut = false;
  const onCancel = () => abort.abort();
  opts.signal?.addEventListener('abort', onCancel, { once: true });
  if (opts.signal?.aborted) abort.abort();
  const deadline = opts.deadlineAt === undefined ? undefined : new Date(opts.deadlineAt).getTime();
  const timer =
    deadline === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          abort.abort();
        }, timerDelayMs(deadline - Date.now()));
  abort.signal.addEventListener('abort', () => host.close(), { once: true });
  const aborted = new Promise<TurnResult>((resolve) => {
    if (abort.signal.aborted) resolve({ kind: 'aborted' });
    else abort.signal.addEventListener('abort', () => resolve({ kind: 'aborted' }), { once: true });
  });

  const memory: JsonMemory = opts.resume ? structuredClone(opts.resume.state.memory) : {};
  let turn = opts.resume ? opts.resume.state.turn : 0;
  let remindersUsed = opts.resume?.state.remindersUsed ?? 0;
  let input: TurnInput = opts.resume ? answerInput(opts.resume.exchange) : { kind: 'start', prompt: opts.prompt };

  const abortedOutcome = (): SessionOutcome =>
    timedOut
      ? { kind: 'failed', failureKind: 'timeout', reason: `timeout: the attempt passed its deadline${opts.stage.timeout_ms ? ` (timeout_ms ${opts.stage.timeout_ms})` : ''}` }
      : { kind: 'failed', failureKind: 'cancelled', reason: 'cancelled' };

  try {
    for (;;) {
      if (abort.signal.aborted) return abortedOutcome();
      turn += 1;
      const session: AgentSession = { runId: opts.runId, stage: opts.stage, attempt: opts.attempt, turn, input, host, signal: abort.signal, memory };
      const result = await Promise.race([runTurn(backend, session), aborted]);
      await recorder.onTurn?.(turn, input, result);

      const accepted = host.accepted;
      if (accepted) {
        return accepted.status === 'success'
          ? { kind: 'emitted', envelope: accepted }
          : { kind: 'failed', failureKind: 'agent_failure', reason: `agent reported failure: ${accepted.summary}`, envelope: accepted };
      }
      const parked = host.parked;
      if (parked) {
        return { kind: 'parked', exchangeId: parked.exchangeId, question: parked.question, resume: { backend: backend.name, turn, remindersUsed, memory } };
      }
      if (result.kind === 'aborted' || abort.signal.aborted) {
        if (!abort.signal.aborted) return { kind: 'failed', failureKind: 'cancelled', reason: 'cancelled: the agent turn was aborted' };
        return abortedOutcome();
      }
      if (result.kind === 'provider_error') {
        return { kind: 'failed', failureKind: 'provider_error', reason: truncate(`provider error: ${result.message}`, PROVIDER_ERROR_MAX) };
      }
      if (remindersUsed >= maxReminders) {
        const last = host.lastRejection;
        return { kind: 'failed', failureKind: 'missing_emit', reason: `missing emit_stage_envelope${last ? ` (last rejection: ${truncate(last, 300)})` : ''}` };
      }
      remindersUsed += 1;
      await recorder.onReminder(remindersUsed, host.lastRejection);
      input = { kind: 'reminder', n: remindersUsed, text: reminderText(remindersUsed, maxReminders, host.lastRejection) };
    }
  } finally {
    if (timer) clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onCancel);
    host.close();
  }
}

async function runTurn(backend: AgentBackend, session: AgentSession): Promise<TurnResult> {
  try {
    return await backend.startTurn(session);
  } catch (err) {
    // A backend defect is reported like a provider failure: no reminder would help.
    if (session.signal.aborted) return { kind: 'aborted' };
    return { kind: 'provider_error', message: `${session.host.stage.id}: backend ${backend.name} failed: ${(err as Error).message ?? String(err)}` };
  }
}

export function reminderText(n: number, max: number, lastRejection: string | undefined): string {
  return [
    `Reminder ${n} of ${max}: you ended your turn without an accepted emit_stage_envelope, so this stage is not finished.`,
    lastRejection ? `Your last emit was rejected: ${lastRejection}` : undefined,
    'Finish now: call emit_stage_envelope with status "success" (and a valid payload) or status "failure".',
  ]
    .filter(Boolean)
    .join('\n');
}

function answerInput(exchange: Exchange): TurnInput {
  if (!exchange.answer) throw new Error(`cannot resume: exchange ${exchange.exchangeId} has no answer`);
  return {
    kind: 'answer',
    exchangeId: exchange.exchangeId,
    question: exchange.question,
    answer: exchange.answer,
    text: `The operator answered your ${exchange.question.kind} question (${exchange.exchangeId}): ${JSON.stringify(exchange.answer)}`,
  };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}
