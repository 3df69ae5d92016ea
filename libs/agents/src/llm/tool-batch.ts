/**
 * The tool-call loop shared by the LLM backends. Guarantees: calls run in order through the
 * host; once the host says stop (accepted or parked) the remaining calls are answered "not run"
 * without touching the host; an ask_operator that parked leaves a placeholder (`result: null`)
 * that `fillAnswer` completes with the operator's answer on resume, so every tool call id gets
 * exactly one result, in order.
 */
import type { ToolHost } from '../tools/host';
import type { ToolResult } from '../tools/result';

export interface ToolCallRequest {
  readonly id: string;
  readonly name: string;
  /** Raw arguments: JSON text (OpenAI) or an object (Anthropic); the host validates both. */
  readonly args: unknown;
}

export interface ToolCallOutcome {
  readonly id: string;
  readonly name: string;
  readonly result: ToolResult | null;
}

export async function runToolBatch(host: ToolHost, calls: readonly ToolCallRequest[]): Promise<ToolCallOutcome[]> {
  const outcomes: ToolCallOutcome[] = [];
  for (const call of calls) {
    if (host.shouldStop) {
      outcomes.push({ id: call.id, name: call.name, result: { content: 'not run: the session already ended its work (envelope accepted or parked)', isError: true } });
      continue;
    }
    const result = await host.call(call.name, call.args);
    outcomes.push({ id: call.id, name: call.name, result: result.parked ? null : result });
  }
  return outcomes;
}

export function fillAnswer(outcomes: readonly ToolCallOutcome[], answerText: string): { id: string; name: string; result: ToolResult }[] {
  return outcomes.map((o) => ({ id: o.id, name: o.name, result: o.result ?? { content: answerText, isError: false } }));
}

/** A provider failure as text: HTTP status and the provider's message. */
export function providerMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const status = 'status' in err ? (err as { status?: unknown }).status : undefined;
    const message = err instanceof Error ? err.message : JSON.stringify(err);
    return status !== undefined && !message.startsWith(String(status)) ? `${String(status)} ${message}` : message;
  }
  return String(err);
}

export function isAbort(err: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (err instanceof Error && (err.name === 'APIUserAbortError' || err.name === 'AbortError'));
}

/** Strips a `<provider>/` prefix from the stage's model id. */
export function modelFor(stageModel: string, provider: string, override?: string): string {
  if (override) return override;
  return stageModel.startsWith(`${provider}/`) ? stageModel.slice(provider.length + 1) : stageModel;
}

export const DEFAULT_MAX_TOOL_ROUNDS = 100;
