/** Starting a run: the request decider. A run exists once; requesting it again changes nothing. */
import { EVENT_VERSION, type Checkout, type RunEvent } from './events';
import type { PipelineDefinition } from './pipeline';
import type { RunState } from './run-state';

export interface RequestRun {
  readonly type: 'RequestRun';
  readonly runId: string;
  readonly pipeline: PipelineDefinition;
  readonly input: { readonly [key: string]: unknown };
  readonly checkout: Checkout;
  readonly labels?: { readonly [key: string]: string };
  readonly idempotencyKey?: string;
  readonly requestedBy: string;
  readonly now: string;
}

export function decideRequest(command: RequestRun, state: RunState): RunEvent[] {
  if (state.exists) return [];
  return [
    {
      v: EVENT_VERSION,
      type: 'RunRequested',
      runId: command.runId,
      at: command.now,
      pipeline: command.pipeline,
      input: command.input,
      checkout: command.checkout,
      labels: command.labels ?? {},
      ...(command.idempotencyKey ? { idempotencyKey: command.idempotencyKey } : {}),
      requestedBy: command.requestedBy,
    },
  ];
}
