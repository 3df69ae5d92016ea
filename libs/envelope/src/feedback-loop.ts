/**
 * feedback_loop rules of 001_* "Feedback loops": required on success for a loop source,
 * forbidden on failure and on stages without a { type: loop } route entry; send_back names the
 * loop's own target, never combines with fork_choice, and is refused once max_replays is used up.
 */
import type { StageDefinition } from '@stageflow/domain';
import { isObject, show, unknownKeys } from './fields';

export interface FeedbackLoopInput {
  readonly stage: StageDefinition;
  readonly status: 'success' | 'failure';
  readonly value: unknown;
  readonly hasForkChoice: boolean;
  readonly loopAllowsSendBack?: boolean;
}

export function feedbackLoopErrors(input: FeedbackLoopInput): string[] {
  const { stage, status, value } = input;
  const loop = stage.loop;
  if (value === undefined) {
    if (status === 'success' && loop) {
      return [`feedback_loop is required on success: stage ${stage.id} is a loop source; add {"action": "continue"} or {"action": "send_back", "target": "${loop.to}"}`];
    }
    return [];
  }
  if (!loop) return [`feedback_loop is not allowed: stage ${stage.id} declares no { type: loop } route entry; remove feedback_loop`];
  if (status === 'failure') return ['feedback_loop is not allowed when status is failure; remove feedback_loop'];
  if (!isObject(value)) return [`feedback_loop must be an object {"action": "continue"} or {"action": "send_back", "target": "${loop.to}"}, got ${show(value)}`];
  const action = value.action;
  if (action === 'continue') {
    const extra = unknownKeys(value, ['action']);
    return extra.length ? [`feedback_loop {"action": "continue"} takes no other fields; remove ${extra.join(', ')}`] : [];
  }
  if (action !== 'send_back') {
    return [`feedback_loop.action must be "continue" or "send_back", got ${show(action)}`];
  }
  const errors: string[] = [];
  const extra = unknownKeys(value, ['action', 'target']);
  if (extra.length) errors.push(`feedback_loop send_back takes only action and target; remove ${extra.join(', ')}`);
  if (value.target !== loop.to) {
    errors.push(`feedback_loop.target must be "${loop.to}" (the loop's target), got ${show(value.target)}`);
  }
  if (input.hasForkChoice) errors.push('send_back cannot be combined with fork_choice; remove fork_choice or emit {"action": "continue"}');
  if (input.loopAllowsSendBack === false) {
    errors.push(`send_back is not allowed: the loop has used its max_replays (${loop.max_replays}); emit feedback_loop {"action": "continue"}`);
  }
  return errors;
}
