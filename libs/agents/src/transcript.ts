/**
 * Turn transcripts: what one agent turn was given, every tool call it made through the host
 * (raw arguments and result), and how it ended.
 *
 * Guarantees:
 *  - every string in a transcript has each secret replaced by `[REDACTED]` before it leaves this
 *    module: values of the environment variables whose names look secret (`looksSecret`), and
 *    the extra secrets given (e.g. a tool server token);
 *  - a turn's transcript holds exactly the tool calls made since the previous turn was taken.
 */
import { redact, secretValues } from '@stageflow/checks';
import type { TurnInput, TurnResult } from './backend';
import type { ToolResult } from './tools/result';

export interface ToolCallRecord {
  readonly name: string;
  readonly args: unknown;
  readonly result: ToolResult;
}

export interface TurnTranscript {
  readonly turn: number;
  readonly input: TurnInput;
  readonly toolCalls: readonly ToolCallRecord[];
  readonly result: TurnResult;
}

export class TranscriptRecorder {
  private calls: ToolCallRecord[] = [];
  private readonly secrets: readonly string[];

  /** `env` defaults to this process's environment. */
  constructor(options: { readonly env?: NodeJS.ProcessEnv; readonly secrets?: readonly string[] } = {}) {
    this.secrets = secretValues({ base: options.env ?? process.env }, options.secrets ?? []);
  }

  /** Pass as ToolHostOptions.onToolCall. */
  readonly onToolCall = (name: string, args: unknown, result: ToolResult): void => {
    this.calls.push({ name, args, result });
  };

  /** The redacted transcript of the turn that just ended; starts the next turn's call list. */
  takeTurn(turn: number, input: TurnInput, result: TurnResult): TurnTranscript {
    const toolCalls = this.calls;
    this.calls = [];
    return redactDeep({ turn, input, toolCalls, result }, this.secrets) as TurnTranscript;
  }
}

function redactDeep(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k, secrets), redactDeep(v, secrets)]));
  }
  return value;
}
