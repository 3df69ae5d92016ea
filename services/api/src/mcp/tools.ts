/**
 * The MCP server's tools (DESIGN.md §3): get_run, get_stage_verification, recover_manual_stage,
 * stop_manual_recovery, decide_feedback_loop, answer_operator. Each calls RunOperations — the
 * same queries and deciders as REST — so a tool answers exactly what the REST route answers.
 *
 * Guarantees: a tool's result is JSON (text content and structuredContent); a problem is a tool
 * error (`isError: true`) carrying the REST status and code (`{status, error, message}`), never a
 * protocol failure; decision tools take an optional `idempotencyKey` with the REST semantics.
 * Each tool needs the scope its REST route needs (TOOL_SCOPES: reads `read`, decisions
 * `operate`); a caller without it gets a 403 tool error and nothing is read or decided.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { InvalidCommand } from '@stageflow/domain';
import type { ApiScope } from '@stageflow/runtime';
import { answerCommand, feedbackCommand, fields, MAX_GUIDANCE_CHARS, recoverCommand, stopCommand, type Origin } from '../decision-input';
import { problemOf } from '../errors.filter';
import type { RunOperations } from '../operations';

export const MCP_SERVER_NAME = 'stageflow';

const ids = {
  runId: { type: 'string', description: 'the run id' },
  stageId: { type: 'string', description: 'the stage id' },
} as const;
const idempotencyKey = { type: 'string', description: 'optional: the same key makes one decision and returns the same result' } as const;

const TOOLS: readonly Tool[] = [
  {
    name: 'get_run',
    description: 'The run summary: status, every stage with its attempts, checks and what an operator is awaited for.',
    inputSchema: { type: 'object', properties: { runId: ids.runId }, required: ['runId'], additionalProperties: false },
  },
  {
    name: 'get_stage_verification',
    description: "Every attempt of a stage with its after-phase checks, their status and evidence (a repair's failed and passing attempts are separate records).",
    inputSchema: { type: 'object', properties: ids, required: ['runId', 'stageId'], additionalProperties: false },
  },
  {
    name: 'recover_manual_stage',
    description: 'Decide a manual recovery (on_verify_fail.mode: manual) after a failed verification: start a fresh attempt that carries the failed-check capsule and this guidance.',
    inputSchema: {
      type: 'object',
      properties: { ...ids, guidance: { type: 'string', description: `instructions for the fresh attempt (at most ${MAX_GUIDANCE_CHARS} characters)` }, idempotencyKey },
      required: ['runId', 'stageId', 'guidance'],
      additionalProperties: false,
    },
  },
  {
    name: 'stop_manual_recovery',
    description: 'Decide a manual recovery by leaving the stage failed for this run; its successors are skipped.',
    inputSchema: { type: 'object', properties: { ...ids, idempotencyKey }, required: ['runId', 'stageId'], additionalProperties: false },
  },
  {
    name: 'decide_feedback_loop',
    description: 'Decide a feedback loop parked at max_replays: extend (one more replay), continue (accept the source stage), or abandon (fail it).',
    inputSchema: {
      type: 'object',
      properties: {
        ...ids,
        decision: { type: 'string', enum: ['extend', 'continue', 'abandon'] },
        loopId: { type: 'string', description: 'optional: must name the parked loop' },
        reason: { type: 'string' },
        idempotencyKey,
      },
      required: ['runId', 'stageId', 'decision'],
      additionalProperties: false,
    },
  },
  {
    name: 'answer_operator',
    description: "Answer a stage's open operator question: {decision: accept|reject} for confirm and artifact_backed, {text} for free_text, {answers: {id: ...}} for multi_question.",
    inputSchema: {
      type: 'object',
      properties: {
        ...ids,
        answer: {
          type: 'object',
          properties: {
            decision: { type: 'string', enum: ['accept', 'reject'] },
            text: { type: 'string' },
            answers: { type: 'object', additionalProperties: true },
          },
          additionalProperties: false,
        },
        idempotencyKey,
      },
      required: ['runId', 'stageId', 'answer'],
      additionalProperties: false,
    },
  },
];

export const TOOL_SCOPES: Readonly<Record<string, ApiScope>> = {
  get_run: 'read',
  get_stage_verification: 'read',
  recover_manual_stage: 'operate',
  stop_manual_recovery: 'operate',
  decide_feedback_loop: 'operate',
  answer_operator: 'operate',
};

/** Who calls the tools: recorded as `by` (with the `claimedBy` note) on decisions. */
export interface ToolCaller {
  readonly by: string;
  readonly claimedBy?: string;
  /** Whether the caller holds a scope; undefined for a local caller, which holds every one. */
  readonly refusal?: (scope: ApiScope) => string | undefined;
}

type Args = Readonly<Record<string, unknown>>;

function text(args: Args, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || !value) throw new InvalidCommand('request.field_required', `${name} is required (a non-empty string)`);
  return value;
}

function optionalKey(args: Args): string | undefined {
  const key = args.idempotencyKey;
  if (key === undefined) return undefined;
  if (typeof key !== 'string') throw new InvalidCommand('idempotency.key_invalid', 'idempotencyKey must be a string');
  return key;
}

async function call(ops: RunOperations, name: string, args: Args, origin: Origin): Promise<unknown> {
  const allowed = (TOOLS.find((t) => t.name === name)?.inputSchema.properties ?? {}) as object;
  fields(args, Object.keys(allowed), name);
  switch (name) {
    case 'get_run':
      return ops.run(text(args, 'runId'));
    case 'get_stage_verification':
      return ops.verification(text(args, 'runId'), text(args, 'stageId'));
    case 'recover_manual_stage':
      return ops.decide(text(args, 'runId'), recoverCommand(text(args, 'stageId'), { guidance: args.guidance }, origin), optionalKey(args));
    case 'stop_manual_recovery':
      return ops.decide(text(args, 'runId'), stopCommand(text(args, 'stageId'), origin), optionalKey(args));
    case 'decide_feedback_loop':
      return ops.decide(
        text(args, 'runId'),
        feedbackCommand(text(args, 'stageId'), { decision: args.decision, loop_id: args.loopId, reason: args.reason }, origin),
        optionalKey(args),
      );
    case 'answer_operator':
      return ops.decide(text(args, 'runId'), answerCommand(text(args, 'stageId'), fields(args.answer, ['decision', 'text', 'answers'], 'answer'), origin), optionalKey(args));
    default:
      throw new InvalidCommand('mcp.unknown_tool', `unknown tool ${name}; tools: ${TOOLS.map((t) => t.name).join(', ')}`);
  }
}

/** An MCP server whose decisions are recorded as made `by` this caller. */
export function createMcpServer(ops: RunOperations, caller: ToolCaller, version = '0.1.0'): Server {
  const server = new Server({ name: MCP_SERVER_NAME, version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...TOOLS] }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const scope = TOOL_SCOPES[request.params.name];
    const refused = scope && caller.refusal?.(scope);
    if (refused) {
      const problem = { status: 403, error: 'forbidden', message: refused };
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: problem };
    }
    try {
      const origin = { by: caller.by, ...(caller.claimedBy ? { claimedBy: caller.claimedBy } : {}), now: new Date().toISOString() };
      const result = await call(ops, request.params.name, request.params.arguments ?? {}, origin);
      return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result as Record<string, unknown> };
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: { ...problem } };
    }
  });
  return server;
}
