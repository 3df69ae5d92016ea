/**
 * The state of one run, folded from its events. `evolve` is total and pure: applying the same
 * event stream always yields the same state, and an event whose effect is already present (a
 * redelivered duplicate) leaves it unchanged.
 */
import type { StageEnvelope } from './envelope';
import type {
  AttemptFailureKind,
  AttemptReason,
  Checkout,
  OperatorAnswer,
  OperatorQuestion,
  RepairCapsule,
  RunEvent,
  SkipReason,
  StageFailureKind,
} from './events';
import type { PipelineDefinition, StageDefinition } from './pipeline';
import type { CheckResult, Disposition } from './verification';

export type RunStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'stopped';
export type StageStatus = 'pending' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped';

export interface Exchange {
  readonly exchangeId: string;
  readonly attempt: number;
  readonly question: OperatorQuestion;
  readonly askedAt: string;
  readonly resume: { readonly [key: string]: unknown };
  readonly answer?: OperatorAnswer;
  readonly answeredAt?: string;
  readonly answeredBy?: string;
}

export type AttemptPhase = 'running' | 'parked' | 'captured' | 'verified' | 'failed';

export interface AttemptState {
  readonly n: number;
  readonly reason: AttemptReason;
  readonly startedAt: string;
  readonly deadlineAt: string;
  readonly input: { readonly [key: string]: unknown };
  readonly upstream: { readonly [stageId: string]: StageEnvelope };
  readonly capsule?: RepairCapsule;
  readonly guidance?: string;
  readonly phase: AttemptPhase;
  readonly baseline?: string;
  readonly envelope?: StageEnvelope;
  readonly checkoutSnapshot?: string;
  readonly artifactsSnapshot?: string;
  readonly disposition: Disposition;
  readonly checks: readonly CheckResult[];
  readonly failure: string | null;
  readonly failureKind?: AttemptFailureKind;
  readonly rejections: readonly string[];
  readonly reminders: number;
  readonly finishedAt?: string;
}

export interface ManualRecovery {
  readonly attempt: number;
  readonly openedAt: string;
  readonly decision?: 'guidance' | 'stop';
  readonly guidance?: string;
  readonly decidedBy?: string;
}

export interface StageState {
  readonly id: string;
  readonly status: StageStatus;
  readonly attempts: readonly AttemptState[];
  readonly exchanges: readonly Exchange[];
  readonly skipReason?: SkipReason;
  readonly skipDetail?: string;
  readonly failureKind?: StageFailureKind;
  readonly failure?: string;
  /** The envelope the stage succeeded with. */
  readonly envelope?: StageEnvelope;
  /** Every manual decision opened on this stage, oldest first. */
  readonly manualRecoveries: readonly ManualRecovery[];
  readonly startedAt?: string;
  readonly finishedAt?: string;
}

export interface RunState {
  readonly exists: boolean;
  readonly runId: string;
  readonly pipeline: PipelineDefinition;
  readonly input: { readonly [key: string]: unknown };
  readonly checkout: Checkout;
  readonly labels: { readonly [key: string]: string };
  readonly idempotencyKey?: string;
  readonly requestedAt: string;
  readonly finishedAt?: string;
  /** Terminal outcome once decided; `running`/`waiting` are derived (see runStatus). */
  readonly outcome?: 'succeeded' | 'failed' | 'stopped';
  readonly outcomeReason?: string;
  readonly stages: { readonly [stageId: string]: StageState };
  /** Number of events folded. */
  readonly version: number;
}

export const initialRunState = (): RunState => ({
  exists: false,
  runId: '',
  pipeline: { id: '', stages: [] },
  input: {},
  checkout: { kind: 'fresh' },
  labels: {},
  requestedAt: '',
  stages: {},
  version: 0,
});

const emptyStage = (id: string): StageState => ({
  id,
  status: 'pending',
  attempts: [],
  exchanges: [],
  manualRecoveries: [],
});

function withStage(state: RunState, stageId: string, update: (stage: StageState) => StageState): RunState {
  const stage = state.stages[stageId] ?? emptyStage(stageId);
  return { ...state, stages: { ...state.stages, [stageId]: update(stage) } };
}

function withAttempt(
  state: RunState,
  stageId: string,
  n: number,
  update: (attempt: AttemptState, stage: StageState) => { attempt: AttemptState; stage?: Partial<StageState> },
): RunState {
  return withStage(state, stageId, (stage) => {
    const index = stage.attempts.findIndex((a) => a.n === n);
    if (index < 0) return stage;
    const { attempt, stage: stagePatch } = update(stage.attempts[index], stage);
    const attempts = stage.attempts.slice();
    attempts[index] = attempt;
    return { ...stage, ...stagePatch, attempts };
  });
}

export function evolve(state: RunState, event: RunEvent): RunState {
  const next = evolveOnce(state, event);
  return next === state ? state : { ...next, version: state.version + 1 };
}

function evolveOnce(state: RunState, event: RunEvent): RunState {
  switch (event.type) {
    case 'RunRequested':
      if (state.exists) return state;
      return {
        ...state,
        exists: true,
        runId: event.runId,
        pipeline: event.pipeline,
        input: event.input,
        checkout: event.checkout,
        labels: event.labels,
        idempotencyKey: event.idempotencyKey,
        requestedAt: event.at,
        stages: Object.fromEntries(event.pipeline.stages.map((s) => [s.id, emptyStage(s.id)])),
      };
    case 'StageAttemptStarted':
      return withStage(state, event.stageId, (stage) => {
        if (stage.attempts.some((a) => a.n === event.attempt)) return stage;
        const attempt: AttemptState = {
          n: event.attempt,
          reason: event.reason,
          startedAt: event.at,
          deadlineAt: event.deadlineAt,
          input: event.input,
          upstream: event.upstream,
          capsule: event.capsule,
          guidance: event.guidance,
          phase: 'running',
          disposition: 'not_run',
          checks: [],
          failure: null,
          rejections: [],
          reminders: 0,
        };
        return {
          ...stage,
          status: 'running',
          failure: undefined,
          failureKind: undefined,
          startedAt: stage.startedAt ?? event.at,
          finishedAt: undefined,
          attempts: [...stage.attempts, attempt],
        };
      });
    case 'CheckoutBaselineRecorded':
      return withAttempt(state, event.stageId, event.attempt, (a) => ({ attempt: a.baseline ? a : { ...a, baseline: event.manifest } }));
    case 'OperatorQuestionAsked':
      return withStage(state, event.stageId, (stage) => {
        if (stage.exchanges.some((x) => x.exchangeId === event.exchangeId)) return stage;
        const exchange: Exchange = {
          exchangeId: event.exchangeId,
          attempt: event.attempt,
          question: event.question,
          askedAt: event.at,
          resume: event.resume,
        };
        const attempts = stage.attempts.map((a) => (a.n === event.attempt ? { ...a, phase: 'parked' as const } : a));
        return { ...stage, status: 'waiting', exchanges: [...stage.exchanges, exchange], attempts };
      });
    case 'OperatorAnswered':
      return withStage(state, event.stageId, (stage) => {
        const exchanges = stage.exchanges.map((x) =>
          x.exchangeId === event.exchangeId && !x.answer
            ? { ...x, answer: event.answer, answeredAt: event.at, answeredBy: event.by }
            : x,
        );
        const attempts = stage.attempts.map((a) =>
          a.n === event.attempt && a.phase === 'parked' ? { ...a, phase: 'running' as const } : a,
        );
        return { ...stage, status: stage.status === 'waiting' ? 'running' : stage.status, exchanges, attempts };
      });
    case 'EnvelopeRejected':
      return withAttempt(state, event.stageId, event.attempt, (a) => ({
        attempt: { ...a, rejections: [...a.rejections, event.reason] },
      }));
    case 'ReminderSent':
      return withAttempt(state, event.stageId, event.attempt, (a) => ({
        attempt: { ...a, reminders: Math.max(a.reminders, event.reminder) },
      }));
    case 'EnvelopeCaptured':
      return withAttempt(state, event.stageId, event.attempt, (a) =>
        a.envelope
          ? { attempt: a }
          : {
              attempt: {
                ...a,
                phase: 'captured',
                envelope: event.envelope,
                checkoutSnapshot: event.checkoutSnapshot,
                artifactsSnapshot: event.artifactsSnapshot,
              },
            },
      );
    case 'AttemptFailed':
      return withAttempt(state, event.stageId, event.attempt, (a) =>
        a.phase === 'failed' || a.phase === 'verified'
          ? { attempt: a }
          : {
              attempt: {
                ...a,
                phase: 'failed',
                envelope: event.envelope ?? a.envelope,
                failure: event.reason,
                failureKind: event.kind,
                finishedAt: event.at,
              },
            },
      );
    case 'AttemptVerified':
      return withAttempt(state, event.stageId, event.attempt, (a) =>
        a.phase === 'verified'
          ? { attempt: a }
          : {
              attempt: {
                ...a,
                phase: 'verified',
                disposition: event.disposition,
                checks: event.checks,
                failure: event.failure,
                finishedAt: event.at,
              },
            },
      );
    case 'StageSucceeded':
      return withStage(state, event.stageId, (stage) => ({
        ...stage,
        status: 'succeeded',
        envelope: event.envelope,
        finishedAt: event.at,
      }));
    case 'StageFailed':
      return withStage(state, event.stageId, (stage) => ({
        ...stage,
        status: 'failed',
        failureKind: event.kind,
        failure: event.reason,
        finishedAt: event.at,
      }));
    case 'ManualRecoveryOpened':
      return withStage(state, event.stageId, (stage) =>
        stage.manualRecoveries.some((m) => m.attempt === event.attempt)
          ? stage
          : { ...stage, manualRecoveries: [...stage.manualRecoveries, { attempt: event.attempt, openedAt: event.at }] },
      );
    case 'ManualRecoveryDecided':
      return withStage(state, event.stageId, (stage) => ({
        ...stage,
        manualRecoveries: stage.manualRecoveries.map((m) =>
          m.attempt === event.attempt && !m.decision
            ? { ...m, decision: event.decision, guidance: event.guidance, decidedBy: event.by }
            : m,
        ),
      }));
    case 'StageRetryRequested': {
      // A retry reopens a failed run: stages skipped only because of the failure go back to
      // pending, and the scheduler decides their fate again.
      const cascaded = new Set(['parent_failed', 'parent_skipped', 'all_parents_skipped']);
      const stages = Object.fromEntries(
        Object.entries(state.stages).map(([id, s]) => [
          id,
          s.status === 'skipped' && s.skipReason && cascaded.has(s.skipReason)
            ? { ...s, status: 'pending' as const, skipReason: undefined, skipDetail: undefined, finishedAt: undefined }
            : s,
        ]),
      );
      return {
        ...state,
        stages,
        ...(state.outcome === 'failed' ? { outcome: undefined, outcomeReason: undefined, finishedAt: undefined } : {}),
      };
    }
    case 'StageSkipped':
      return withStage(state, event.stageId, (stage) =>
        stage.status === 'skipped'
          ? stage
          : { ...stage, status: 'skipped', skipReason: event.reason, skipDetail: event.detail, finishedAt: event.at },
      );
    case 'RunSucceeded':
      return state.outcome ? state : { ...state, outcome: 'succeeded', finishedAt: event.at };
    case 'RunFailed':
      return state.outcome ? state : { ...state, outcome: 'failed', outcomeReason: event.reason, finishedAt: event.at };
    case 'RunCancelled':
      return state.outcome
        ? state
        : { ...state, outcome: 'stopped', outcomeReason: event.reason ?? `cancelled by ${event.by}`, finishedAt: event.at };
    default: {
      const unreachable: never = event;
      throw new Error(`unknown event ${(unreachable as { type: string }).type}`);
    }
  }
}

export const foldRun = (events: readonly RunEvent[]): RunState => events.reduce(evolve, initialRunState());

export function stageDefinition(state: RunState, stageId: string): StageDefinition | undefined {
  return state.pipeline.stages.find((s) => s.id === stageId);
}

export function latestAttempt(stage: StageState): AttemptState | undefined {
  return stage.attempts[stage.attempts.length - 1];
}

/** A manual decision is pending: the stage failed verification and nobody has decided yet. */
export function pendingManualRecovery(stage: StageState): ManualRecovery | undefined {
  return stage.manualRecoveries.find((m) => !m.decision);
}

export function runStatus(state: RunState): RunStatus {
  if (state.outcome) return state.outcome;
  const stages = Object.values(state.stages);
  if (stages.some((s) => s.status === 'waiting' || pendingManualRecovery(s))) return 'waiting';
  return 'running';
}
