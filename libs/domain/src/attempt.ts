/**
 * The attempt decider: what the agent-runner and the verifier record about one stage attempt.
 * Every command names its attempt; a command on an attempt that already moved past it is a no-op
 * (a redelivered job finds its work done), a command on an attempt that is not current is refused.
 */
import { CommandRefused } from './errors';
import type { StageEnvelope } from './envelope';
import { EVENT_VERSION, type AttemptFailureKind, type OperatorQuestion, type RunEvent } from './events';
import type { RunState, AttemptState } from './run-state';
import type { CheckResult } from './verification';

interface AttemptRef {
  readonly stageId: string;
  readonly attempt: number;
  readonly now: string;
}

export type AttemptCommand =
  | (AttemptRef & { readonly type: 'RecordBaseline'; readonly manifest: string })
  | (AttemptRef & { readonly type: 'AskOperator'; readonly exchangeId: string; readonly question: OperatorQuestion; readonly resume: { readonly [key: string]: unknown } })
  | (AttemptRef & { readonly type: 'RejectEnvelope'; readonly reason: string })
  | (AttemptRef & { readonly type: 'SendReminder'; readonly reminder: number; readonly lastRejection?: string })
  | (AttemptRef & { readonly type: 'RecordTurn'; readonly turn: number; readonly transcript: string; readonly toolCalls: number; readonly result: 'ended' | 'provider_error' | 'aborted' })
  | (AttemptRef & { readonly type: 'CaptureEnvelope'; readonly envelope: StageEnvelope; readonly checkoutSnapshot: string; readonly artifactsSnapshot: string })
  | (AttemptRef & { readonly type: 'FailAttempt'; readonly kind: AttemptFailureKind; readonly reason: string; readonly envelope?: StageEnvelope })
  | (AttemptRef & { readonly type: 'RecordVerification'; readonly checks: readonly CheckResult[]; readonly error?: string });

/** Failure reasons are kept short enough to read in a board (the spec caps provider errors at 500). */
export const MAX_REASON_CHARS = 500;
const cap = (text: string) => (text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS - 1)}…` : text);

export function findAttempt(state: RunState, stageId: string, n: number): AttemptState | undefined {
  return state.stages[stageId]?.attempts.find((a) => a.n === n);
}

export function decideAttempt(command: AttemptCommand, state: RunState): RunEvent[] {
  const attempt = findAttempt(state, command.stageId, command.attempt);
  if (!attempt) throw new CommandRefused('attempt.not_found', `no attempt ${command.attempt} of stage ${command.stageId} in run ${state.runId}`);
  const base = { v: EVENT_VERSION, runId: state.runId, at: command.now, stageId: command.stageId, attempt: command.attempt } as const;
  const open = attempt.phase === 'running' || attempt.phase === 'parked';
  switch (command.type) {
    case 'RecordBaseline':
      return attempt.baseline || !open ? [] : [{ ...base, type: 'CheckoutBaselineRecorded', manifest: command.manifest }];
    case 'AskOperator': {
      if (!open) return [];
      const stage = state.stages[command.stageId];
      if (stage.exchanges.some((x) => x.exchangeId === command.exchangeId)) return [];
      return [{ ...base, type: 'OperatorQuestionAsked', exchangeId: command.exchangeId, question: command.question, resume: command.resume }];
    }
    case 'RejectEnvelope':
      return open ? [{ ...base, type: 'EnvelopeRejected', reason: cap(command.reason) }] : [];
    case 'SendReminder':
      return open && attempt.reminders < command.reminder
        ? [{ ...base, type: 'ReminderSent', reminder: command.reminder, ...(command.lastRejection ? { lastRejection: command.lastRejection } : {}) }]
        : [];
    case 'RecordTurn': {
      const duplicate = (attempt.transcripts ?? []).some((t) => t.turn === command.turn && t.digest === command.transcript);
      return open && !duplicate
        ? [{ ...base, type: 'AgentTurnRecorded', turn: command.turn, transcript: command.transcript, toolCalls: command.toolCalls, result: command.result }]
        : [];
    }
    case 'CaptureEnvelope':
      return open
        ? [{ ...base, type: 'EnvelopeCaptured', envelope: command.envelope, checkoutSnapshot: command.checkoutSnapshot, artifactsSnapshot: command.artifactsSnapshot }]
        : [];
    case 'FailAttempt':
      return open
        ? [{ ...base, type: 'AttemptFailed', kind: command.kind, reason: cap(command.reason), ...(command.envelope ? { envelope: command.envelope } : {}) }]
        : [];
    case 'RecordVerification': {
      if (attempt.phase === 'verified') return [];
      if (attempt.phase !== 'captured') {
        throw new CommandRefused('verification.no_candidate', `attempt ${attempt.n} of ${command.stageId} has no captured envelope to verify`);
      }
      if (command.error !== undefined) {
        return [{ ...base, type: 'AttemptVerified', disposition: 'error', checks: command.checks, failure: cap(command.error) }];
      }
      const failedIds = command.checks.filter((c) => c.status !== 'passed').map((c) => c.id);
      return [
        {
          ...base,
          type: 'AttemptVerified',
          disposition: failedIds.length ? 'failed' : 'passed',
          checks: command.checks,
          failure: failedIds.length ? `failed checks: ${failedIds.join(', ')}` : null,
        },
      ];
    }
    default: {
      const unreachable: never = command;
      throw new Error(`unknown command ${(unreachable as { type: string }).type}`);
    }
  }
}
