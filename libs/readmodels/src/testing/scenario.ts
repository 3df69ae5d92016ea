/**
 * Realistic run event streams for projector tests: operator Q&A, rejected emits, verification with
 * large evidence, automatic repair, manual recovery (guidance, then stop), skips, a retry that
 * reopens a failed run, a pending question and a pending manual decision.
 */
import type {
  CheckResult,
  PipelineDefinition,
  RunEvent,
  StageDefinition,
  StageEnvelope,
} from '@stageflow/domain';
import type { StoredMessage } from '@stageflow/eventlog';
import { EventSignatures, KeyRing } from '@stageflow/runtime';

/** The keys the fixtures' verdicts and operator decisions are signed with; projections of them check with it. */
export const TEST_SIGNATURES = new EventSignatures('sf', KeyRing.inMemory());

const stage = (id: string, entry = false): StageDefinition => ({
  id,
  system_prompt: `do ${id}`,
  model: 'script',
  io: { input: { schema: {} }, output: { schema: {} } },
  verify: [],
  gate_kinds: [],
  entry,
  route: [],
  replay_safe: true,
});

export const pipelineOf = (id: string, stageIds: readonly string[]): PipelineDefinition => ({
  id,
  stages: stageIds.map((s, i) => stage(s, i === 0)),
});

/** A 10 KiB command output. */
export const BIG_STDOUT = Array.from({ length: 160 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(53)}`).join('\n').padEnd(10240, '.');
export const NUL_OUTPUT = 'binary\u0000output';

/** A clock: each call is one second after the previous, in toISOString form. */
export function clock(startIso: string): () => string {
  let t = Date.parse(startIso);
  return () => {
    const at = new Date(t).toISOString();
    t += 1000;
    return at;
  };
}

const envelope = (summary: string, status: 'success' | 'failure' = 'success'): StageEnvelope => ({
  status,
  summary,
  artifacts: [`${summary}.md`],
  payload: { summary, n: 1 },
});

function check(id: string, type: CheckResult['type'], status: CheckResult['status'], at: string, evidence: CheckResult['evidence'], message?: string): CheckResult {
  return { id, type, phase: 'after', status, evidence, started_at: at, finished_at: at, ...(message ? { message } : {}) };
}

/** Run A ("ship"): plan (Q&A) succeeds; build repairs and succeeds; review is stopped by an operator; publish skipped. */
export function shipRun(runId: string, start = '2025-03-01T10:00:00.000Z'): RunEvent[] {
  const at = clock(start);
  const base = { v: 1 as const, runId };
  const pipeline = pipelineOf('ship', ['plan', 'build', 'review', 'publish']);
  const deadline = '2025-03-01T11:00:00.000Z';
  const a = (stageId: string, attempt: number) => ({ ...base, stageId, attempt });
  return TEST_SIGNATURES.signAll(runId, [
    { ...base, type: 'RunRequested', at: at(), pipeline, input: { task: 'ship it' }, checkout: { kind: 'fresh' }, labels: { team: 'core', env: 'ci' }, idempotencyKey: `idem-${runId}`, requestedBy: 'ci' },
    { ...a('plan', 1), type: 'StageAttemptStarted', at: at(), reason: 'initial', input: { task: 'ship it' }, upstream: {}, deadlineAt: deadline },
    { ...a('plan', 1), type: 'CheckoutBaselineRecorded', at: at(), manifest: 'sha256:base' },
    { ...a('plan', 1), type: 'OperatorQuestionAsked', at: at(), exchangeId: 'x1', question: { kind: 'confirm', question: 'Proceed with plan?' }, resume: { turn: 3 } },
    { ...a('plan', 1), type: 'OperatorAnswered', at: at(), exchangeId: 'x1', answer: { decision: 'accept', text: 'go' }, by: 'alice' },
    { ...a('plan', 1), type: 'EnvelopeRejected', at: at(), reason: 'missing summary' },
    { ...a('plan', 1), type: 'ReminderSent', at: at(), reminder: 1, lastRejection: 'missing summary' },
    { ...a('plan', 1), type: 'EnvelopeCaptured', at: at(), envelope: envelope('plan'), checkoutSnapshot: 'sha256:c1', artifactsSnapshot: 'sha256:a1' },
    (() => {
      const t = at();
      return { ...a('plan', 1), type: 'AttemptVerified', at: t, disposition: 'passed', failure: null, checks: [check('approved', 'gate', 'passed', t, { exchange: 'x1' }), check('plan_doc', 'artifact', 'passed', t, { path: 'plan.md', bytes: 120 })] } as RunEvent;
    })(),
    { ...base, type: 'StageSucceeded', at: at(), stageId: 'plan', attempt: 1, envelope: envelope('plan') },
    { ...a('build', 1), type: 'StageAttemptStarted', at: at(), reason: 'initial', input: {}, upstream: { plan: envelope('plan') }, deadlineAt: deadline },
    { ...a('build', 1), type: 'EnvelopeCaptured', at: at(), envelope: envelope('build-1'), checkoutSnapshot: 'sha256:c2', artifactsSnapshot: 'sha256:a2' },
    (() => {
      const t = at();
      return {
        ...a('build', 1), type: 'AttemptVerified', at: t, disposition: 'failed', failure: 'tests failed',
        checks: [
          check('tests', 'command', 'failed', t, { exit_code: 1, stdout: BIG_STDOUT, stderr: NUL_OUTPUT, literal: { $blob: 'not-a-reference' } }, 'exit code 1'),
          check('changes', 'checkout_changes', 'passed', t, { changed: 3 }),
        ],
      } as RunEvent;
    })(),
    { ...a('build', 2), type: 'StageAttemptStarted', at: at(), reason: 'repair', input: {}, upstream: { plan: envelope('plan') }, deadlineAt: deadline, capsule: { attempt: 1, summary: 'build-1', failed_checks: [{ id: 'tests', type: 'command', status: 'failed', message: 'exit code 1', evidence: { stdout: BIG_STDOUT } }] } },
    { ...a('build', 2), type: 'EnvelopeCaptured', at: at(), envelope: envelope('build-2'), checkoutSnapshot: 'sha256:c3', artifactsSnapshot: 'sha256:a3' },
    (() => {
      const t = at();
      return { ...a('build', 2), type: 'AttemptVerified', at: t, disposition: 'passed', failure: null, checks: [check('tests', 'command', 'passed', t, { exit_code: 0, stdout: BIG_STDOUT }), check('changes', 'checkout_changes', 'passed', t, { changed: 4 })] } as RunEvent;
    })(),
    { ...base, type: 'StageSucceeded', at: at(), stageId: 'build', attempt: 2, envelope: envelope('build-2') },
    { ...a('review', 1), type: 'StageAttemptStarted', at: at(), reason: 'initial', input: {}, upstream: {}, deadlineAt: deadline },
    { ...a('review', 1), type: 'EnvelopeCaptured', at: at(), envelope: envelope('review-1'), checkoutSnapshot: 'sha256:c4', artifactsSnapshot: 'sha256:a4' },
    (() => {
      const t = at();
      return { ...a('review', 1), type: 'AttemptVerified', at: t, disposition: 'failed', failure: 'checklist incomplete', checks: [check('list', 'checklist', 'failed', t, { missing: ['security'] }, 'missing items')] } as RunEvent;
    })(),
    { ...base, type: 'StageFailed', at: at(), stageId: 'review', attempt: 1, kind: 'verification', reason: 'checklist incomplete' },
    { ...base, type: 'ManualRecoveryOpened', at: at(), stageId: 'review', attempt: 1 },
    { ...base, type: 'ManualRecoveryDecided', at: at(), stageId: 'review', attempt: 1, decision: 'guidance', guidance: 'cover security', by: 'bob' },
    { ...a('review', 2), type: 'StageAttemptStarted', at: at(), reason: 'manual_retry', input: {}, upstream: {}, deadlineAt: deadline, guidance: 'cover security' },
    { ...a('review', 2), type: 'EnvelopeCaptured', at: at(), envelope: envelope('review-2'), checkoutSnapshot: 'sha256:c5', artifactsSnapshot: 'sha256:a5' },
    (() => {
      const t = at();
      return { ...a('review', 2), type: 'AttemptVerified', at: t, disposition: 'failed', failure: 'checklist incomplete', checks: [check('list', 'checklist', 'failed', t, { missing: ['perf'] }, 'missing items')] } as RunEvent;
    })(),
    { ...base, type: 'StageFailed', at: at(), stageId: 'review', attempt: 2, kind: 'verification', reason: 'checklist incomplete' },
    { ...base, type: 'ManualRecoveryOpened', at: at(), stageId: 'review', attempt: 2 },
    { ...base, type: 'ManualRecoveryDecided', at: at(), stageId: 'review', attempt: 2, decision: 'stop', by: 'bob' },
    { ...base, type: 'StageFailed', at: at(), stageId: 'review', attempt: 2, kind: 'manual_stop', reason: 'stopped by bob' },
    { ...base, type: 'StageSkipped', at: at(), stageId: 'publish', reason: 'parent_failed', detail: 'review failed' },
    { ...base, type: 'RunFailed', at: at(), reason: 'stage review failed' },
  ]);
}

/** Run B ("ask"): waiting on an unanswered operator question. */
export function waitingRun(runId: string, start = '2025-03-01T10:00:30.000Z'): RunEvent[] {
  const at = clock(start);
  const base = { v: 1 as const, runId };
  return TEST_SIGNATURES.signAll(runId, [
    { ...base, type: 'RunRequested', at: at(), pipeline: pipelineOf('ask', ['ask', 'after']), input: {}, checkout: { kind: 'path', path: '/tmp/x' }, labels: {}, requestedBy: 'cli' },
    { ...base, stageId: 'ask', attempt: 1, type: 'StageAttemptStarted', at: at(), reason: 'initial', input: {}, upstream: {}, deadlineAt: '2025-03-01T12:00:00.000Z' },
    { ...base, stageId: 'ask', attempt: 1, type: 'OperatorQuestionAsked', at: at(), exchangeId: 'q1', question: { kind: 'free_text', question: 'Which region?' }, resume: {} },
  ]);
}

/** Run C ("retry"): an agent failure, a retry reopening the failed run, then a pending manual decision. */
export function retryRun(runId: string, start = '2025-03-01T10:01:00.000Z'): RunEvent[] {
  const at = clock(start);
  const base = { v: 1 as const, runId };
  const deadline = '2025-03-01T12:00:00.000Z';
  return TEST_SIGNATURES.signAll(runId, [
    { ...base, type: 'RunRequested', at: at(), pipeline: pipelineOf('retry', ['s1', 's2']), input: {}, checkout: { kind: 'git', url: 'https://example.com/r.git', ref: 'main' }, labels: { team: 'data' }, requestedBy: 'api' },
    { ...base, stageId: 's1', attempt: 1, type: 'StageAttemptStarted', at: at(), reason: 'initial', input: {}, upstream: {}, deadlineAt: deadline },
    { ...base, stageId: 's1', attempt: 1, type: 'AttemptFailed', at: at(), kind: 'agent_failure', reason: 'agent gave up', envelope: envelope('s1-gave-up', 'failure') },
    { ...base, type: 'StageFailed', at: at(), stageId: 's1', attempt: 1, kind: 'agent', reason: 'agent gave up' },
    { ...base, type: 'StageSkipped', at: at(), stageId: 's2', reason: 'parent_failed' },
    { ...base, type: 'RunFailed', at: at(), reason: 'stage s1 failed' },
    { ...base, type: 'StageRetryRequested', at: at(), stageId: 's1', by: 'carol' },
    { ...base, stageId: 's1', attempt: 2, type: 'StageAttemptStarted', at: at(), reason: 'retry', input: {}, upstream: {}, deadlineAt: deadline },
    (() => {
      const t = at();
      return { ...base, stageId: 's1', attempt: 2, type: 'AttemptVerified', at: t, disposition: 'error', failure: 'verification error: spawn failed', checks: [check('build', 'command', 'error', t, { error: 'spawn ENOENT' }, 'spawn failed')] } as RunEvent;
    })(),
    { ...base, type: 'StageFailed', at: at(), stageId: 's1', attempt: 2, kind: 'verification', reason: 'verification error: spawn failed' },
    { ...base, type: 'ManualRecoveryOpened', at: at(), stageId: 's1', attempt: 2 },
  ]);
}

/** One log message: one decision's events, as the run store appends them. */
export interface DecisionBatch {
  readonly events: readonly RunEvent[];
}

/** Events that the services append in the same decision as the event before them. */
const FOLLOW_ON: ReadonlySet<RunEvent['type']> = new Set(['CheckoutBaselineRecorded', 'ManualRecoveryOpened', 'StageSkipped', 'RunFailed', 'RunSucceeded']);

/**
 * Cuts a run's events into decisions the way the services cut them: a failure together with the
 * manual decision it opens, a cascade of skips with the run's outcome, a baseline with its start.
 */
export function decisions(events: readonly RunEvent[]): RunEvent[][] {
  const out: RunEvent[][] = [];
  for (const event of events) {
    if (out.length > 0 && FOLLOW_ON.has(event.type)) out[out.length - 1].push(event);
    else out.push([event]);
  }
  return out;
}

/** Interleaves several runs' decisions (round robin) into stored messages with seq from `firstSeq`. */
export function interleave(runs: readonly (readonly RunEvent[])[], firstSeq = 1): StoredMessage<DecisionBatch>[] {
  const out: StoredMessage<DecisionBatch>[] = [];
  const cut = runs.map(decisions);
  const max = Math.max(...cut.map((r) => r.length));
  for (let i = 0; i < max; i++) {
    for (const batches of cut) {
      const events = batches[i];
      if (events) out.push({ seq: firstSeq + out.length, subject: `sf.evt.run.${events[0].runId}`, data: { events }, time: events[0].at });
    }
  }
  return out;
}

export const scenario = (): { runs: RunEvent[][]; messages: StoredMessage<DecisionBatch>[] } => {
  const runs = [shipRun('run-a'), waitingRun('run-b'), retryRun('run-c')];
  return { runs, messages: interleave(runs) };
};
