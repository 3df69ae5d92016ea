/**
 * Test helpers for the deciders (not exported from the package index): build a pipeline in a
 * line, fold past events, run a command, and compare the events it decides — given / when / then.
 */
import { decideAttempt } from './attempt';
import type { StageEnvelope } from './envelope';
import { EVENT_VERSION, type RunEvent } from './events';
import { decideOperator, type OperatorCommand } from './operator';
import type { PipelineDefinition, StageDefinition } from './pipeline';
import { decideRecovery } from './recovery';
import { evolve, foldRun, initialRunState, latestAttempt, type RunState } from './run-state';
import { expectedCandidate, signerRoleOf, withSignature } from './signatures';
import { decideAdvance, type AdvanceRun } from './scheduler';
import type { CheckResult } from './verification';

export const RUN_ID = 'run-1';
export const T0 = '2025-01-01T00:00:00.000Z';
export const NOW = '2025-01-01T00:10:00.000Z';

/** A stage with an open io and no checks; `wiring` overrides anything. */
export function stage(id: string, wiring: Partial<StageDefinition> = {}): StageDefinition {
  return {
    id,
    system_prompt: `do ${id}`,
    model: 'test/model',
    io: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } },
    verify: [],
    gate_kinds: [],
    entry: false,
    route: [],
    replay_safe: true,
    ...wiring,
  };
}

export const pipeline = (...stages: StageDefinition[]): PipelineDefinition => ({ id: 'p', stages });

const base = (at = T0) => ({ v: EVENT_VERSION, runId: RUN_ID, at }) as const;

/**
 * The domain's test signer: evolve checks that verdicts and operator decisions carry a signature
 * naming the right candidate (the cryptography is the reader's, tested in libs/runtime), so
 * fixtures get a signature block with a placeholder `sig`.
 */
export function signedFor(state: RunState, event: RunEvent): RunEvent {
  return signerRoleOf(event) ? withSignature(event, { kid: 'test', candidate: expectedCandidate(state, event), sig: 'test' }) : event;
}

/** Events signed in order, each for the state the ones before it fold to. */
export function signedAll(events: readonly RunEvent[], from: RunState = initialRunState()): RunEvent[] {
  let state = from;
  return events.map((event) => {
    const signed = signedFor(state, event);
    state = evolve(state, signed);
    return signed;
  });
}

export const success = (payload: { [key: string]: unknown } = {}, extra: Partial<StageEnvelope> = {}): StageEnvelope => ({
  status: 'success',
  summary: 'done',
  artifacts: [],
  payload,
  ...extra,
});

export const check = (id: string, status: CheckResult['status'] = 'passed', message?: string): CheckResult => ({
  id,
  type: 'command',
  phase: 'after',
  status,
  ...(message ? { message } : {}),
  evidence: { exit_code: status === 'passed' ? 0 : 1 },
  started_at: T0,
  finished_at: T0,
});

/** Event builders for `given`: the facts a test starts from. */
export const ev = {
  requested: (p: PipelineDefinition, input: { [key: string]: unknown } = {}): RunEvent => ({
    ...base(),
    type: 'RunRequested',
    pipeline: p,
    input,
    checkout: { kind: 'fresh' },
    labels: {},
    requestedBy: 'test',
  }),
  started: (stageId: string, attempt = 1, extra: Partial<Extract<RunEvent, { type: 'StageAttemptStarted' }>> = {}): RunEvent => ({
    ...base(),
    type: 'StageAttemptStarted',
    stageId,
    attempt,
    reason: attempt === 1 ? 'initial' : 'repair',
    input: {},
    upstream: {},
    deadlineAt: '2025-01-01T01:00:00.000Z',
    ...extra,
  }),
  captured: (stageId: string, attempt = 1, envelope: StageEnvelope = success()): RunEvent => ({
    ...base(),
    type: 'EnvelopeCaptured',
    stageId,
    attempt,
    envelope,
    checkoutSnapshot: 'sha256:c',
    artifactsSnapshot: 'sha256:a',
  }),
  verified: (stageId: string, attempt = 1, checks: CheckResult[] = [], failure: string | null = null): RunEvent => ({
    ...base(),
    type: 'AttemptVerified',
    stageId,
    attempt,
    disposition: checks.some((c) => c.status !== 'passed') ? 'failed' : 'passed',
    checks,
    failure,
  }),
  verifierError: (stageId: string, attempt = 1, failure = 'spawn failed'): RunEvent => ({
    ...base(),
    type: 'AttemptVerified',
    stageId,
    attempt,
    disposition: 'error',
    checks: [],
    failure,
  }),
  attemptFailed: (stageId: string, attempt = 1, reason = 'agent gave up'): RunEvent => ({
    ...base(),
    type: 'AttemptFailed',
    stageId,
    attempt,
    kind: 'agent_failure',
    reason,
  }),
  succeeded: (stageId: string, attempt = 1, envelope: StageEnvelope = success()): RunEvent => ({
    ...base(),
    type: 'StageSucceeded',
    stageId,
    attempt,
    envelope,
  }),
  /** started + captured + verified + succeeded: a stage that simply passed. */
  passed: (stageId: string, envelope: StageEnvelope = success(), attempt = 1): RunEvent[] => [
    ev.started(stageId, attempt),
    ev.captured(stageId, attempt, envelope),
    ev.verified(stageId, attempt),
    ev.succeeded(stageId, attempt, envelope),
  ],
  failed: (stageId: string, attempt = 1, kind: Extract<RunEvent, { type: 'StageFailed' }>['kind'] = 'agent', reason = 'agent gave up'): RunEvent => ({
    ...base(),
    type: 'StageFailed',
    stageId,
    attempt,
    kind,
    reason,
  }),
  skipped: (stageId: string, reason: Extract<RunEvent, { type: 'StageSkipped' }>['reason'], detail?: string): RunEvent => ({
    ...base(),
    type: 'StageSkipped',
    stageId,
    reason,
    ...(detail ? { detail } : {}),
  }),
  manualOpened: (stageId: string, attempt = 1): RunEvent => ({ ...base(), type: 'ManualRecoveryOpened', stageId, attempt }),
};

export const advance = (validateInput: AdvanceRun['validateInput'] = () => null): AdvanceRun => ({
  type: 'AdvanceRun',
  now: NOW,
  validateInput,
});

type Decide<C> = (command: C, state: RunState) => RunEvent[];
type Expected = { readonly type: RunEvent['type'] } & { readonly [key: string]: unknown };

/** given(past events).when(decider, command).then(expected events) | thenRefused(code) | thenNothing(). */
export function given(...past: (RunEvent | RunEvent[])[]) {
  const events = signedAll(past.flat());
  const state = foldRun(events);
  return {
    state,
    when<C>(decide: Decide<C>, command: C) {
      const run = () => decide(command, state);
      return {
        /** The decided events, in order, each matching the expected subset (and no others). */
        then(...expected: Expected[]): RunEvent[] {
          const decided = run();
          expect(decided).toMatchObject(expected);
          expect(decided).toHaveLength(expected.length);
          return decided;
        },
        thenNothing(): void {
          expect(run()).toEqual([]);
        },
        thenRefused(code: string, message?: string | RegExp): void {
          let error: unknown;
          try {
            run();
          } catch (e) {
            error = e;
          }
          expect(error).toBeDefined();
          expect((error as { code?: string }).code).toBe(code);
          if (message) expect((error as Error).message).toMatch(message);
        },
        /** The decided events, folded back: deciding the same command again changes nothing. */
        thenIdempotent(): RunEvent[] {
          const decided = run();
          const after = signedAll(decided, state).reduce(evolve, state);
          expect(decide(command, after)).toEqual([]);
          return decided;
        },
      };
    },
  };
}

/**
 * A run driven through the real deciders, for scenarios longer than one command: agents succeed
 * or fail, the verifier records, recovery applies the policy, the scheduler advances.
 */
export function simulate(p: PipelineDefinition, input: { [key: string]: unknown } = {}) {
  const events: RunEvent[] = [ev.requested(p, input)];
  let state = foldRun(events);
  const append = (decided: RunEvent[]) => {
    const signed = signedAll(decided, state);
    events.push(...signed);
    state = signed.reduce(evolve, state);
    return signed;
  };
  const current = (stageId: string) => {
    const attempt = latestAttempt(state.stages[stageId]);
    if (!attempt) throw new Error(`stage ${stageId} has no attempt`);
    return attempt.n;
  };
  const ref = (stageId: string) => ({ stageId, attempt: current(stageId), now: NOW });
  const sim = {
    get state() {
      return state;
    },
    events,
    advance(validateInput?: AdvanceRun['validateInput']): RunEvent[] {
      return append(decideAdvance(advance(validateInput), state));
    },
    /** The latest attempt emits this envelope, verification records `checks`, recovery, advance. */
    finish(stageId: string, envelope: StageEnvelope, checks: CheckResult[] = []): RunEvent[] {
      const out = [
        ...append(decideAttempt({ type: 'CaptureEnvelope', ...ref(stageId), envelope, checkoutSnapshot: 's', artifactsSnapshot: 'a' }, state)),
        ...append(decideAttempt({ type: 'RecordVerification', ...ref(stageId), checks }, state)),
        ...append(decideRecovery({ type: 'ApplyRecoveryPolicy', ...ref(stageId) }, state)),
      ];
      return [...out, ...sim.advance()];
    },
    succeed(stageId: string, payload: { [key: string]: unknown } = {}, extra: Partial<StageEnvelope> = {}): RunEvent[] {
      return sim.finish(stageId, success(payload, extra));
    },
    failAgent(stageId: string, reason = 'agent gave up'): RunEvent[] {
      return [
        ...append(decideAttempt({ type: 'FailAttempt', ...ref(stageId), kind: 'agent_failure', reason }, state)),
        ...append(decideRecovery({ type: 'ApplyRecoveryPolicy', ...ref(stageId) }, state)),
        ...sim.advance(),
      ];
    },
    operator(command: OperatorCommand): RunEvent[] {
      return [...append(decideOperator(command, state)), ...sim.advance()];
    },
    status: (stageId: string) => state.stages[stageId]?.status,
    types: (decided: RunEvent[]) => decided.map((e) => ('stageId' in e ? `${e.type}:${e.stageId}` : e.type)),
  };
  return sim;
}
