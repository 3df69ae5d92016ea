/**
 * Follows one run's events until it stops (succeeded, failed, stopped) or waits on an operator.
 * Reads the run's subject from where it left off; every event is seen once, in order.
 */
import { evolve, runStatus, type RunEvent, type RunState, type RunStatus } from '@stageflow/domain';
import type { RunStore } from '@stageflow/runtime';

export interface FollowResult {
  readonly state: RunState;
  readonly status: RunStatus;
}

export async function followRun(
  runs: RunStore,
  runId: string,
  onEvent: (event: RunEvent) => void,
  options: { pollMs?: number; signal?: AbortSignal; fromStart?: boolean } = {},
): Promise<FollowResult> {
  const loaded = await runs.load(runId);
  let state = loaded.state;
  let after = loaded.lastSubjectSequence;
  if (options.fromStart) loaded.events.forEach(onEvent);
  for (;;) {
    const status = runStatus(state);
    if (state.exists && status !== 'running') return { state, status };
    if (options.signal?.aborted) return { state, status };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 40));
    const read = await runs.log.readSubject(runs.subject(runId), after);
    for (const message of read.messages) {
      for (const event of runs.eventsOf(message)) {
        state = evolve(state, event);
        onEvent(event);
      }
      after = message.seq;
    }
  }
}
