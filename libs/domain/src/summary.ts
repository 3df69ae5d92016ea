/**
 * The run summary: the JSON contract `sf run --json`, `sf runs show --json` and
 * `GET /api/runs/:runId` print. Later work extends it, never renames a field.
 */
import type { StageEnvelope } from './envelope';
import type { SkipReason } from './events';
import {
  loopReplaysRemaining,
  pendingFeedbackDecision,
  pendingManualRecovery,
  runStatus,
  type RunState,
  type RunStatus,
  type StageState,
  type StageStatus,
} from './run-state';
import type { CheckStatus, Disposition } from './verification';

export interface CheckSummary {
  readonly id: string;
  readonly type: string;
  readonly phase: 'after';
  readonly status: CheckStatus;
}

export interface AttemptSummary {
  readonly n: number;
  readonly reason: string;
  readonly disposition: Disposition;
  readonly failure: string | null;
  readonly checks: readonly CheckSummary[];
  readonly started_at: string;
  readonly finished_at: string | null;
}

export interface StageSummary {
  readonly id: string;
  readonly status: StageStatus;
  readonly attempts: readonly AttemptSummary[];
  readonly skip_reason?: SkipReason;
  readonly skip_detail?: string;
  readonly failure?: string;
  /** Present while the stage waits on an operator: what is awaited. */
  readonly waiting_for?: 'answer' | 'recovery_decision' | 'feedback_decision';
  /** Clone Instance: the clone child it was minted from. */
  readonly clone_of?: string;
  /** Minted clone child: its instance ids in Clone Array order (listed right after it). */
  readonly instances?: readonly string[];
  /** Feedback loop source: replays taken and allowed. */
  readonly feedback_loop?: {
    readonly loop_id: string;
    readonly target: string;
    readonly replays: number;
    readonly max_replays: number;
    readonly remaining_replays: number;
  };
  /** With `--include stages`: the envelope the stage succeeded with (or its last emitted one). */
  readonly envelope?: StageEnvelope | null;
}

export interface RunSummary {
  readonly run_id: string;
  readonly pipeline: string;
  readonly status: RunStatus;
  readonly reason?: string;
  readonly started_at: string;
  readonly finished_at: string | null;
  readonly labels: { readonly [key: string]: string };
  readonly stages: readonly StageSummary[];
  /** Verdicts and operator decisions refused for their signature (never applied); absent when none. */
  readonly security?: readonly SecurityNotice[];
}

export interface SecurityNotice {
  readonly at: string;
  /** The refused event's type, e.g. `AttemptVerified`. */
  readonly refused: string;
  readonly stage?: string;
  readonly attempt?: number;
  readonly kid?: string;
  readonly reason: string;
}

export function securityNotices(state: Pick<RunState, 'refusals'>): SecurityNotice[] {
  return (state.refusals ?? []).map((r) => ({
    at: r.at,
    refused: r.refusedType,
    ...(r.stageId !== undefined ? { stage: r.stageId } : {}),
    ...(r.attempt !== undefined ? { attempt: r.attempt } : {}),
    ...(r.kid !== undefined ? { kid: r.kid } : {}),
    reason: r.reason,
  }));
}

export function summarizeRun(state: RunState, options: { includeEnvelopes?: boolean } = {}): RunSummary {
  return {
    run_id: state.runId,
    pipeline: state.pipeline.id,
    status: runStatus(state),
    ...(state.outcomeReason ? { reason: state.outcomeReason } : {}),
    started_at: state.requestedAt,
    finished_at: state.finishedAt ?? null,
    labels: state.labels,
    stages: state.pipeline.stages
      .flatMap((definition) => {
        const stage = state.stages[definition.id];
        return [stage, ...(stage.instances ?? []).map((id) => state.stages[id])].filter((s): s is StageState => Boolean(s));
      })
      .map((stage) => {
      const loop = state.loops[stage.id];
      const waitingFor =
        stage.status === 'waiting'
          ? pendingFeedbackDecision(state, stage.id)
            ? 'feedback_decision'
            : 'answer'
          : pendingManualRecovery(stage)
            ? 'recovery_decision'
            : undefined;
      const lastEnvelope = [...stage.attempts].reverse().find((a) => a.envelope)?.envelope;
      return {
        id: stage.id,
        status: stage.status,
        attempts: stage.attempts.map((a) => ({
          n: a.n,
          reason: a.reason,
          disposition: a.disposition,
          failure: a.failure,
          checks: a.checks.map((c) => ({ id: c.id, type: c.type, phase: c.phase, status: c.status })),
          started_at: a.startedAt,
          finished_at: a.finishedAt ?? null,
        })),
        ...(stage.skipReason ? { skip_reason: stage.skipReason } : {}),
        ...(stage.skipDetail ? { skip_detail: stage.skipDetail } : {}),
        ...(stage.failure ? { failure: stage.failure } : {}),
        ...(waitingFor ? { waiting_for: waitingFor } : {}),
        ...(stage.cloneOf ? { clone_of: stage.cloneOf } : {}),
        ...(stage.instances?.length ? { instances: stage.instances } : {}),
        ...(loop
          ? {
              feedback_loop: {
                loop_id: loop.loopId,
                target: loop.target,
                replays: loop.replays,
                max_replays: loop.maxReplays + loop.extensions,
                remaining_replays: loopReplaysRemaining(state, stage.id),
              },
            }
          : {}),
        ...(options.includeEnvelopes ? { envelope: stage.envelope ?? lastEnvelope ?? null } : {}),
      };
    }),
    ...(state.refusals?.length ? { security: securityNotices(state) } : {}),
  };
}
