/**
 * JSON schemas of the stage tools as offered to LLM backends (and listed by the exec tool
 * server). The schemas guide the model; the host re-validates every call, so a schema is never
 * what keeps a bad call out.
 */
import type { GateKind } from '@stageflow/domain';

export const TOOL_NAMES = [
  'emit_stage_envelope',
  'write_stage_artifact',
  'ask_operator',
  'check_outputs',
  'read_file',
  'write_file',
  'list_files',
  'run_command',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolSpec {
  readonly name: ToolName;
  readonly description: string;
  readonly inputSchema: { readonly type: 'object'; readonly [keyword: string]: unknown };
}

const str = (description: string) => ({ type: 'string', description });

export const EMIT_SPEC: ToolSpec = {
  name: 'emit_stage_envelope',
  description:
    'Finish the stage attempt by handing over its envelope. Call once, when done; an invalid envelope is rejected with the reason and you may call again. status "failure" ends the stage as failed.',
  inputSchema: {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['success', 'failure'] },
      summary: str('Non-empty human-readable summary of what this attempt did.'),
      artifacts: { type: 'array', items: { type: 'string' }, description: 'Run-relative artifact paths as write_stage_artifact returned them; [] when none.' },
      payload: { type: 'object', description: 'Required on success: structured output matching the stage output schema given in the prompt.' },
      fork_choice: { type: 'array', items: { type: 'string' }, description: 'Fork stages only: the immediate successors to run.' },
      feedback_loop: {
        type: 'object',
        description: 'Loop sources only: {"action":"continue"} or {"action":"send_back","target":"<loop target>"}.',
        properties: { action: { type: 'string', enum: ['continue', 'send_back'] }, target: { type: 'string' } },
        required: ['action'],
      },
      checklist_attestations: {
        type: 'array',
        items: {
          type: 'object',
          properties: { check_id: { type: 'string' }, items: { type: 'array', items: { type: 'string' } } },
          required: ['check_id', 'items'],
        },
      },
      stage_id: str('Optional echo of this stage id.'),
      notes: str('Optional free-form notes.'),
    },
    required: ['status', 'summary', 'artifacts'],
  },
};

export const WRITE_ARTIFACT_SPEC: ToolSpec = {
  name: 'write_stage_artifact',
  description: "Write a file into this attempt's artifact directory. Returns the run-relative path to list in the envelope's artifacts.",
  inputSchema: {
    type: 'object',
    properties: { path: str('Relative path inside the artifact directory, e.g. "report.md".'), content: str('UTF-8 text content.') },
    required: ['path', 'content'],
  },
};

export function askOperatorSpec(kinds: readonly GateKind[]): ToolSpec {
  return {
    name: 'ask_operator',
    description:
      'Ask the human operator and wait. The session parks: end your turn right after this call; the answer arrives when the session resumes. It does not complete the stage: emit_stage_envelope afterwards.',
    inputSchema: {
      type: 'object',
      properties: {
        kind: { type: 'string', enum: [...kinds] },
        question: str('The question for the operator.'),
        artifacts: { type: 'array', items: { type: 'string' }, description: 'artifact_backed only: run-relative artifact paths to review.' },
        questions: {
          type: 'array',
          description: 'multi_question only: sub-questions.',
          items: {
            type: 'object',
            properties: { id: { type: 'string' }, kind: { type: 'string', enum: ['free_text', 'confirm'] }, question: { type: 'string' } },
            required: ['id', 'kind', 'question'],
          },
        },
      },
      required: ['kind', 'question'],
    },
  };
}

export const CHECK_OUTPUTS_SPEC: ToolSpec = {
  name: 'check_outputs',
  description:
    "Optional: run the same required-output check the verifier runs after your turn (present, written by this attempt, valid). It decides nothing; it tells you what is missing while you can still fix it.",
  inputSchema: { type: 'object', properties: {} },
};

export const CODING_SPECS: readonly ToolSpec[] = [
  {
    name: 'read_file',
    description: 'Read a UTF-8 file of the checkout (first 64 KiB).',
    inputSchema: { type: 'object', properties: { path: str('Checkout-relative path.') }, required: ['path'] },
  },
  {
    name: 'write_file',
    description: 'Create or overwrite a file of the checkout (directories are created).',
    inputSchema: { type: 'object', properties: { path: str('Checkout-relative path.'), content: str('UTF-8 text content.') }, required: ['path', 'content'] },
  },
  {
    name: 'list_files',
    description: 'List a checkout directory ("dir/" marks directories; .git is hidden).',
    inputSchema: { type: 'object', properties: { path: str('Checkout-relative directory; default ".".'), recursive: { type: 'boolean' } } },
  },
  {
    name: 'run_command',
    description: 'Run a shell command in the checkout. Output is capped at the last 64 KiB per stream.',
    inputSchema: {
      type: 'object',
      properties: { command: str('Shell command (/bin/sh -c).'), cwd: str('Checkout-relative directory; default the root.'), timeout_ms: { type: 'integer', minimum: 1 } },
      required: ['command'],
    },
  },
];
