import { GATE_KINDS, type GateKind, type VerifyItem } from '@stageflow/domain';
import { at, type IssueSink, type Site } from './issues';
import { hasOwn, isNonEmptyString, isPlainObject } from './guards';
import { timeoutProblem } from './timeouts';
import { parseVerify, stageLabel } from './verifyItems';

/** Keys a stage body may carry, inline on a pipeline entry or in a reusable stage file. */
export const BODY_KEYS = ['system_prompt', 'model', 'io', 'verify', 'gate_kinds', 'timeout_ms', 'network'] as const;

/** A stage body as written: io schemas still raw (refs unresolved), everything else checked. */
export interface StageBodyDraft {
  readonly system_prompt?: string;
  readonly model?: string;
  readonly io?: { readonly input: unknown; readonly output: unknown };
  readonly verify: readonly VerifyItem[];
  readonly gate_kinds: readonly GateKind[];
  readonly timeout_ms?: number;
  /** The stage's sandboxed commands get a network (never the host loopback). */
  readonly network?: boolean;
  /** Where the body's keys live (the pipeline entry or the stage file's root). */
  readonly site: Site;
}

/**
 * Checks the body keys of `raw` (other keys are the caller's business). Reports every problem;
 * fields that fail are left out of the draft.
 */
export function parseStageBody(raw: Record<string, unknown>, site: Site, sink: IssueSink, stageId: string | undefined): StageBodyDraft {
  const label = stageLabel(stageId);
  let systemPrompt: string | undefined;
  if (!isNonEmptyString(raw.system_prompt)) {
    sink.error('stage.invalid_shape', `${label}system_prompt is required (a non-empty string)`, at(site, 'system_prompt'), stageId);
  } else {
    systemPrompt = raw.system_prompt;
  }
  let model: string | undefined;
  if (raw.model !== undefined) {
    if (isNonEmptyString(raw.model)) model = raw.model;
    else sink.error('stage.invalid_model', `${label}model must be a non-empty string`, at(site, 'model'), stageId);
  }
  return {
    ...(systemPrompt !== undefined ? { system_prompt: systemPrompt } : {}),
    ...(model !== undefined ? { model } : {}),
    ...optionalIo(parseIo(raw, site, sink, stageId)),
    verify: parseVerify(raw.verify, at(site, 'verify'), sink, stageId),
    gate_kinds: parseGateKinds(raw.gate_kinds, at(site, 'gate_kinds'), sink, stageId),
    ...optionalTimeout(parseTimeout(raw, site, sink, stageId)),
    ...parseNetwork(raw, site, sink, stageId),
    site,
  };
}

function parseIo(raw: Record<string, unknown>, site: Site, sink: IssueSink, stageId: string | undefined): StageBodyDraft['io'] {
  const label = stageLabel(stageId);
  const fail = (message: string, where: Site): undefined => {
    sink.error('stage.invalid_io', `${label}${message}`, where, stageId);
    return undefined;
  };
  if (!hasOwn(raw, 'io') || raw.io === null || raw.io === undefined) {
    return fail('io is required: declare io.input.schema and io.output.schema', at(site, 'io'));
  }
  if (!isPlainObject(raw.io)) return fail('io must be a mapping with input and output', at(site, 'io'));
  const io = raw.io;
  let ok = true;
  for (const key of Object.keys(io)) {
    if (key !== 'input' && key !== 'output') ok = fail(`io: unknown key "${key}" (only input and output)`, at(site, 'io', key)) ?? false;
  }
  const sides: Record<'input' | 'output', unknown> = { input: undefined, output: undefined };
  for (const side of ['input', 'output'] as const) {
    const value = io[side];
    if (!isPlainObject(value) || value.schema === undefined || value.schema === null) {
      ok = fail(`io.${side}.schema is required`, at(site, 'io', side)) ?? false;
      continue;
    }
    for (const key of Object.keys(value)) {
      if (key !== 'schema') ok = fail(`io.${side}: unknown key "${key}" (only schema)`, at(site, 'io', side, key)) ?? false;
    }
    sides[side] = value.schema;
  }
  return ok ? { input: sides.input, output: sides.output } : undefined;
}

function parseGateKinds(raw: unknown, site: Site, sink: IssueSink, stageId: string | undefined): GateKind[] {
  if (raw === undefined || raw === null) return [];
  const label = stageLabel(stageId);
  if (!Array.isArray(raw) || !raw.every((kind) => typeof kind === 'string')) {
    sink.error('stage.invalid_gate_kinds', `${label}gate_kinds must be an array of strings`, site, stageId);
    return [];
  }
  const kinds: GateKind[] = [];
  raw.forEach((kind: string, index) => {
    if (!(GATE_KINDS as readonly string[]).includes(kind)) {
      sink.error('stage.invalid_gate_kinds', `${label}unsupported gate kind "${kind}" (expected ${GATE_KINDS.join(', ')})`, at(site, index), stageId);
    } else if (!kinds.includes(kind as GateKind)) {
      kinds.push(kind as GateKind);
    }
  });
  return kinds;
}

function parseTimeout(raw: Record<string, unknown>, site: Site, sink: IssueSink, stageId: string | undefined): number | undefined {
  if (raw.timeout_ms === undefined) return undefined;
  const problem = timeoutProblem(raw.timeout_ms);
  if (problem === undefined) return raw.timeout_ms as number;
  sink.error('stage.invalid_timeout_ms', `${stageLabel(stageId)}${problem}`, at(site, 'timeout_ms'), stageId);
  return undefined;
}

function parseNetwork(raw: Record<string, unknown>, site: Site, sink: IssueSink, stageId: string | undefined): Pick<StageBodyDraft, 'network'> {
  if (raw.network === undefined) return {};
  if (typeof raw.network === 'boolean') return { network: raw.network };
  sink.error('stage.invalid_network', `${stageLabel(stageId)}network must be a boolean (true opens a sandboxed network without the host loopback)`, at(site, 'network'), stageId);
  return {};
}

function optionalIo(io: StageBodyDraft['io']): Pick<StageBodyDraft, 'io'> {
  return io === undefined ? {} : { io };
}

function optionalTimeout(timeout: number | undefined): Pick<StageBodyDraft, 'timeout_ms'> {
  return timeout === undefined ? {} : { timeout_ms: timeout };
}
