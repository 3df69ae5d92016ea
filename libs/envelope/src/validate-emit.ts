/**
 * The emit_stage_envelope contract of 001_*. Guarantees: an `ok` result is a StageEnvelope that
 * satisfies every rule below and carries only known fields; a rejection lists every problem
 * found, each saying what to change. Pure: no I/O, no clock.
 */
import { MAX_INPUT_DEPTH, nestsDeeperThan, type FeedbackLoopAction, type StageEnvelope } from '@stageflow/domain';
import { attestationErrors } from './attestations';
import { feedbackLoopErrors } from './feedback-loop';
import { isObject, isStringArray, show, unknownKeys, type JsonObject } from './fields';
import { forkChoiceErrors } from './fork-choice';
import type { EmitContext } from './types';

export type EmitValidation = { readonly ok: true; readonly envelope: StageEnvelope } | { readonly ok: false; readonly error: string };

export const ENVELOPE_FIELDS = [
  'status',
  'summary',
  'artifacts',
  'payload',
  'fork_choice',
  'feedback_loop',
  'checklist_attestations',
  'stage_id',
  'notes',
] as const;

export function validateEmit(raw: unknown, ctx: EmitContext): EmitValidation {
  const parsed = parse(raw);
  if (typeof parsed === 'string') return reject([parsed]);
  const errors = fieldErrors(parsed, ctx);
  if (errors.length) return reject(errors);
  return { ok: true, envelope: toEnvelope(parsed) };
}

function reject(errors: readonly string[]): EmitValidation {
  const body = errors.length === 1 ? errors[0] : errors.map((e) => `- ${e}`).join('\n');
  return { ok: false, error: `emit_stage_envelope rejected: ${errors.length === 1 ? body : `\n${body}`}` };
}

/** The envelope object, or a message saying why the input is not one. */
function parse(raw: unknown): JsonObject | string {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      return `the envelope is not valid JSON (${(err as Error).message}); send one JSON object`;
    }
  }
  // The payload may nest MAX_INPUT_DEPTH levels below the envelope object.
  if (nestsDeeperThan(value, MAX_INPUT_DEPTH + 1)) return `the envelope nests deeper than ${MAX_INPUT_DEPTH} levels below payload; send a flatter payload`;
  if (!isObject(value)) return `the envelope must be a JSON object with status, summary, artifacts and payload, got ${show(value)}`;
  return value;
}

function fieldErrors(env: JsonObject, ctx: EmitContext): string[] {
  const { stage } = ctx;
  const errors: string[] = [];
  if ('clone_forks' in env) {
    errors.push('clone_forks is not a valid envelope field: agents do not emit clone lists; a Clone Chain emitter succeeds with a valid payload only and Stageflow mints the Clone Instances. Remove clone_forks');
  }
  const extra = unknownKeys(env, ENVELOPE_FIELDS).filter((k) => k !== 'clone_forks');
  if (extra.length) errors.push(`unknown field(s) ${extra.join(', ')}; an envelope has only ${ENVELOPE_FIELDS.join(', ')}`);

  const status = env.status;
  if (status !== 'success' && status !== 'failure') {
    errors.push(`status must be "success" or "failure", got ${show(status)}`);
  }
  if (typeof env.summary !== 'string' || !env.summary.trim()) errors.push('summary is required: a non-empty human-readable summary of what the attempt did');
  errors.push(...artifactErrors(env.artifacts));
  if (env.stage_id !== undefined && env.stage_id !== stage.id) {
    errors.push(`stage_id must echo this stage's id "${stage.id}" (or be omitted), got ${show(env.stage_id)}`);
  }
  if (env.notes !== undefined && typeof env.notes !== 'string') errors.push(`notes must be a string, got ${show(env.notes)}`);
  errors.push(...attestationErrors(env.checklist_attestations));
  if (status !== 'success' && status !== 'failure') return errors;

  errors.push(...payloadErrors(env.payload, status, ctx));
  const sendBack = isObject(env.feedback_loop) && env.feedback_loop.action === 'send_back';
  errors.push(...forkChoiceErrors(stage, status, env.fork_choice, sendBack));
  errors.push(
    ...feedbackLoopErrors({
      stage,
      status,
      value: env.feedback_loop,
      hasForkChoice: env.fork_choice !== undefined,
      loopAllowsSendBack: ctx.loopAllowsSendBack,
    }),
  );
  return errors;
}

function artifactErrors(value: unknown): string[] {
  if (value === undefined) return ['artifacts is required: an array of run-relative artifact paths; pass [] when there are none'];
  if (!isStringArray(value)) return [`artifacts must be an array of strings (run-relative paths, [] when none), got ${show(value)}`];
  const bad = value.filter((p) => !p.trim() || p.startsWith('/') || p.includes('\0') || p.split('/').includes('..'));
  return bad.length
    ? [`artifacts must be run-relative paths such as write_stage_artifact returns (no empty, absolute or '..' paths); fix ${bad.map((p) => show(p)).join(', ')}`]
    : [];
}

function payloadErrors(value: unknown, status: 'success' | 'failure', ctx: EmitContext): string[] {
  if (value === undefined) {
    return status === 'success' ? ['payload is required on success: an object matching the stage io.output.schema'] : [];
  }
  if (!isObject(value)) return [`payload must be a JSON object, got ${show(value)}`];
  if (status !== 'success') return [];
  const problem = ctx.validatePayload(ctx.stage.io.output.schema, value);
  return problem === null ? [] : [`payload does not match io.output.schema: ${problem}`];
}

function toEnvelope(env: JsonObject): StageEnvelope {
  const out: { -readonly [K in keyof StageEnvelope]: StageEnvelope[K] } = {
    status: env.status as StageEnvelope['status'],
    summary: env.summary as string,
    artifacts: [...(env.artifacts as string[])],
  };
  if (env.payload !== undefined) out.payload = env.payload as JsonObject;
  if (env.fork_choice !== undefined) out.fork_choice = [...(env.fork_choice as string[])];
  if (env.feedback_loop !== undefined) out.feedback_loop = env.feedback_loop as FeedbackLoopAction;
  if (env.checklist_attestations !== undefined) {
    out.checklist_attestations = (env.checklist_attestations as { check_id: string; items: string[] }[]).map((a) => ({
      check_id: a.check_id,
      items: [...a.items],
    }));
  }
  if (env.stage_id !== undefined) out.stage_id = env.stage_id as string;
  if (env.notes !== undefined) out.notes = env.notes as string;
  return out;
}
