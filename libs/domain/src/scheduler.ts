/**
 * The scheduler's decider: given a run's state, which stage attempts start, which stages are
 * skipped, which feedback loops replay or park, which clone instances are minted, and whether the
 * run has ended. Every event decided in a pass is folded into a working view before the next
 * decision, so deciding again on the state that results from its own events yields no events.
 */
import type { StageEnvelope } from './envelope';
import { EVENT_VERSION, type FeedbackLoopContext, type RunEvent, type SkipReason } from './events';
import type { RouteEdge, StageDefinition } from './pipeline';
import { evaluatePredicate } from './predicates';
import {
  evolve,
  latestAttempt,
  loopHoldsSuccessors,
  loopReplaysRemaining,
  pendingManualRecovery,
  stageDefinition,
  type RunState,
  type StageState,
} from './run-state';
import { cloneInstancesOf, replayRoute } from './wiring';
import { deadlineAfter } from './limits';
import type { CloneInstance } from './events';

export const DEFAULT_ATTEMPT_TIMEOUT_MS = 60 * 60 * 1000;

export interface AdvanceRun {
  readonly type: 'AdvanceRun';
  readonly now: string;
  /** Checks a stage input against its io.input.schema; returns the first problem or null. */
  readonly validateInput: (stage: StageDefinition, input: unknown) => string | null;
}

interface Incoming {
  readonly parent: StageDefinition;
  readonly edge: RouteEdge;
}

/** Forward (non-loop) edges into each stage, parents in YAML declaration order. */
export function incomingEdges(stages: readonly StageDefinition[]): Map<string, Incoming[]> {
  const incoming = new Map<string, Incoming[]>(stages.map((s) => [s.id, []]));
  for (const parent of stages) {
    for (const edge of parent.route) incoming.get(edge.to)?.push({ parent, edge });
  }
  return incoming;
}

type EdgeState =
  | { readonly kind: 'waiting' }
  | { readonly kind: 'launch'; readonly envelope: StageEnvelope }
  /** The parent succeeded but this edge did not fire (`if` miss, fork did not choose it). */
  | { readonly kind: 'not_fired'; readonly reason: 'if_miss' | 'not_chosen'; readonly detail: string; readonly envelope: StageEnvelope }
  /** The parent failed or was skipped: the child is skip-cascaded (single-parent edges). */
  | { readonly kind: 'cascade'; readonly reason: 'parent_failed' | 'parent_skipped'; readonly detail: string }
  /** `on` opts this edge out of the cascade; it never launches the child either. */
  | { readonly kind: 'blocked' }
  | { readonly kind: 'missing_field'; readonly detail: string };

/** What one parent's outcome means for the child at the end of one edge. */
function edgeState(view: RunState, parentDef: StageDefinition, parent: StageState, edge: RouteEdge): EdgeState {
  const opted = edge.on ?? ['succeeded'];
  switch (parent.status) {
    case 'pending':
    case 'running':
    case 'waiting':
      return { kind: 'waiting' };
    case 'succeeded': {
      // A loop source's unresolved send_back holds everything downstream of it.
      if (loopHoldsSuccessors(view, parent.id)) return { kind: 'waiting' };
      const envelope = parent.envelope as StageEnvelope;
      if (parentDef.fork) {
        // A missing fork_choice chooses nothing (the envelope validator requires it on success).
        const chosen = envelope.fork_choice ?? [];
        if (!chosen.includes(edge.to)) {
          return { kind: 'not_fired', reason: 'not_chosen', detail: `${parent.id} chose [${chosen.join(', ')}]`, envelope };
        }
      }
      if (edge.if) {
        const result = evaluatePredicate(edge.if, envelope.payload ?? {});
        if (result.kind === 'missing_field') {
          return { kind: 'missing_field', detail: `route if on ${parent.id} -> ${edge.to}: payload has no field ${result.field}` };
        }
        if (result.kind === 'miss') return { kind: 'not_fired', reason: 'if_miss', detail: `${parent.id} -> ${edge.to}`, envelope };
      }
      return { kind: 'launch', envelope };
    }
    case 'failed':
      // A pending manual decision holds the cascade: nothing downstream moves until it is made.
      if (pendingManualRecovery(parent)) return { kind: 'waiting' };
      return opted.includes('failed') ? { kind: 'blocked' } : { kind: 'cascade', reason: 'parent_failed', detail: parent.id };
    case 'skipped':
      return opted.includes('skipped') ? { kind: 'blocked' } : { kind: 'cascade', reason: 'parent_skipped', detail: parent.id };
    default: {
      const unreachable: never = parent.status;
      throw new Error(`unknown stage status ${String(unreachable)}`);
    }
  }
}

type Input = { readonly [key: string]: unknown };
type Upstream = { readonly [stageId: string]: StageEnvelope };

type StageDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'skip'; readonly reason: SkipReason; readonly detail?: string }
  | { readonly kind: 'fail_run'; readonly reason: string }
  | { readonly kind: 'start'; readonly input: Input; readonly upstream: Upstream }
  | { readonly kind: 'mint'; readonly emitter: StageDefinition; readonly emitterAttempt: number; readonly instances: readonly CloneInstance[] }
  | { readonly kind: 'fail_emitter'; readonly emitter: StageDefinition; readonly attempt: number; readonly reason: string };

export function decideAdvance(command: AdvanceRun, state: RunState): RunEvent[] {
  if (!state.exists || state.outcome) return [];
  const base = { v: EVENT_VERSION, runId: state.runId, at: command.now } as const;
  const events: RunEvent[] = [];
  let view = state;
  const emit = (event: RunEvent) => {
    events.push(event);
    view = evolve(view, event);
  };
  const incoming = incomingEdges(state.pipeline.stages);
  const start = (definition: StageDefinition, stage: StageState, input: Input, upstream: Upstream) => {
    const problem = command.validateInput(definition, input);
    if (problem) {
      emit({ ...base, type: 'StageFailed', stageId: stage.id, attempt: 0, kind: 'input', reason: `input does not match io.input.schema: ${problem}` });
      return;
    }
    const loopContext = replayContext(view, stage);
    emit({
      ...base,
      type: 'StageAttemptStarted',
      stageId: stage.id,
      attempt: stage.attempts.length + 1,
      reason: loopContext ? 'loop_replay' : 'initial',
      input,
      upstream,
      deadlineAt: deadlineAfter(command.now, definition.timeout_ms ?? DEFAULT_ATTEMPT_TIMEOUT_MS),
      ...(loopContext ? { loopContext } : {}),
    });
  };
  // Each round only moves stages forward (pending -> started/skipped/failed) or honours a
  // send_back once per source attempt, so the rounds end.
  let changed = true;
  while (changed) {
    const before = events.length;
    for (const event of decideLoops(view, command.now)) emit(event);
    for (const definition of view.pipeline.stages) {
      const current = view.stages[definition.id];
      if (definition.clone?.role === 'child' && current.instances?.length) {
        decideInstances(view, definition, current, base, emit, start);
        continue;
      }
      if (current.status !== 'pending') continue;
      const decision = decideStage(definition, incoming.get(definition.id) ?? [], view);
      switch (decision.kind) {
        case 'none':
          break;
        case 'fail_run':
          emit({ ...base, type: 'StageFailed', stageId: definition.id, attempt: 0, kind: 'missing_field', reason: decision.reason });
          emit({ ...base, type: 'RunFailed', reason: `missing_field: ${decision.reason}` });
          return events;
        case 'skip':
          emit({ ...base, type: 'StageSkipped', stageId: definition.id, reason: decision.reason, ...(decision.detail ? { detail: decision.detail } : {}) });
          break;
        case 'start':
          start(definition, current, decision.input, decision.upstream);
          break;
        case 'mint':
          emit({
            ...base,
            type: 'CloneInstancesMinted',
            stageId: definition.id,
            emitter: decision.emitter.id,
            emitterAttempt: decision.emitterAttempt,
            mode: decision.emitter.clone?.role === 'emitter' ? decision.emitter.clone.mode : 'parallel',
            instances: decision.instances,
          });
          break;
        case 'fail_emitter':
          emit({ ...base, type: 'StageFailed', stageId: decision.emitter.id, attempt: decision.attempt, kind: 'clone_array_invalid', reason: decision.reason });
          break;
        default: {
          const unreachable: never = decision;
          throw new Error(`unknown decision ${(unreachable as { kind: string }).kind}`);
        }
      }
    }
    changed = events.length > before;
  }
  const ending = decideEnding(view);
  if (ending) emit({ ...base, ...ending });
  return events;
}

/** The feedback-loop context a stage starting now gets, when a replay over it is in progress. */
function replayContext(view: RunState, stage: StageState): FeedbackLoopContext | undefined {
  const routeId = stage.cloneOf ?? stage.id;
  const loop = Object.values(view.loops).find((l) => l.active?.route.includes(routeId));
  if (!loop?.active) return undefined;
  const prior = latestAttempt(stage)?.n;
  return { ...loop.active, ...(prior !== undefined ? { prior_attempt: prior } : {}) };
}

/**
 * A loop source that succeeded with `send_back` for an attempt not yet acted on: replay while
 * replays remain; past max_replays, `require_continue` fails the source (its emit should have
 * been rejected, see loopAllowsSendBack) and `wait_for_human` parks it for an operator.
 */
function decideLoops(view: RunState, now: string): RunEvent[] {
  const events: RunEvent[] = [];
  for (const definition of view.pipeline.stages) {
    const loop = view.loops[definition.id];
    const stage = view.stages[definition.id];
    if (!definition.loop || !loop || stage.status !== 'succeeded' || !loopHoldsSuccessors(view, definition.id)) continue;
    const attempt = latestAttempt(stage)?.n ?? 0;
    if (loop.handledAttempt === attempt) continue;
    const base = { v: EVENT_VERSION, runId: view.runId, at: now, stageId: definition.id, attempt } as const;
    const remaining = loopReplaysRemaining(view, definition.id);
    if (remaining > 0) {
      const envelope = stage.envelope as StageEnvelope;
      events.push({
        ...base,
        type: 'FeedbackLoopReplayed',
        loopId: loop.loopId,
        // The policy's target is the one replayed (the validator rejects any other target).
        target: loop.target,
        replay: loop.replays + 1,
        route: replayRoute(view.pipeline.stages, loop.target, definition.id),
        remainingReplays: remaining - 1,
        sendBack: { summary: envelope.summary, artifacts: envelope.artifacts, ...(envelope.payload ? { payload: envelope.payload } : {}) },
      });
    } else if (loop.onMaxReplays === 'require_continue') {
      events.push({
        ...base,
        type: 'StageFailed',
        kind: 'feedback_loop_exhausted',
        reason: `send_back after max_replays ${loop.maxReplays + loop.extensions} is not honoured; the source must emit continue`,
      });
    } else {
      events.push({ ...base, type: 'FeedbackLoopParked', loopId: loop.loopId, replays: loop.replays, maxReplays: loop.maxReplays + loop.extensions });
    }
  }
  return events;
}

function decideStage(stage: StageDefinition, edges: readonly Incoming[], view: RunState): StageDecision {
  if (stage.entry && edges.length === 0) return { kind: 'start', input: view.input, upstream: {} };
  if (edges.length === 0) return { kind: 'none' };
  if (stage.clone?.role === 'join') {
    const template = view.stages[stage.clone.child];
    if (template?.instances?.length) return decideCloneJoin(template, view);
  }
  const states = edges.map(({ parent, edge }) => ({ parent, state: edgeState(view, parent, view.stages[parent.id], edge) }));
  const missing = states.find((s) => s.state.kind === 'missing_field');
  if (missing && missing.state.kind === 'missing_field') return { kind: 'fail_run', reason: missing.state.detail };
  if (edges.length === 1) {
    const { parent, state: only } = states[0];
    switch (only.kind) {
      case 'launch':
        if (stage.clone?.role === 'child') return decideMint(view, parent, only.envelope);
        return { kind: 'start', input: only.envelope.payload ?? {}, upstream: { [parent.id]: only.envelope } };
      case 'not_fired':
      case 'cascade':
        return { kind: 'skip', reason: only.reason, detail: only.detail };
      case 'waiting':
      case 'blocked':
      case 'missing_field':
        return { kind: 'none' };
      default: {
        const unreachable: never = only;
        throw new Error(`unknown edge state ${(unreachable as { kind: string }).kind}`);
      }
    }
  }
  // Generic fan-in join: `on` does not decide readiness. Wait for every parent to be terminal;
  // a failed parent keeps it pending (the run fails); all parents skipped skips it.
  if (states.some((s) => s.state.kind === 'waiting')) return { kind: 'none' };
  const status = (s: { parent: StageDefinition }) => view.stages[s.parent.id].status;
  if (states.some((s) => status(s) === 'failed')) return { kind: 'none' };
  const succeeded = states.filter((s) => status(s) === 'succeeded');
  if (succeeded.length === 0) return { kind: 'skip', reason: 'all_parents_skipped' };
  // Every parent succeeded: the join runs only if every inbound edge fired.
  if (succeeded.length === states.length) {
    const unfired = states.find((s) => s.state.kind === 'not_fired');
    if (unfired && unfired.state.kind === 'not_fired') return { kind: 'skip', reason: unfired.state.reason, detail: unfired.state.detail };
  }
  // Some parents skipped, at least one succeeded: run with the succeeded parents' envelopes,
  // keyed in YAML order; skipped parents are omitted, never synthesized.
  const upstream: Record<string, StageEnvelope> = {};
  let input: Record<string, unknown> = {};
  for (const s of succeeded) {
    const envelope = view.stages[s.parent.id].envelope as StageEnvelope;
    upstream[s.parent.id] = envelope;
    input = { ...input, ...(envelope.payload ?? {}) };
  }
  return { kind: 'start', input, upstream };
}

/** The clone child's emitter succeeded: mint its instances, or fail the emitter on a bad array. */
function decideMint(view: RunState, emitter: StageDefinition, envelope: StageEnvelope): StageDecision {
  const attempt = latestAttempt(view.stages[emitter.id])?.n ?? 0;
  const minted = cloneInstancesOf(emitter, envelope.payload);
  if (!minted.ok) return { kind: 'fail_emitter', emitter, attempt, reason: minted.problem };
  return { kind: 'mint', emitter, emitterAttempt: attempt, instances: minted.instances };
}

/**
 * A clone join runs when every instance succeeded, with their envelopes keyed by instance id in
 * Clone Array order. A failed or skipped instance blocks it: it never runs on a partial set.
 */
function decideCloneJoin(template: StageState, view: RunState): StageDecision {
  const instances = (template.instances ?? []).map((id) => view.stages[id]);
  if (instances.some((s) => s.status !== 'succeeded')) return { kind: 'none' };
  const upstream: Record<string, StageEnvelope> = {};
  let input: Record<string, unknown> = {};
  for (const s of instances) {
    const envelope = s.envelope as StageEnvelope;
    upstream[s.id] = envelope;
    input = { ...input, ...(envelope.payload ?? {}) };
  }
  return { kind: 'start', input, upstream };
}

/**
 * Instances of a minted clone child. `parallel`: all start at once. `sequential`: in array
 * order, each after the previous succeeded; a failure skips the ones not started (a successful
 * retry of the failed one lets the next start again).
 */
function decideInstances(
  view: RunState,
  definition: StageDefinition,
  template: StageState,
  base: { readonly v: typeof EVENT_VERSION; readonly runId: string; readonly at: string },
  emit: (event: RunEvent) => void,
  start: (definition: StageDefinition, stage: StageState, input: Input, upstream: Upstream) => void,
): void {
  if (definition.clone?.role !== 'child') return;
  const emitterId = definition.clone.emitter;
  const emitter = stageDefinition(view, emitterId);
  const sequential = emitter?.clone?.role === 'emitter' && emitter.clone.mode === 'sequential';
  const ids = template.instances ?? [];
  ids.forEach((id, i) => {
    // Read the view afresh: an earlier instance may have moved in this same pass.
    const current = view.stages[id];
    if (!current || current.status !== 'pending') return;
    if (sequential && i > 0) {
      const previous = view.stages[ids[i - 1]];
      if (previous.status === 'skipped') {
        emit({ ...base, type: 'StageSkipped', stageId: id, reason: 'parent_skipped', detail: previous.id });
        return;
      }
      if (previous.status === 'failed' && !pendingManualRecovery(previous)) {
        emit({ ...base, type: 'StageSkipped', stageId: id, reason: 'parent_failed', detail: previous.id });
        return;
      }
      if (previous.status !== 'succeeded') return;
    }
    const emitterEnvelope = view.stages[emitterId]?.envelope;
    const instanceDefinition = stageDefinition(view, id) ?? definition;
    start(instanceDefinition, current, current.cloneItem ?? {}, emitterEnvelope ? { [emitterId]: emitterEnvelope } : {});
  });
}

type Ending = { readonly type: 'RunSucceeded' } | { readonly type: 'RunFailed'; readonly reason: string };

function decideEnding(view: RunState): Ending | undefined {
  const stages = Object.values(view.stages);
  const active = stages.some((s) => s.status === 'running' || s.status === 'waiting' || pendingManualRecovery(s));
  if (active) return undefined;
  const failed = stages.filter((s) => s.status === 'failed');
  const pending = stages.filter((s) => s.status === 'pending');
  if (failed.length > 0) {
    return { type: 'RunFailed', reason: `stage ${failed.map((s) => s.id).join(', ')} failed` };
  }
  if (pending.length > 0) {
    // Nothing runs and nothing can: pending stages are blocked for good.
    return { type: 'RunFailed', reason: `stage ${pending.map((s) => s.id).join(', ')} can never start` };
  }
  return { type: 'RunSucceeded' };
}
