/** What every stage tool returns to the agent. */
export interface ToolResult {
  /** Text for the model (JSON text for structured results). */
  readonly content: string;
  readonly isError: boolean;
  /** ask_operator parked the session: the agent must end its turn; the answer comes on resume. */
  readonly parked?: boolean;
}

export const toolOk = (content: string | object): ToolResult => ({
  content: typeof content === 'string' ? content : JSON.stringify(content),
  isError: false,
});

export const toolError = (message: string): ToolResult => ({ content: message, isError: true });

/** A failure a tool reports to the agent as an error result (never a crash of the session). */
export class ToolRefusal extends Error {}
