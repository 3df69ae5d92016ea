/**
 * Operator decisions on a run: manual recovery (guidance or stop), retry, cancel, answers to
 * ask_operator. Each either yields events or is refused with the reason; a decision already made
 * is refused, never applied twice.
 */
import { CommandRefused, InvalidCommand } from './errors';
import { EVENT_VERSION, type FeedbackDecision, type OperatorAnswer, type RunEvent } from './events';
import { nextAttemptStarted, repairCapsule } from './recovery';
import { latestAttempt, pendingFeedbackDecision, pendingManualRecovery, stageDefinition, type RunState, type StageState } from './run-state';

export type OperatorCommand =
  | { readonly type: 'RecoverWithGuidance'; readonly stageId: string; readonly guidance: string; readonly by: string; readonly claimedBy?: string; readonly now: string }
  | { readonly type: 'StopManualRecovery'; readonly stageId: string; readonly by: string; readonly claimedBy?: string; readonly now: string }
  | { readonly type: 'RetryStage'; readonly stageId: string; readonly by: string; readonly claimedBy?: string; readonly now: string }
  | { readonly type: 'CancelRun'; readonly by: string; readonly claimedBy?: string; readonly reason?: string; readonly now: string }
  | { readonly type: 'AnswerOperator'; readonly stageId: string; readonly answer: OperatorAnswer; readonly by: string; readonly claimedBy?: string; readonly now: string }
  | {
      readonly type: 'DecideFeedbackLoop';
      /** The loop source stage. */
      readonly stageId: string;
      readonly decision: FeedbackDecision;
      /** Optional: when given it must name the parked loop. */
      readonly loopId?: string;
      readonly reason?: string;
      readonly by: string;
      readonly claimedBy?: string;
      readonly now: string;
    };

export const FEEDBACK_DECISIONS: readonly FeedbackDecision[] = ['extend', 'continue', 'abandon'];

function requireStage(state: RunState, stageId: string): StageState {
  if (!state.exists) throw new CommandRefused('run.not_found', `run ${state.runId} does not exist`);
  const stage = state.stages[stageId];
  if (!stage) throw new CommandRefused('stage.not_found', `run ${state.runId} has no stage ${stageId}`);
  return stage;
}

export function decideOperator(command: OperatorCommand, state: RunState): RunEvent[] {
  const base = { v: EVENT_VERSION, runId: state.runId, at: command.now } as const;
  const who = { by: command.by, ...(command.claimedBy ? { claimedBy: command.claimedBy } : {}) };
  switch (command.type) {
    case 'RecoverWithGuidance': {
      const stage = requireStage(state, command.stageId);
      const pending = requireManualDecision(state, stage);
      const definition = stageDefinition(state, stage.id)!;
      const policy = definition.on_verify_fail!;
      if (!command.guidance.trim()) throw new InvalidCommand('recovery.guidance_empty', 'guidance must not be empty');
      if (stage.attempts.length >= policy.max_attempts) {
        throw new CommandRefused(
          'recovery.attempts_exhausted',
          `stage ${stage.id} has used ${stage.attempts.length} of max_attempts ${policy.max_attempts}; only --stop is left`,
        );
      }
      const failed = stage.attempts.find((a) => a.n === pending.attempt)!;
      return [
        { ...base, type: 'ManualRecoveryDecided', stageId: stage.id, attempt: pending.attempt, decision: 'guidance', guidance: command.guidance, ...who },
        nextAttemptStarted(state, definition, failed, command.now, 'manual_retry', {
          capsule: repairCapsule(failed, true),
          guidance: command.guidance,
        }),
      ];
    }
    case 'StopManualRecovery': {
      const stage = requireStage(state, command.stageId);
      const pending = requireManualDecision(state, stage);
      return [{ ...base, type: 'ManualRecoveryDecided', stageId: stage.id, attempt: pending.attempt, decision: 'stop', ...who }];
    }
    case 'RetryStage': {
      const stage = requireStage(state, command.stageId);
      const definition = stageDefinition(state, stage.id)!;
      if (state.outcome === 'stopped') throw new CommandRefused('run.stopped', `run ${state.runId} was stopped`);
      if (stage.status === 'failed' && stage.instances?.length) {
        throw new CommandRefused('retry.clone_template', `stage ${stage.id} runs as clone instances; retry the failed instance instead`);
      }
      if (stage.status !== 'failed') {
        throw new CommandRefused('retry.not_failed', `stage ${stage.id} is ${stage.status}; only a failed stage can be retried`);
      }
      if (definition.on_verify_fail?.mode === 'manual' && stage.failureKind === 'verification') {
        throw new CommandRefused('retry.manual_recovery', `stage ${stage.id} uses manual recovery; use the recovery action instead of retry`);
      }
      if (stage.failureKind === 'verification') {
        throw new CommandRefused('retry.verification_failed', `stage ${stage.id} failed verification; its on_verify_fail policy decides what follows`);
      }
      const last = latestAttempt(stage);
      if (!last) throw new CommandRefused('retry.no_attempt', `stage ${stage.id} never started; nothing to retry`);
      return [
        { ...base, type: 'StageRetryRequested', stageId: stage.id, ...who },
        nextAttemptStarted(state, definition, last, command.now, 'retry', {}),
      ];
    }
    case 'CancelRun': {
      if (!state.exists) throw new CommandRefused('run.not_found', `run ${state.runId} does not exist`);
      if (state.outcome) throw new CommandRefused('run.finished', `run ${state.runId} already ${state.outcome}`);
      return [{ ...base, type: 'RunCancelled', ...who, ...(command.reason ? { reason: command.reason } : {}) }];
    }
    case 'AnswerOperator': {
      const stage = requireStage(state, command.stageId);
      if (state.outcome) throw new CommandRefused('run.finished', `run ${state.runId} already ${state.outcome}`);
      const open = stage.exchanges.find((x) => !x.answer);
      if (!open) throw new CommandRefused('answer.no_question', `stage ${stage.id} has no open operator question`);
      validateAnswer(open.question.kind, open.question.questions, command.answer);
      return [{ ...base, type: 'OperatorAnswered', stageId: stage.id, attempt: open.attempt, exchangeId: open.exchangeId, answer: command.answer, ...who }];
    }
    case 'DecideFeedbackLoop': {
      const stage = requireStage(state, command.stageId);
      if (state.outcome) throw new CommandRefused('run.finished', `run ${state.runId} already ${state.outcome}`);
      if (!FEEDBACK_DECISIONS.includes(command.decision)) {
        throw new InvalidCommand('feedback.decision_invalid', `decision must be one of ${FEEDBACK_DECISIONS.join(', ')}`);
      }
      if (!state.loops[stage.id]) throw new CommandRefused('feedback.no_loop', `stage ${stage.id} is not a feedback loop source`);
      const loop = pendingFeedbackDecision(state, stage.id);
      if (!loop || loop.parkedAttempt === undefined) {
        throw new CommandRefused('feedback.not_waiting', `stage ${stage.id} is not waiting for a feedback-loop decision`);
      }
      if (command.loopId !== undefined && command.loopId !== loop.loopId) {
        throw new CommandRefused('feedback.loop_mismatch', `stage ${stage.id} is parked on loop ${loop.loopId}, not ${command.loopId}`);
      }
      const reason = command.reason?.trim();
      const decided: RunEvent = {
        ...base,
        type: 'FeedbackLoopDecided',
        stageId: stage.id,
        attempt: loop.parkedAttempt,
        loopId: loop.loopId,
        decision: command.decision,
        ...(reason ? { reason } : {}),
        ...who,
      };
      if (command.decision !== 'abandon') return [decided];
      return [
        decided,
        {
          ...base,
          type: 'StageFailed',
          stageId: stage.id,
          attempt: loop.parkedAttempt,
          kind: 'feedback_loop_abandoned',
          reason: `feedback loop abandoned by ${command.by}${reason ? `: ${reason}` : ''}`,
        },
      ];
    }
    default: {
      const unreachable: never = command;
      throw new Error(`unknown command ${(unreachable as { type: string }).type}`);
    }
  }
}

function requireManualDecision(state: RunState, stage: StageState) {
  if (state.outcome === 'stopped') throw new CommandRefused('run.stopped', `run ${state.runId} was stopped`);
  const definition = stageDefinition(state, stage.id);
  if (definition?.on_verify_fail?.mode !== 'manual') {
    throw new CommandRefused('recovery.not_manual', `stage ${stage.id} does not use manual recovery`);
  }
  const pending = pendingManualRecovery(stage);
  if (pending) return pending;
  if (stage.manualRecoveries.length > 0) {
    throw new CommandRefused('recovery.already_decided', `the recovery decision for stage ${stage.id} was already made`);
  }
  throw new CommandRefused('recovery.not_verification_failure', `stage ${stage.id} has no failed verification awaiting a decision`);
}

function validateAnswer(
  kind: string,
  questions: readonly { readonly id: string; readonly kind: 'free_text' | 'confirm' }[] | undefined,
  answer: OperatorAnswer,
): void {
  const needsDecision = kind === 'confirm' || kind === 'artifact_backed';
  if (needsDecision && answer.decision !== 'accept' && answer.decision !== 'reject') {
    throw new InvalidCommand('answer.decision_required', `a ${kind} question needs a decision: accept or reject`);
  }
  if (kind === 'free_text' && !(answer.text ?? '').trim()) {
    throw new InvalidCommand('answer.text_required', 'a free_text question needs a text answer');
  }
  if (kind === 'multi_question') {
    const given = answer.answers ?? {};
    const expected = (questions ?? []).map((q) => q.id);
    const missing = expected.filter((id) => !(id in given));
    const extra = Object.keys(given).filter((id) => !expected.includes(id));
    if (missing.length || extra.length) {
      throw new InvalidCommand(
        'answer.questions_mismatch',
        `answers must cover exactly the sub-questions ${expected.join(', ')}${missing.length ? `; missing ${missing.join(', ')}` : ''}${extra.length ? `; unknown ${extra.join(', ')}` : ''}`,
      );
    }
    for (const q of questions ?? []) {
      const a = given[q.id];
      if (q.kind === 'confirm' && (typeof a !== 'object' || (a.decision !== 'accept' && a.decision !== 'reject'))) {
        throw new InvalidCommand('answer.decision_required', `sub-question ${q.id} needs {"decision": "accept"|"reject"}`);
      }
      if (q.kind === 'free_text' && (typeof a !== 'string' || !a.trim())) {
        throw new InvalidCommand('answer.text_required', `sub-question ${q.id} needs a text answer`);
      }
    }
  }
}
