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
  FeedbackDecision,
  FeedbackLoopContext,
  OperatorAnswer,
  OperatorQuestion,
  RepairCapsule,
  RunEvent,
  SkipReason,
  StageFailureKind,
} from './events';
import type { PipelineDefinition, StageDefinition } from './pipeline';
import { refusalOf, signatureProblem } from './signatures';
import type { CheckResult, Disposition } from './verification';

export type RunStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'stopped' | 'error';
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
  readonly loopContext?: FeedbackLoopContext;
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
  /** `at` of each rejection, parallel to `rejections`: a redelivered rejection is recognised. */
  readonly rejectedAt?: readonly string[];
  readonly reminders: number;
  /** Each recorded turn's transcript blob, in recording order; absent before the first. */
  readonly transcripts?: readonly AttemptTranscript[];
  readonly finishedAt?: string;
}

export interface AttemptTranscript {
  readonly turn: number;
  readonly digest: string;
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
  /** Clone Instance: the clone child (template) stage it was minted from. */
  readonly cloneOf?: string;
  /** Clone Instance: 1-based position in the Clone Array. */
  readonly cloneIndex?: number;
  /** Clone Instance: its array element, which is its input. */
  readonly cloneItem?: { readonly [key: string]: unknown };
  /**
   * Clone child template, once minted: its instance ids in array order. While set, the template
   * never runs itself; its status is derived from its instances (see settleCloneTemplates).
   */
  readonly instances?: readonly string[];
}

export interface LoopDecisionRecord {
  readonly attempt: number;
  readonly decision: FeedbackDecision;
  readonly reason?: string;
  readonly by: string;
  readonly at: string;
}

/** A feedback loop, keyed by its source stage. */
export interface LoopState {
  readonly loopId: string;
  readonly source: string;
  readonly target: string;
  readonly maxReplays: number;
  readonly onMaxReplays: 'require_continue' | 'wait_for_human';
  /** Accepted send_backs so far. */
  readonly replays: number;
  /** Replays an operator added with `extend`. */
  readonly extensions: number;
  /** Source attempt whose send_back has been acted on (replayed, parked, or failed). */
  readonly handledAttempt?: number;
  /** Source attempt parked for an operator decision; cleared by the decision. */
  readonly parkedAttempt?: number;
  /** Source attempt whose send_back an operator turned into continue. */
  readonly continuedAttempt?: number;
  /** The replay in progress: route stages started while it is set get this context. */
  readonly active?: FeedbackLoopContext;
  readonly decisions: readonly LoopDecisionRecord[];
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
  readonly outcome?: 'succeeded' | 'failed' | 'stopped' | 'error';
  readonly outcomeReason?: string;
  readonly stages: { readonly [stageId: string]: StageState };
  /** Feedback loops by source stage id. */
  readonly loops: { readonly [sourceId: string]: LoopState };
  /** Verdicts and operator decisions refused for their signature, oldest first; absent when none. */
  readonly refusals?: readonly SignatureRefusal[];
  /** Number of events folded. */
  readonly version: number;
}

/** A refused verdict or operator decision, as `sf runs show` reports it. */
export interface SignatureRefusal {
  readonly at: string;
  readonly refusedType: string;
  readonly stageId?: string;
  readonly attempt?: number;
  readonly kid?: string;
  readonly reason: string;
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
  loops: {},
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
  return next === state ? state : { ...settleCloneTemplates(next), version: state.version + 1 };
}

const ACTIVE_STATUSES: ReadonlySet<StageStatus> = new Set(['pending', 'running', 'waiting']);

function everyStageSettledWell(state: RunState): boolean {
  return Object.values(state.stages).every((stage) => stage.status === 'succeeded' || stage.status === 'skipped');
}

/**
 * A minted clone template's status follows its instances: `running` while any instance can still
 * move (or waits on a manual decision), `succeeded` when all succeeded, otherwise `failed`.
 * Deterministic in the instance states, so folding stays idempotent.
 */
export function settleCloneTemplates(state: RunState): RunState {
  let stages = state.stages;
  for (const definition of state.pipeline.stages) {
    if (definition.clone?.role !== 'child') continue;
    const template = stages[definition.id];
    if (!template?.instances?.length) continue;
    const instances = template.instances.map((id) => stages[id]).filter((s): s is StageState => Boolean(s));
    const active = instances.some((s) => ACTIVE_STATUSES.has(s.status) || pendingManualRecovery(s));
    const finishedAt = active ? undefined : instances.map((s) => s.finishedAt ?? '').sort().at(-1) || undefined;
    const notSucceeded = instances.filter((s) => s.status !== 'succeeded').map((s) => `${s.id} ${s.status}`);
    const status: StageStatus = active ? 'running' : notSucceeded.length ? 'failed' : 'succeeded';
    const failure = status === 'failed' ? `clone instance ${notSucceeded.join(', ')}` : undefined;
    if (template.status === status && template.failure === failure && template.finishedAt === finishedAt) continue;
    stages = {
      ...stages,
      [definition.id]: {
        ...template,
        status,
        failure,
        failureKind: status === 'failed' ? 'clone_instance_failed' : undefined,
        finishedAt,
      },
    };
  }
  return stages === state.stages ? state : { ...state, stages };
}

/** A stage going back to pending for a loop replay: attempts and decisions stay, outcome goes. */
function resetForReplay(stage: StageState): StageState {
  return {
    ...stage,
    status: 'pending',
    envelope: undefined,
    skipReason: undefined,
    skipDetail: undefined,
    failure: undefined,
    failureKind: undefined,
    finishedAt: undefined,
    instances: undefined,
  };
}

function withLoop(state: RunState, sourceId: string, update: (loop: LoopState) => LoopState): RunState {
  const loop = state.loops[sourceId];
  if (!loop) return state;
  const next = update(loop);
  return next === loop ? state : { ...state, loops: { ...state.loops, [sourceId]: next } };
}

function evolveOnce(state: RunState, event: RunEvent): RunState {
  const problem = signatureProblem(state, event);
  if (problem) return evolveOnce(state, refusalOf(event, problem));
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
        loops: Object.fromEntries(
          event.pipeline.stages.flatMap((s) =>
            s.loop
              ? [
                  [
                    s.id,
                    {
                      loopId: loopIdOf(s.id, s.loop.to),
                      source: s.id,
                      target: s.loop.to,
                      maxReplays: s.loop.max_replays,
                      onMaxReplays: s.loop.on_max_replays,
                      replays: 0,
                      extensions: 0,
                      decisions: [],
                    } satisfies LoopState,
                  ],
                ]
              : [],
          ),
        ),
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
          loopContext: event.loopContext,
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
        const asked = stage.exchanges.find((x) => x.exchangeId === event.exchangeId && !x.answer);
        // Time parked on an operator question does not count against the attempt's timeout_ms:
        // the deadline moves by the wait.
        const waitedMs = asked ? Math.max(0, Date.parse(event.at) - Date.parse(asked.askedAt)) : 0;
        const attempts = stage.attempts.map((a) =>
          a.n === event.attempt && a.phase === 'parked'
            ? { ...a, phase: 'running' as const, deadlineAt: new Date(Date.parse(a.deadlineAt) + waitedMs).toISOString() }
            : a,
        );
        return { ...stage, status: stage.status === 'waiting' ? 'running' : stage.status, exchanges, attempts };
      });
    case 'EnvelopeRejected':
      return withAttempt(state, event.stageId, event.attempt, (a) => {
        const at = a.rejectedAt ?? [];
        if (a.rejections.some((r, i) => r === event.reason && at[i] === event.at)) return { attempt: a };
        return { attempt: { ...a, rejections: [...a.rejections, event.reason], rejectedAt: [...at, event.at] } };
      });
    case 'ReminderSent':
      return withAttempt(state, event.stageId, event.attempt, (a) => ({
        attempt: { ...a, reminders: Math.max(a.reminders, event.reminder) },
      }));
    case 'AgentTurnRecorded':
      return withAttempt(state, event.stageId, event.attempt, (a) => {
        const known = a.transcripts ?? [];
        if (known.some((t) => t.turn === event.turn && t.digest === event.transcript)) return { attempt: a };
        return { attempt: { ...a, transcripts: [...known, { turn: event.turn, digest: event.transcript }] } };
      });
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
    case 'StageSucceeded': {
      // Only a passed verdict passes a stage: a StageSucceeded for any other attempt changes nothing,
      // and the stage keeps the envelope that verdict was about.
      const passed = state.stages[event.stageId]?.attempts.find((a) => a.n === event.attempt);
      if (passed?.phase !== 'verified' || passed.disposition !== 'passed' || !passed.envelope) return state;
      const next = withStage(state, event.stageId, (stage) => ({
        ...stage,
        status: 'succeeded',
        envelope: passed.envelope,
        finishedAt: event.at,
      }));
      // A loop source that did not send back ends the replay in progress.
      return event.envelope.feedback_loop?.action === 'send_back'
        ? next
        : withLoop(next, event.stageId, (loop) => (loop.active ? { ...loop, active: undefined } : loop));
    }
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
    case 'FeedbackLoopReplayed': {
      const loop = state.loops[event.stageId];
      if (!loop || event.replay <= loop.replays) return state;
      const route = new Set(event.route);
      const stages = Object.fromEntries(
        Object.entries(state.stages).map(([id, s]) => [id, route.has(id) ? resetForReplay(s) : s]),
      );
      const definition = state.pipeline.stages.find((s) => s.id === event.stageId);
      const active: FeedbackLoopContext = {
        loop_id: event.loopId,
        replay_id: `${event.loopId}#${event.replay}`,
        replay: event.replay,
        source: event.stageId,
        target: event.target,
        send_back: event.sendBack,
        remaining_replays: event.remainingReplays,
        route: event.route,
        ...(definition?.loop?.replay_session ? { replay_session: definition.loop.replay_session } : {}),
      };
      return {
        ...state,
        stages,
        loops: {
          ...state.loops,
          [event.stageId]: { ...loop, replays: event.replay, handledAttempt: event.attempt, parkedAttempt: undefined, active },
        },
      };
    }
    case 'FeedbackLoopParked': {
      const loop = state.loops[event.stageId];
      if (!loop || loop.parkedAttempt === event.attempt || loop.handledAttempt === event.attempt) return state;
      const next = withLoop(state, event.stageId, (l) => ({ ...l, handledAttempt: event.attempt, parkedAttempt: event.attempt }));
      return withStage(next, event.stageId, (stage) => ({ ...stage, status: 'waiting', finishedAt: undefined }));
    }
    case 'FeedbackLoopDecided': {
      const loop = state.loops[event.stageId];
      if (!loop || loop.parkedAttempt !== event.attempt) return state;
      const record: LoopDecisionRecord = {
        attempt: event.attempt,
        decision: event.decision,
        by: event.by,
        at: event.at,
        ...(event.reason ? { reason: event.reason } : {}),
      };
      const decided = { ...loop, parkedAttempt: undefined, decisions: [...loop.decisions, record] };
      const loops = (l: LoopState) => ({ ...state.loops, [event.stageId]: l });
      const decision: FeedbackDecision = event.decision;
      switch (decision) {
        case 'extend':
          // One more replay is allowed and the deferred send_back becomes due again.
          return withStage({ ...state, loops: loops({ ...decided, extensions: loop.extensions + 1, handledAttempt: undefined }) }, event.stageId, (stage) => ({
            ...stage,
            status: 'succeeded',
            finishedAt: event.at,
          }));
        case 'continue':
          return withStage({ ...state, loops: loops({ ...decided, continuedAttempt: event.attempt, active: undefined }) }, event.stageId, (stage) => ({
            ...stage,
            status: 'succeeded',
            finishedAt: event.at,
          }));
        case 'abandon':
          return withStage({ ...state, loops: loops({ ...decided, active: undefined }) }, event.stageId, (stage) => ({
            ...stage,
            status: 'failed',
            failureKind: 'feedback_loop_abandoned',
            failure: `feedback loop abandoned by ${event.by}${event.reason ? `: ${event.reason}` : ''}`,
            finishedAt: event.at,
          }));
        default: {
          const unreachable: never = decision;
          throw new Error(`unknown feedback decision ${String(unreachable)}`);
        }
      }
    }
    case 'CloneInstancesMinted': {
      const template = state.stages[event.stageId];
      if (!template || template.instances?.length || template.status !== 'pending') return state;
      const stages: Record<string, StageState> = { ...state.stages };
      for (const instance of event.instances) {
        const previous = stages[instance.id];
        stages[instance.id] = {
          ...(previous ? resetForReplay(previous) : emptyStage(instance.id)),
          cloneOf: event.stageId,
          cloneIndex: instance.n,
          cloneItem: instance.item,
        };
      }
      stages[event.stageId] = { ...template, status: 'running', startedAt: template.startedAt ?? event.at, instances: event.instances.map((i) => i.id) };
      return { ...state, stages };
    }
    case 'RunSucceeded':
      // A run succeeds only once every stage succeeded or was skipped: a RunSucceeded over a stage
      // still open or failed (appended by anyone who may write the run's subject) changes nothing.
      return state.outcome || !everyStageSettledWell(state) ? state : { ...state, outcome: 'succeeded', finishedAt: event.at };
    case 'RunFailed':
      return state.outcome ? state : { ...state, outcome: 'failed', outcomeReason: event.reason, finishedAt: event.at };
    case 'RunCancelled':
      return state.outcome
        ? state
        : { ...state, outcome: 'stopped', outcomeReason: event.reason ?? `cancelled by ${event.by}`, finishedAt: event.at };
    case 'RunErrored':
      return state.outcome || !state.exists ? state : { ...state, outcome: 'error', outcomeReason: event.reason, finishedAt: event.at };
    case 'SignatureRefused':
      return refuse(state, event);
    default: {
      const unreachable: never = event;
      throw new Error(`unknown event ${(unreachable as { type: string }).type}`);
    }
  }
}

/** Records the refusal once; a refused verdict ends its still-open attempt with disposition `error`. */
function refuse(state: RunState, event: Extract<RunEvent, { type: 'SignatureRefused' }>): RunState {
  const refusal: SignatureRefusal = {
    at: event.at,
    refusedType: event.refusedType,
    ...(event.stageId !== undefined ? { stageId: event.stageId } : {}),
    ...(event.attempt !== undefined ? { attempt: event.attempt } : {}),
    ...(event.kid !== undefined ? { kid: event.kid } : {}),
    reason: event.reason,
  };
  const known = state.refusals ?? [];
  const same = (r: SignatureRefusal) =>
    r.at === refusal.at && r.refusedType === refusal.refusedType && r.stageId === refusal.stageId && r.attempt === refusal.attempt && r.reason === refusal.reason;
  if (known.some(same)) return state;
  const recorded: RunState = { ...state, refusals: [...known, refusal] };
  if (event.refusedType !== 'AttemptVerified' || event.stageId === undefined || event.attempt === undefined) return recorded;
  return withAttempt(recorded, event.stageId, event.attempt, (a) =>
    a.phase === 'verified' || a.phase === 'failed'
      ? { attempt: a }
      : { attempt: { ...a, phase: 'verified', disposition: 'error', checks: [], failure: `verdict refused: ${event.reason}`, finishedAt: event.at } },
  );
}

export const foldRun = (events: readonly RunEvent[]): RunState => events.reduce(evolve, initialRunState());

export const loopIdOf = (sourceId: string, targetId: string) => `${sourceId}->${targetId}`;

/**
 * The definition a stage runs by. A Clone Instance runs by its clone child's definition under
 * its own id (so recovery, retry and attempts address the instance, never the template).
 */
export function stageDefinition(state: RunState, stageId: string): StageDefinition | undefined {
  const own = state.pipeline.stages.find((s) => s.id === stageId);
  if (own) return own;
  const templateId = state.stages[stageId]?.cloneOf;
  const template = templateId ? state.pipeline.stages.find((s) => s.id === templateId) : undefined;
  return template ? { ...template, id: stageId, entry: false } : undefined;
}

/** Replays the loop of `sourceId` may still take before on_max_replays applies. */
export function loopReplaysRemaining(state: RunState, sourceId: string): number {
  const loop = state.loops[sourceId];
  return loop ? Math.max(0, loop.maxReplays + loop.extensions - loop.replays) : 0;
}

/**
 * Whether the envelope validator may accept a `send_back` from `stageId` now. False for a stage
 * with no loop, and for a `require_continue` loop that has used its max_replays (the emit must be
 * rejected: the source has to emit `continue`). A `wait_for_human` loop always accepts it: past
 * the limit the send_back parks the run for an operator decision instead.
 */
export function loopAllowsSendBack(state: RunState, stageId: string): boolean {
  const loop = state.loops[stageId];
  if (!loop) return false;
  return loop.onMaxReplays === 'wait_for_human' || loopReplaysRemaining(state, stageId) > 0;
}

/**
 * A succeeded loop source holds its successors while its send_back is not resolved as continue
 * (replayed, parked, or about to be acted on by the scheduler).
 */
export function loopHoldsSuccessors(state: RunState, stageId: string): boolean {
  const stage = state.stages[stageId];
  const loop = state.loops[stageId];
  if (!stage || !loop || stage.status !== 'succeeded') return false;
  if (stage.envelope?.feedback_loop?.action !== 'send_back') return false;
  return loop.continuedAttempt !== latestAttempt(stage)?.n;
}

/** The loop whose feedback is pending a human decision on `stageId`, if any. */
export function pendingFeedbackDecision(state: RunState, stageId: string): LoopState | undefined {
  const loop = state.loops[stageId];
  return loop?.parkedAttempt !== undefined ? loop : undefined;
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
