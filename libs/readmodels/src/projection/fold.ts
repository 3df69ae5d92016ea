/**
 * The projector's fold of one run: the domain's RunState plus the few facts the read model keeps
 * that RunState does not (which attempt a stage succeeded with, when a manual decision was made,
 * which message last changed anything). Pure: the same messages in the same order give the same
 * fold, and a message at or below `lastSeq` is ignored, so re-applying a prefix changes nothing.
 * One message is one decision: its events are folded together, under the message's sequence.
 */
import { evolve, initialRunState, type RunEvent, type RunState } from '@stageflow/domain';
import { deepEqual } from './deep-equal';

export interface RunFold {
  readonly run: RunState;
  /** Highest stream sequence folded in. */
  readonly lastSeq: number;
  /** Sequence of the last message that changed the fold (a duplicate changes nothing). */
  readonly updatedSeq: number;
  /** stageId → attempt the stage succeeded with (its envelope is the accepted one). */
  readonly accepted: { readonly [stageId: string]: number };
  /** `decisionKey(stageId, attempt)` → time of the first manual decision on that failure. */
  readonly decidedAt: { readonly [key: string]: string };
}

export const emptyFold = (): RunFold => ({ run: initialRunState(), lastSeq: 0, updatedSeq: 0, accepted: {}, decidedAt: {} });

export const decisionKey = (stageId: string, attempt: number): string => JSON.stringify([stageId, attempt]);

const withoutVersion = (run: RunState): Omit<RunState, 'version'> => {
  const { version: _version, ...rest } = run;
  return rest;
};

/** Folds one message's events (one decision), all under the message's stream sequence. */
export function foldMessage(fold: RunFold, seq: number, events: readonly RunEvent[]): RunFold {
  if (seq <= fold.lastSeq) return fold;
  let run = fold.run;
  let accepted = fold.accepted;
  let decidedAt = fold.decidedAt;
  for (const event of events) {
    const before = run;
    run = evolve(run, event);
    // A StageSucceeded the fold did not apply (no passed verdict for its attempt) accepts nothing.
    if (event.type === 'StageSucceeded' && run !== before && accepted[event.stageId] !== event.attempt) {
      accepted = { ...accepted, [event.stageId]: event.attempt };
    }
    if (event.type === 'ManualRecoveryDecided') {
      const key = decisionKey(event.stageId, event.attempt);
      const decided = run.stages[event.stageId]?.manualRecoveries.some((m) => m.attempt === event.attempt && m.decision);
      if (decided && decidedAt[key] === undefined) decidedAt = { ...decidedAt, [key]: event.at };
    }
  }
  const changed =
    accepted !== fold.accepted || decidedAt !== fold.decidedAt || !deepEqual(withoutVersion(fold.run), withoutVersion(run));
  return { run, lastSeq: seq, updatedSeq: changed ? seq : fold.updatedSeq, accepted, decidedAt };
}
