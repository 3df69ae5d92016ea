/**
 * Test fixtures for signed events (not exported from the package index): a one-stage run driven
 * through the real deciders up to a captured candidate, and verdicts on it.
 */
import { decideAdvance, decideAttempt, decideRequest, EVENT_VERSION, type PipelineDefinition, type RunEvent } from '@stageflow/domain';
import type { RunStore } from '../run-store';

export const ONE_STAGE: PipelineDefinition = {
  id: 'signed',
  stages: [
    {
      id: 'a',
      system_prompt: 'x',
      model: 'm',
      io: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } },
      verify: [],
      gate_kinds: [],
      entry: true,
      route: [],
      replay_safe: true,
    },
  ],
};

const T = '2026-01-01T00:00:00.000Z';

/** Requests `runId`, starts stage `a` and captures its candidate: attempt 1 waits for a verdict. */
export async function capturedRun(store: RunStore, runId: string): Promise<void> {
  await store.execute(runId, (s) => decideRequest({ type: 'RequestRun', runId, pipeline: ONE_STAGE, input: {}, checkout: { kind: 'fresh' }, requestedBy: 't', now: T }, s));
  await store.execute(runId, (s) => decideAdvance({ type: 'AdvanceRun', now: T, validateInput: () => null }, s));
  await store.execute(runId, (s) =>
    decideAttempt({ type: 'CaptureEnvelope', stageId: 'a', attempt: 1, now: T, envelope: { status: 'success', summary: 'ok', artifacts: [] }, checkoutSnapshot: `sha256:c-${runId}`, artifactsSnapshot: `sha256:a-${runId}` }, s),
  );
}

/** A passed verdict on attempt `attempt` of stage `a`, unsigned. */
export const passedVerdict = (runId: string, attempt = 1): RunEvent => ({
  v: EVENT_VERSION,
  runId,
  at: '2026-01-01T00:00:05.000Z',
  type: 'AttemptVerified',
  stageId: 'a',
  attempt,
  disposition: 'passed',
  checks: [],
  failure: null,
});
