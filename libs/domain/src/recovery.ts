/**
 * The recovery decider: what an attempt's outcome means for its stage under the stage's
 * on_verify_fail policy (000_*). Automatic repair follows only a failed verification of an
 * idempotent stage, while total attempts stay below max_attempts; never an agent failure, a
 * verifier error, or a side-effecting stage.
 */
import { EVENT_VERSION, type RepairCapsule, type RunEvent } from './events';
import type { StageDefinition } from './pipeline';
import { DEFAULT_ATTEMPT_TIMEOUT_MS } from './scheduler';
import { deadlineAfter } from './limits';
import { stageDefinition, type AttemptState, type RunState } from './run-state';

export interface ApplyRecoveryPolicy {
  readonly type: 'ApplyRecoveryPolicy';
  readonly stageId: string;
  readonly attempt: number;
  readonly now: string;
}

/** Evidence kept in a capsule per failed check; long strings are cut so the prompt stays compact. */
const CAPSULE_EVIDENCE_CHARS = 2000;

function compactEvidence(evidence: { readonly [key: string]: unknown }): { [key: string]: unknown } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(evidence)) {
    out[key] = typeof value === 'string' && value.length > CAPSULE_EVIDENCE_CHARS ? `${value.slice(-CAPSULE_EVIDENCE_CHARS)} [cut to last ${CAPSULE_EVIDENCE_CHARS} chars]` : value;
  }
  return out;
}

export function repairCapsule(attempt: AttemptState, withChecks: boolean): RepairCapsule {
  return {
    attempt: attempt.n,
    summary: attempt.failure ?? 'verification failed',
    failed_checks: withChecks
      ? attempt.checks
          .filter((c) => c.status !== 'passed')
          .map((c) => ({ id: c.id, type: c.type, status: c.status, message: c.message, evidence: compactEvidence(c.evidence) }))
      : [],
  };
}

export function nextAttemptStarted(
  state: RunState,
  stage: StageDefinition,
  from: AttemptState,
  now: string,
  reason: 'repair' | 'manual_retry' | 'retry',
  extra: { capsule?: RepairCapsule; guidance?: string },
): RunEvent {
  const attempts = state.stages[stage.id]?.attempts.length ?? 0;
  return {
    v: EVENT_VERSION,
    runId: state.runId,
    at: now,
    type: 'StageAttemptStarted',
    stageId: stage.id,
    attempt: attempts + 1,
    reason,
    input: from.input,
    upstream: from.upstream,
    deadlineAt: deadlineAfter(now, stage.timeout_ms ?? DEFAULT_ATTEMPT_TIMEOUT_MS),
    ...(extra.capsule ? { capsule: extra.capsule } : {}),
    ...(extra.guidance ? { guidance: extra.guidance } : {}),
  };
}

export function decideRecovery(command: ApplyRecoveryPolicy, state: RunState): RunEvent[] {
  const stage = state.stages[command.stageId];
  const definition = stageDefinition(state, command.stageId);
  if (!state.exists || state.outcome || !stage || !definition) return [];
  const attempt = stage.attempts.find((a) => a.n === command.attempt);
  // Only the latest attempt's outcome decides, once: the stage must still be in flight.
  if (!attempt || attempt !== stage.attempts[stage.attempts.length - 1]) return [];
  if (stage.status !== 'running') return [];
  const base = { v: EVENT_VERSION, runId: state.runId, at: command.now, stageId: stage.id, attempt: attempt.n } as const;
  if (attempt.phase === 'failed') {
    return [{ ...base, type: 'StageFailed', kind: 'agent', reason: attempt.failure ?? 'agent failed' }];
  }
  if (attempt.phase !== 'verified') return [];
  switch (attempt.disposition) {
    case 'passed':
      return [{ ...base, type: 'StageSucceeded', envelope: attempt.envelope! }];
    case 'error':
      return [{ ...base, type: 'StageFailed', kind: 'verification_error', reason: `verification error: ${attempt.failure ?? 'unknown'}` }];
    case 'failed':
      return decideFailedVerification(state, definition, attempt, command.now);
    case 'not_run':
      return [];
    default: {
      const unreachable: never = attempt.disposition;
      throw new Error(`unknown disposition ${String(unreachable)}`);
    }
  }
}

function decideFailedVerification(state: RunState, definition: StageDefinition, attempt: AttemptState, now: string): RunEvent[] {
  const policy = definition.on_verify_fail;
  const base = { v: EVENT_VERSION, runId: state.runId, at: now, stageId: definition.id, attempt: attempt.n } as const;
  const failed: RunEvent = { ...base, type: 'StageFailed', kind: 'verification', reason: `verification failed: ${attempt.failure ?? 'checks failed'}` };
  if (!policy) return [failed];
  if (policy.mode === 'manual') return [failed, { ...base, type: 'ManualRecoveryOpened' }];
  const attempts = state.stages[definition.id]?.attempts.length ?? 0;
  if (policy.retry_safety === 'side_effecting' || attempts >= policy.max_attempts) return [failed];
  return [
    nextAttemptStarted(state, definition, attempt, now, 'repair', {
      capsule: repairCapsule(attempt, policy.include_failed_checks),
    }),
  ];
}
