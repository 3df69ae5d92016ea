/**
 * The script agent's file format (a YAML document):
 *
 *   stages:
 *     <stageId>:
 *       - - { write_file: { path, content } }     # attempt 1, steps in order
 *         - { emit: { status: success, ... } }
 *       - - ...                                   # attempt 2; the last attempt repeats
 *
 * Guarantees: `parseScript` returns only well-formed steps or throws ScriptError naming the file,
 * the YAML path (stages.<id>[attempt][step]) and the rule broken.
 */
import * as fs from 'node:fs/promises';
import { parse } from 'yaml';

export type ScriptStep =
  | { readonly kind: 'write_file'; readonly path: string; readonly content: string }
  | { readonly kind: 'write_artifact'; readonly path: string; readonly content: string }
  | { readonly kind: 'run'; readonly command: string; readonly timeout_ms?: number }
  | { readonly kind: 'ask_operator'; readonly args: { readonly [k: string]: unknown } }
  | { readonly kind: 'emit'; readonly envelope: { readonly [k: string]: unknown } }
  | { readonly kind: 'end_turn' }
  | { readonly kind: 'provider_error'; readonly message: string }
  | { readonly kind: 'sleep'; readonly ms: number };

export const STEP_KINDS = ['write_file', 'write_artifact', 'run', 'ask_operator', 'emit', 'end_turn', 'provider_error', 'sleep'] as const;

export interface AgentScript {
  readonly file: string;
  /** Attempts per stage; each attempt is a list of steps. */
  readonly stages: { readonly [stageId: string]: readonly (readonly ScriptStep[])[] };
}

export class ScriptError extends Error {
  constructor(
    readonly file: string,
    readonly at: string,
    readonly rule: string,
  ) {
    super(`${file}: ${at}: ${rule}`);
    this.name = 'ScriptError';
  }
}

type Obj = { readonly [k: string]: unknown };
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function loadScript(file: string): Promise<AgentScript> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new ScriptError(file, '(file)', `cannot read the script: ${(err as Error).message}`);
  }
  return parseScript(text, file);
}

export function parseScript(text: string, file = '<script>'): AgentScript {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ScriptError(file, '(yaml)', `not valid YAML: ${(err as Error).message}`);
  }
  if (!isObj(doc)) throw new ScriptError(file, '(root)', 'the script must be a mapping with a stages: key');
  const extra = Object.keys(doc).filter((k) => k !== 'stages');
  if (extra.length) throw new ScriptError(file, '(root)', `unknown key(s) ${extra.join(', ')}; only stages is allowed`);
  if (!isObj(doc.stages)) throw new ScriptError(file, 'stages', 'must be a mapping of stage id to a list of attempts');
  const stages: { [id: string]: ScriptStep[][] } = {};
  for (const [stageId, attempts] of Object.entries(doc.stages)) {
    if (!Array.isArray(attempts) || attempts.length === 0) {
      throw new ScriptError(file, `stages.${stageId}`, 'must be a non-empty list of attempts (each a list of steps)');
    }
    stages[stageId] = attempts.map((steps, a) => {
      const at = `stages.${stageId}[${a}]`;
      if (!Array.isArray(steps)) throw new ScriptError(file, at, 'an attempt must be a list of steps');
      return steps.map((step, s) => parseStep(step, file, `${at}[${s}]`));
    });
  }
  return { file, stages };
}

function parseStep(step: unknown, file: string, at: string): ScriptStep {
  const fail = (rule: string): never => {
    throw new ScriptError(file, at, rule);
  };
  if (step === 'end_turn') return { kind: 'end_turn' };
  if (!isObj(step) || Object.keys(step).length !== 1) return fail(`a step is a mapping with exactly one of ${STEP_KINDS.join(', ')}`);
  const [key, arg] = Object.entries(step)[0]!;
  const args = (required: string[], optional: string[] = []): Obj => {
    if (!isObj(arg)) return fail(`${key} takes a mapping with ${required.join(', ')}`);
    const missing = required.filter((k) => !(k in arg));
    if (missing.length) fail(`${key} is missing ${missing.join(', ')}`);
    const unknown = Object.keys(arg).filter((k) => !required.includes(k) && !optional.includes(k));
    if (unknown.length) fail(`${key} has unknown key(s) ${unknown.join(', ')}`);
    return arg;
  };
  const text = (value: unknown, name: string): string => (typeof value === 'string' ? value : fail(`${key}.${name} must be a string`));
  switch (key) {
    case 'write_file':
    case 'write_artifact': {
      const a = args(['path', 'content']);
      return { kind: key, path: text(a.path, 'path'), content: text(a.content, 'content') };
    }
    case 'run': {
      if (typeof arg === 'string') return { kind: 'run', command: arg };
      const a = args(['command'], ['timeout_ms']);
      if (a.timeout_ms !== undefined && (typeof a.timeout_ms !== 'number' || a.timeout_ms <= 0)) fail('run.timeout_ms must be a positive number');
      return { kind: 'run', command: text(a.command, 'command'), ...(a.timeout_ms !== undefined ? { timeout_ms: a.timeout_ms as number } : {}) };
    }
    case 'ask_operator': {
      const a = args(['kind', 'question'], ['artifacts', 'questions']);
      return { kind: 'ask_operator', args: a };
    }
    case 'emit':
      if (!isObj(arg)) return fail('emit takes the envelope mapping (status, summary, artifacts, payload, ...)');
      return { kind: 'emit', envelope: arg };
    case 'end_turn':
      if (arg !== null && !(isObj(arg) && Object.keys(arg).length === 0)) fail('end_turn takes no arguments');
      return { kind: 'end_turn' };
    case 'provider_error': {
      const a = args(['message']);
      return { kind: 'provider_error', message: text(a.message, 'message') };
    }
    case 'sleep': {
      const a = args(['ms']);
      if (typeof a.ms !== 'number' || a.ms < 0) fail('sleep.ms must be a non-negative number');
      return { kind: 'sleep', ms: a.ms as number };
    }
    default:
      return fail(`unknown step ${key}; steps are ${STEP_KINDS.join(', ')}`);
  }
}
