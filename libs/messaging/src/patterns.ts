/**
 * Message patterns the Stageflow transport understands. A handler decorated with
 * `@EventPattern(workQueue('verify'))` consumes the shared `verify` work queue; one decorated with
 * `@EventPattern(eventStream('scheduler', '{ns}.evt.run.>'))` follows the event log through the
 * durable subscription `scheduler`; `{ns}` is replaced by the deployment's namespace.
 */
export interface WorkQueuePattern {
  readonly kind: 'work';
  readonly queue: string;
  readonly concurrency?: number;
}

export interface EventStreamPattern {
  readonly kind: 'events';
  readonly durable: string;
  readonly filter: string;
  /** Messages handled at once; above 1 for handlers that decide from current state, not message order. */
  readonly concurrency?: number;
}

export type StageflowPattern = WorkQueuePattern | EventStreamPattern;

export const workQueue = (queue: string, concurrency = 1): WorkQueuePattern => ({ kind: 'work', queue, concurrency });
export const eventStream = (durable: string, filter: string, concurrency = 1): EventStreamPattern => ({ kind: 'events', durable, filter, concurrency });

/**
 * Messages a state-deciding event handler (scheduler, recovery, verifier dispatch) takes at once:
 * each loads the run's current state, so order between messages does not matter, and concurrent
 * decisions on one run are serialised by optimistic concurrency. `SF_EVENT_CONCURRENCY`, default 8.
 */
export const STATE_HANDLER_CONCURRENCY = Math.max(1, Number(process.env.SF_EVENT_CONCURRENCY) || 8);

export function parsePattern(key: string): StageflowPattern | undefined {
  try {
    const parsed = JSON.parse(key) as Partial<StageflowPattern>;
    if (parsed.kind === 'work' && typeof parsed.queue === 'string') return parsed as WorkQueuePattern;
    if (parsed.kind === 'events' && typeof parsed.durable === 'string' && typeof parsed.filter === 'string') return parsed as EventStreamPattern;
  } catch {
    return undefined;
  }
  return undefined;
}
