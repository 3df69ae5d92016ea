/**
 * Operator decisions as REST bodies and MCP tool arguments arrive: untyped JSON. Each parser
 * returns the domain command or throws InvalidCommand naming the rule broken (→ 400); REST and
 * MCP share them, so both accept and refuse the same input.
 */
import { FEEDBACK_DECISIONS, InvalidCommand, type FeedbackDecision, type OperatorAnswer, type OperatorCommand } from '@stageflow/domain';

/** Guidance is persisted and put into the agent's prompt; it stays short. */
export const MAX_GUIDANCE_CHARS = 4000;
const MAX_TEXT_CHARS = 64 * 1024;

type Fields = Readonly<Record<string, unknown>>;
export interface Origin {
  readonly by: string;
  /** The caller's display note (`X-Stageflow-Operator`), kept apart from `by`. */
  readonly claimedBy?: string;
  readonly now: string;
}

/** The body as an object with only the allowed fields; an absent body is `{}`. */
export function fields(body: unknown, allowed: readonly string[], what: string): Fields {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidCommand('request.body_not_object', `${what}: the body must be a JSON object`);
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) {
    throw new InvalidCommand('request.unknown_field', `${what}: unknown field(s) ${unknown.join(', ')}; allowed: ${allowed.length ? allowed.join(', ') : 'none'}`);
  }
  return body as Fields;
}

function optionalText(value: unknown, field: string, code: string, max = MAX_TEXT_CHARS): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidCommand(code, `${field} must be a string`);
  if (value.length > max) throw new InvalidCommand(code, `${field} is at most ${max} characters`);
  return value;
}

export function recoverCommand(stageId: string, body: Fields, origin: Origin): OperatorCommand {
  const guidance = optionalText(body.guidance, 'guidance', 'recovery.guidance_invalid', MAX_GUIDANCE_CHARS);
  if (!guidance?.trim()) throw new InvalidCommand('recovery.guidance_required', 'guidance is required: {"guidance": "<instructions for the fresh attempt>"}');
  return { type: 'RecoverWithGuidance', stageId, guidance, ...origin };
}

export function stopCommand(stageId: string, origin: Origin): OperatorCommand {
  return { type: 'StopManualRecovery', stageId, ...origin };
}

export function retryCommand(stageId: string, origin: Origin): OperatorCommand {
  return { type: 'RetryStage', stageId, ...origin };
}

export function cancelCommand(body: Fields, origin: Origin): OperatorCommand {
  const reason = optionalText(body.reason, 'reason', 'cancel.reason_invalid');
  return { type: 'CancelRun', ...(reason ? { reason } : {}), ...origin };
}

export function feedbackCommand(stageId: string, body: Fields, origin: Origin): OperatorCommand {
  const decision = body.decision;
  if (typeof decision !== 'string' || !FEEDBACK_DECISIONS.includes(decision as FeedbackDecision)) {
    throw new InvalidCommand('feedback.decision_invalid', `decision must be one of ${FEEDBACK_DECISIONS.join(', ')}`);
  }
  const loopId = optionalText(body.loop_id, 'loop_id', 'feedback.loop_id_invalid', 200);
  const reason = optionalText(body.reason, 'reason', 'feedback.reason_invalid');
  return { type: 'DecideFeedbackLoop', stageId, decision: decision as FeedbackDecision, ...(loopId ? { loopId } : {}), ...(reason ? { reason } : {}), ...origin };
}

export function answerCommand(stageId: string, body: Fields, origin: Origin): OperatorCommand {
  const decision = body.decision;
  if (decision !== undefined && decision !== 'accept' && decision !== 'reject') throw new InvalidCommand('answer.decision_invalid', 'decision must be accept or reject');
  const text = optionalText(body.text, 'text', 'answer.text_invalid');
  const answers = body.answers;
  if (answers !== undefined && (answers === null || typeof answers !== 'object' || Array.isArray(answers))) {
    throw new InvalidCommand('answer.answers_invalid', 'answers must be an object: {"<question id>": "text" | {"decision": "accept"|"reject", "text"?}}');
  }
  if (decision === undefined && text === undefined && answers === undefined) {
    throw new InvalidCommand('answer.empty', 'an answer needs decision, text or answers');
  }
  const answer: OperatorAnswer = {
    ...(decision ? { decision } : {}),
    ...(text !== undefined ? { text } : {}),
    ...(answers ? { answers: answers as OperatorAnswer['answers'] } : {}),
  };
  return { type: 'AnswerOperator', stageId, answer, ...origin };
}
