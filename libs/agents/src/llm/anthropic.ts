/**
 * The `anthropic` backend: the Messages API with tool use. Same guarantees as the openai
 * backend: SDK retries (429/5xx/overloaded) bounded by `maxRetries`, the rest is a
 * provider_error; invalid tool input is a tool_result error and the turn continues; the
 * conversation is JSON in `session.memory`.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages/messages';
import type { AgentBackend, AgentSession, TurnResult } from '../backend';
import { DEFAULT_MAX_TOOL_ROUNDS, fillAnswer, isAbort, modelFor, providerMessage, runToolBatch, type ToolCallOutcome } from './tool-batch';

export interface AnthropicBackendOptions {
  /** Default: env SF_ANTHROPIC_BASE_URL, else the SDK default. */
  readonly baseURL?: string;
  /** Default: env ANTHROPIC_API_KEY. */
  readonly apiKey?: string;
  readonly model?: string;
  readonly maxTokens?: number;
  readonly maxRetries?: number;
  readonly requestTimeoutMs?: number;
  readonly maxToolRounds?: number;
  readonly env?: NodeJS.ProcessEnv;
}

interface AnthropicMemory {
  system: string;
  messages: MessageParam[];
  pending?: ToolCallOutcome[];
}

export class AnthropicBackend implements AgentBackend {
  readonly name = 'anthropic';
  private client?: Anthropic;

  constructor(private readonly options: AnthropicBackendOptions = {}) {}

  async startTurn(session: AgentSession): Promise<TurnResult> {
    const env = this.options.env ?? process.env;
    const apiKey = this.options.apiKey ?? env.ANTHROPIC_API_KEY;
    if (!apiKey) return { kind: 'provider_error', message: 'ANTHROPIC_API_KEY is not set' };
    this.client ??= new Anthropic({
      apiKey,
      baseURL: this.options.baseURL ?? env.SF_ANTHROPIC_BASE_URL ?? undefined,
      maxRetries: this.options.maxRetries ?? 3,
      timeout: this.options.requestTimeoutMs ?? 10 * 60_000,
    });
    const memory = session.memory as unknown as AnthropicMemory;
    this.applyInput(session, memory);
    const tools = session.host.tools().map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
    const model = modelFor(session.stage.model, 'anthropic', this.options.model);
    for (let round = 0; round < (this.options.maxToolRounds ?? DEFAULT_MAX_TOOL_ROUNDS); round++) {
      if (session.signal.aborted) return { kind: 'aborted' };
      let response: Anthropic.Messages.Message;
      try {
        response = await this.client.messages.create(
          { model, max_tokens: this.options.maxTokens ?? 8192, system: memory.system, messages: memory.messages, tools },
          { signal: session.signal },
        );
      } catch (err) {
        if (isAbort(err, session.signal)) return { kind: 'aborted' };
        return { kind: 'provider_error', message: providerMessage(err) };
      }
      const content: ContentBlockParam[] = [];
      const calls: { id: string; name: string; args: unknown }[] = [];
      let text = '';
      for (const block of response.content) {
        if (block.type === 'text') {
          content.push({ type: 'text', text: block.text });
          text += block.text;
        } else if (block.type === 'tool_use') {
          content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
          calls.push({ id: block.id, name: block.name, args: block.input });
        }
      }
      memory.messages.push({ role: 'assistant', content });
      if (!calls.length) return { kind: 'ended', text };
      const outcomes = await runToolBatch(session.host, calls);
      if (session.host.parked) {
        memory.pending = outcomes;
        return { kind: 'ended' };
      }
      memory.messages.push({ role: 'user', content: outcomes.map((o) => toResultBlock(o.id, o.result!.content, o.result!.isError)) });
      if (session.host.shouldStop) return { kind: 'ended' };
    }
    return { kind: 'ended', text: 'tool round limit reached' };
  }

  private applyInput(session: AgentSession, memory: AnthropicMemory): void {
    const input = session.input;
    switch (input.kind) {
      case 'start':
        memory.system = input.prompt.system;
        memory.messages = [{ role: 'user', content: input.prompt.user }];
        return;
      case 'reminder':
        memory.messages.push({ role: 'user', content: input.text });
        return;
      case 'answer':
        if (memory.pending) {
          memory.messages.push({ role: 'user', content: fillAnswer(memory.pending, input.text).map((o) => toResultBlock(o.id, o.result.content, o.result.isError)) });
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

function toResultBlock(id: string, content: string, isError: boolean): ToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) };
}
