/**
 * fork_choice rules of 001_* "Fork stages". Shape (an array of strings) is checked whenever the
 * field is present; legality (immediate successors, select/allow_none) only on success emits of
 * stages that declare `fork` — on failure, fork_choice is neither required nor validated. A
 * send_back emit replays the loop instead of advancing, so it needs (and may carry) no choice.
 */
import type { StageDefinition } from '@stageflow/domain';
import { isStringArray, show } from './fields';

export function forkChoiceErrors(stage: StageDefinition, status: 'success' | 'failure', value: unknown, sendBack: boolean): string[] {
  if (value !== undefined && !isStringArray(value)) {
    return [`fork_choice must be an array of successor stage ids (strings), got ${show(value)}`];
  }
  const fork = stage.fork;
  if (status !== 'success' || !fork) return [];
  const successors = stage.route.map((edge) => edge.to);
  const listed = successors.length ? successors.join(', ') : '(none)';
  if (value === undefined) {
    if (sendBack) return [];
    return [`fork_choice is required on success: stage ${stage.id} is a fork stage; name which of its successors to run (${listed})`];
  }
  const errors: string[] = [];
  const unknown = value.filter((id) => !successors.includes(id));
  if (unknown.length) {
    errors.push(`fork_choice names ${unknown.join(', ')}, which ${unknown.length === 1 ? 'is not an immediate successor' : 'are not immediate successors'} of stage ${stage.id}; choose from ${listed}`);
  }
  const duplicates = value.filter((id, i) => value.indexOf(id) !== i);
  if (duplicates.length) errors.push(`fork_choice lists ${[...new Set(duplicates)].join(', ')} more than once; name each successor once`);
  if (fork.select === 'one' && value.length !== 1) {
    errors.push(`fork_choice must name exactly one successor (select: one), got ${value.length}; choose one of ${listed}`);
  }
  if (fork.select === 'subset' && value.length === 0 && !fork.allow_none) {
    errors.push(`fork_choice must name at least one successor: stage ${stage.id} does not set allow_none; choose from ${listed}`);
  }
  return errors;
}
