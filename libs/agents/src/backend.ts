/**
 * The agent backend contract.
 *
 * A session is a loop of turns driven by `runSession` (session.ts). Each turn the driver hands
 * the backend one `TurnInput` (the task prompt, a reminder, or an operator's answer); the
 * backend talks to its agent, makes every tool call through `session.host`, and returns when
 * the agent ends its turn. The backend must:
 *   - route every stage tool call through `session.host.call` (it never validates or writes itself);
 *   - stop calling tools and end the turn as soon as `session.host.shouldStop` is true (an
 *     envelope was accepted, or ask_operator parked the session);
 *   - honour `session.signal`: on abort, end promptly with `{ kind: 'aborted' }`;
 *   - keep whatever it needs across turns and across a park/resume in `session.memory`, which
 *     must stay JSON-serializable (it is recorded in OperatorQuestionAsked.resume and may be
 *     resumed on another replica, in another process).
 * A backend never decides the attempt's outcome: the driver reads the host's state after the turn.
 */
import type { OperatorAnswer, OperatorQuestion, StageDefinition } from '@stageflow/domain';
import type { Prompt } from './prompt';
import type { ToolHost } from './tools/host';

export type TurnInput =
  /** The first turn of a session: the assembled prompt. */
  | { readonly kind: 'start'; readonly prompt: Prompt }
  /** The turn ended with no accepted envelope: ask the agent to finish (n = 1, 2, ...). */
  | { readonly kind: 'reminder'; readonly n: number; readonly text: string }
  /** The operator answered the question the session parked on. */
  | {
      readonly kind: 'answer';
      readonly exchangeId: string;
      readonly question: OperatorQuestion;
      readonly answer: OperatorAnswer;
      /** The answer rendered for the agent (what a tool result or user message carries). */
      readonly text: string;
    };

export type JsonMemory = { [key: string]: unknown };

export interface AgentSession {
  readonly runId: string;
  readonly stage: StageDefinition;
  readonly attempt: number;
  /** 1-based across the whole attempt, resumes included. */
  readonly turn: number;
  readonly input: TurnInput;
  readonly host: ToolHost;
  readonly signal: AbortSignal;
  /** Backend-owned state, carried across turns and parks. JSON only. */
  readonly memory: JsonMemory;
}

export type TurnResult =
  /** The agent ended its turn (a text reply / end_turn, or it stopped after emit or park). */
  | { readonly kind: 'ended'; readonly text?: string }
  /** The provider failed after the backend's own bounded retries (auth, model, network...). */
  | { readonly kind: 'provider_error'; readonly message: string }
  /** The session's signal fired (deadline or cancel) and the turn stopped. */
  | { readonly kind: 'aborted' };

export interface AgentBackend {
  readonly name: string;
  startTurn(session: AgentSession): Promise<TurnResult>;
}
