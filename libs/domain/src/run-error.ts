/**
 * Ending a run in `error`: a message about it could not be processed (dead-lettered). Terminal
 * and final: a run that already has an outcome keeps it, and a second report changes nothing.
 */
import { EVENT_VERSION, type RunEvent } from './events';
import type { RunState } from './run-state';

/** Longest reason recorded; the dead letter keeps the whole of it. */
export const MAX_ERROR_REASON_CHARS = 2000;

export interface EndRunInError {
  readonly type: 'EndRunInError';
  readonly reason: string;
  readonly now: string;
}

export function decideRunError(command: EndRunInError, state: RunState): RunEvent[] {
  if (!state.exists || state.outcome) return [];
  const reason = command.reason.length > MAX_ERROR_REASON_CHARS ? `${command.reason.slice(0, MAX_ERROR_REASON_CHARS - 1)}…` : command.reason;
  return [{ v: EVENT_VERSION, type: 'RunErrored', runId: state.runId, at: command.now, reason }];
}
