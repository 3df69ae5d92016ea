/**
 * Starting a run: the request decider. A run exists once; requesting it again changes nothing.
 * An input deeper or larger than the limits in `limits.ts` is refused (InvalidCommand
 * `input.too_deep` / `input.too_large`), so no deeper value is ever folded or stored.
 */
import { EVENT_VERSION, type Checkout, type RunEvent } from './events';
import type { PipelineDefinition } from './pipeline';
import type { RunState } from './run-state';
import { InvalidCommand } from './errors';
import { inputLimitProblem } from './limits';

export interface RequestRun {
  readonly type: 'RequestRun';
  readonly runId: string;
  readonly pipeline: PipelineDefinition;
  readonly input: { readonly [key: string]: unknown };
  readonly checkout: Checkout;
  readonly labels?: { readonly [key: string]: string };
  readonly idempotencyKey?: string;
  readonly requestedBy: string;
  /** Who the caller says it requested for (a display note, not verified). */
  readonly claimedBy?: string;
  readonly now: string;
}

export function decideRequest(command: RequestRun, state: RunState): RunEvent[] {
  if (state.exists) return [];
  const problem = inputLimitProblem(command.input);
  if (problem) throw new InvalidCommand(problem.code, problem.message);
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
      ...(command.claimedBy ? { claimedBy: command.claimedBy } : {}),
    },
  ];
}
