/**
 * The scheduler's decider: given a run's state, which stage attempts start, which stages are
 * skipped, and whether the run has ended. Idempotent: deciding again on the state that results
 * from its own events yields no events.
 */
import type { StageEnvelope } from './envelope';
import { EVENT_VERSION, type RunEvent, type SkipReason } from './events';
import type { RouteEdge, StageDefinition } from './pipeline';
import { evaluatePredicate } from './predicates';
import { pendingManualRecovery, runStatus, type RunState, type StageState } from './run-state';

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
  | { readonly kind: 'skip'; readonly reason: SkipReason; readonly detail?: string }
  | { readonly kind: 'blocked' }
  | { readonly kind: 'missing_field'; readonly detail: string };

/** What one parent's outcome means for the child at the end of one edge. */
function edgeState(parent: StageState, edge: RouteEdge): EdgeState {
  const opted = edge.on ?? ['succeeded'];
  switch (parent.status) {
    case 'pending':
    case 'running':
    case 'waiting':
      return { kind: 'waiting' };
    case 'succeeded': {
      const envelope = parent.envelope as StageEnvelope;
      if (edge.if) {
        const result = evaluatePredicate(edge.if, envelope.payload ?? {});
        if (result.kind === 'missing_field') {
          return { kind: 'missing_field', detail: `route if on ${parent.id} -> ${edge.to}: payload has no field ${result.field}` };
        }
        if (result.kind === 'miss') return { kind: 'skip', reason: 'if_miss', detail: `${parent.id} -> ${edge.to}` };
      }
      return { kind: 'launch', envelope };
    }
    case 'failed':
      // A pending manual decision holds the cascade: nothing downstream moves until it is made.
      if (pendingManualRecovery(parent)) return { kind: 'waiting' };
      return opted.includes('failed') ? { kind: 'blocked' } : { kind: 'skip', reason: 'parent_failed', detail: parent.id };
    case 'skipped':
      return opted.includes('skipped') ? { kind: 'blocked' } : { kind: 'skip', reason: 'parent_skipped', detail: parent.id };
    default: {
      const unreachable: never = parent.status;
      throw new Error(`unknown stage status ${String(unreachable)}`);
    }
  }
}

export function decideAdvance(command: AdvanceRun, state: RunState): RunEvent[] {
  if (!state.exists || state.outcome) return [];
  const base = { v: EVENT_VERSION, runId: state.runId, at: command.now } as const;
  const events: RunEvent[] = [];
  const incoming = incomingEdges(state.pipeline.stages);
  // Stage statuses as they will be after the events decided so far in this pass.
  const status = new Map(Object.values(state.stages).map((s) => [s.id, s]));
  let changed = true;
  while (changed) {
    changed = false;
    for (const stage of state.pipeline.stages) {
      const current = status.get(stage.id) as StageState;
      if (current.status !== 'pending') continue;
      const decision = decideStage(stage, incoming.get(stage.id) ?? [], status, state);
      if (decision.kind === 'none') continue;
      if (decision.kind === 'fail_run') {
        events.push({ ...base, type: 'StageFailed', stageId: stage.id, attempt: 0, kind: 'missing_field', reason: decision.reason });
        events.push({ ...base, type: 'RunFailed', reason: `missing_field: ${decision.reason}` });
        return events;
      }
      if (decision.kind === 'skip') {
        events.push({ ...base, type: 'StageSkipped', stageId: stage.id, reason: decision.reason, ...(decision.detail ? { detail: decision.detail } : {}) });
        status.set(stage.id, { ...current, status: 'skipped', skipReason: decision.reason });
        changed = true;
        continue;
      }
      const problem = command.validateInput(stage, decision.input);
      if (problem) {
        events.push({ ...base, type: 'StageFailed', stageId: stage.id, attempt: 0, kind: 'input', reason: `input does not match io.input.schema: ${problem}` });
        status.set(stage.id, { ...current, status: 'failed' });
        changed = true;
        continue;
      }
      const timeout = stage.timeout_ms ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
      events.push({
        ...base,
        type: 'StageAttemptStarted',
        stageId: stage.id,
        attempt: current.attempts.length + 1,
        reason: 'initial',
        input: decision.input,
        upstream: decision.upstream,
        deadlineAt: new Date(Date.parse(command.now) + timeout).toISOString(),
      });
      status.set(stage.id, { ...current, status: 'running' });
      changed = true;
    }
  }
  const ending = decideEnding([...status.values()], state);
  if (ending?.type === 'RunFailed') events.push({ ...base, type: 'RunFailed', reason: ending.reason });
  if (ending?.type === 'RunSucceeded') events.push({ ...base, type: 'RunSucceeded' });
  return events;
}

type StageDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'skip'; readonly reason: SkipReason; readonly detail?: string }
  | { readonly kind: 'fail_run'; readonly reason: string }
  | { readonly kind: 'start'; readonly input: { readonly [key: string]: unknown }; readonly upstream: { readonly [stageId: string]: StageEnvelope } };

function decideStage(stage: StageDefinition, edges: readonly Incoming[], status: Map<string, StageState>, state: RunState): StageDecision {
  if (stage.entry && edges.length === 0) return { kind: 'start', input: state.input, upstream: {} };
  if (edges.length === 0) return { kind: 'none' };
  const states = edges.map(({ parent, edge }) => ({ parent, state: edgeState(status.get(parent.id) as StageState, edge) }));
  const missing = states.find((s) => s.state.kind === 'missing_field');
  if (missing && missing.state.kind === 'missing_field') return { kind: 'fail_run', reason: missing.state.detail };
  if (edges.length === 1) {
    const only = states[0].state;
    if (only.kind === 'launch') {
      return { kind: 'start', input: only.envelope.payload ?? {}, upstream: { [states[0].parent.id]: only.envelope } };
    }
    if (only.kind === 'skip') return { kind: 'skip', reason: only.reason, detail: only.detail };
    return { kind: 'none' };
  }
  // Generic fan-in join: every parent terminal first; a failed parent keeps it pending.
  if (states.some((s) => s.state.kind === 'waiting')) return { kind: 'none' };
  if (states.some((s) => status.get(s.parent.id)?.status === 'failed')) return { kind: 'none' };
  const launched = states.filter((s) => s.state.kind === 'launch');
  if (launched.length === 0) {
    return states.every((s) => s.state.kind === 'skip') ? { kind: 'skip', reason: 'all_parents_skipped' } : { kind: 'none' };
  }
  const upstream: Record<string, StageEnvelope> = {};
  let input: Record<string, unknown> = {};
  for (const s of launched) {
    if (s.state.kind !== 'launch') continue;
    upstream[s.parent.id] = s.state.envelope;
    input = { ...input, ...(s.state.envelope.payload ?? {}) };
  }
  return { kind: 'start', input, upstream };
}

type Ending = { readonly type: 'RunSucceeded' } | { readonly type: 'RunFailed'; readonly reason: string };

function decideEnding(stages: readonly StageState[], state: RunState): Ending | undefined {
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
  return runStatus(state) === 'running' ? { type: 'RunSucceeded' } : undefined;
}
