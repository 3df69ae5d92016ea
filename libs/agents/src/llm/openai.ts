/**
 * The `openai` backend: any OpenAI-compatible chat-completions endpoint with tool calling.
 * Guarantees: transient failures (429, 5xx, connection) are retried by the SDK with backoff, at
 * most `maxRetries` times; what remains (401, bad model, retries exhausted) is a provider_error;
 * malformed tool arguments go back to the model as a tool error and the turn continues; the
 * conversation lives in `session.memory` (JSON) so a parked session resumes on any replica.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { AgentBackend, AgentSession, TurnResult } from '../backend';
import { DEFAULT_MAX_TOOL_ROUNDS, fillAnswer, isAbort, modelFor, providerMessage, runToolBatch, type ToolCallOutcome } from './tool-batch';

export interface OpenAIBackendOptions {
  /** Default: env SF_OPENAI_BASE_URL, else the SDK's default (api.openai.com). */
  readonly baseURL?: string;
  /** Default: env OPENAI_API_KEY. */
  readonly apiKey?: string;
  /** Overrides the stage's model (which otherwise loses its `openai/` prefix). */
  readonly model?: string;
  readonly maxRetries?: number;
  readonly requestTimeoutMs?: number;
  readonly maxToolRounds?: number;
  readonly env?: NodeJS.ProcessEnv;
}

interface OpenAIMemory {
  messages: ChatCompletionMessageParam[];
  pending?: ToolCallOutcome[];
}

export class OpenAIBackend implements AgentBackend {
  readonly name = 'openai';
  private client?: OpenAI;

  constructor(private readonly options: OpenAIBackendOptions = {}) {}

  async startTurn(session: AgentSession): Promise<TurnResult> {
    const env = this.options.env ?? process.env;
    const apiKey = this.options.apiKey ?? env.OPENAI_API_KEY;
    if (!apiKey) return { kind: 'provider_error', message: 'OPENAI_API_KEY is not set' };
    this.client ??= new OpenAI({
      apiKey,
      baseURL: this.options.baseURL ?? env.SF_OPENAI_BASE_URL ?? undefined,
      maxRetries: this.options.maxRetries ?? 3,
      timeout: this.options.requestTimeoutMs ?? 10 * 60_000,
    });
    const memory = session.memory as unknown as OpenAIMemory;
    this.applyInput(session, memory);
    const tools: ChatCompletionTool[] = session.host.tools().map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
    const model = modelFor(session.stage.model, 'openai', this.options.model);
    for (let round = 0; round < (this.options.maxToolRounds ?? DEFAULT_MAX_TOOL_ROUNDS); round++) {
      if (session.signal.aborted) return { kind: 'aborted' };
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await this.client.chat.completions.create({ model, messages: memory.messages, tools }, { signal: session.signal });
      } catch (err) {
        if (isAbort(err, session.signal)) return { kind: 'aborted' };
        return { kind: 'provider_error', message: providerMessage(err) };
      }
      const message = completion.choices[0]?.message;
      if (!message) return { kind: 'provider_error', message: 'the completion has no choices' };
      const calls = (message.tool_calls ?? []).filter((c) => c.type === 'function');
      memory.messages.push({
        role: 'assistant',
        content: message.content ?? null,
        ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } })) } : {}),
      });
      if (!calls.length) return { kind: 'ended', text: message.content ?? '' };
      const outcomes = await runToolBatch(
        session.host,
        calls.map((c) => ({ id: c.id, name: c.function.name, args: c.function.arguments })),
      );
      if (session.host.parked) {
        memory.pending = outcomes;
        return { kind: 'ended' };
      }
      for (const o of outcomes) memory.messages.push({ role: 'tool', tool_call_id: o.id, content: o.result!.isError ? `ERROR: ${o.result!.content}` : o.result!.content });
      if (session.host.shouldStop) return { kind: 'ended' };
    }
    return { kind: 'ended', text: 'tool round limit reached' };
  }

  private applyInput(session: AgentSession, memory: OpenAIMemory): void {
    const input = session.input;
    switch (input.kind) {
      case 'start':
        memory.messages = [
          { role: 'system', content: input.prompt.system },
          { role: 'user', content: input.prompt.user },
        ];
        return;
      case 'reminder':
        memory.messages.push({ role: 'user', content: input.text });
        return;
      case 'answer':
        if (memory.pending) {
          for (const o of fillAnswer(memory.pending, input.text)) memory.messages.push({ role: 'tool', tool_call_id: o.id, content: o.result.content });
          delete memory.pending;
        } else memory.messages.push({ role: 'user', content: input.text });
        return;
      default: {
        const unreachable: never = input;
        throw new Error(`unknown turn input ${JSON.stringify(unreachable)}`);
      }
    }
  }
}
