/**
 * ask_operator question validation. Guarantees: an accepted question has a kind the stage
 * declares in gate_kinds, a non-empty question, exactly the fields its kind uses
 * (artifact_backed: non-empty run-relative `artifacts`; multi_question: non-empty `questions`
 * with unique ids, each free_text or confirm), and nothing else.
 */
import type { GateKind, OperatorQuestion } from '@stageflow/domain';
import { relativeSegments } from './paths';
import { ToolRefusal } from './result';

type Obj = { readonly [k: string]: unknown };
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseQuestion(args: unknown, gateKinds: readonly GateKind[]): OperatorQuestion {
  if (!isObj(args)) throw new ToolRefusal('ask_operator takes an object {kind, question, ...}');
  const kind = args.kind;
  if (typeof kind !== 'string' || !(gateKinds as readonly string[]).includes(kind)) {
    throw new ToolRefusal(`kind must be one of this stage's gate_kinds: ${gateKinds.join(', ')}; got ${JSON.stringify(kind)}`);
  }
  const gateKind = kind as GateKind;
  if (typeof args.question !== 'string' || !args.question.trim()) throw new ToolRefusal('question must be a non-empty string');
  const allowed = ['kind', 'question', ...(gateKind === 'artifact_backed' ? ['artifacts'] : []), ...(gateKind === 'multi_question' ? ['questions'] : [])];
  const extra = Object.keys(args).filter((k) => !allowed.includes(k));
  if (extra.length) throw new ToolRefusal(`a ${gateKind} question takes only ${allowed.join(', ')}; remove ${extra.join(', ')}`);
  switch (gateKind) {
    case 'free_text':
    case 'confirm':
      return { kind: gateKind, question: args.question };
    case 'artifact_backed':
      return { kind: gateKind, question: args.question, artifacts: parseArtifacts(args.artifacts) };
    case 'multi_question':
      return { kind: gateKind, question: args.question, questions: parseSubQuestions(args.questions) };
    default: {
      const unreachable: never = gateKind;
      throw new ToolRefusal(`unknown kind ${String(unreachable)}`);
    }
  }
}

function parseArtifacts(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ToolRefusal('an artifact_backed question needs artifacts: the run-relative paths write_stage_artifact returned');
  }
  return value.map((p, i) => {
    relativeSegments(p, `artifacts[${i}]`);
    return p as string;
  });
}

function parseSubQuestions(value: unknown): { id: string; kind: 'free_text' | 'confirm'; question: string }[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ToolRefusal('a multi_question needs questions: [{id, kind: free_text|confirm, question}, ...]');
  }
  const ids = new Set<string>();
  return value.map((q, i) => {
    const at = `questions[${i}]`;
    if (!isObj(q)) throw new ToolRefusal(`${at} must be an object {id, kind, question}`);
    const extra = Object.keys(q).filter((k) => !['id', 'kind', 'question'].includes(k));
    if (extra.length) throw new ToolRefusal(`${at} takes only id, kind, question; remove ${extra.join(', ')}`);
    if (typeof q.id !== 'string' || !q.id.trim()) throw new ToolRefusal(`${at}.id must be a non-empty string`);
    if (ids.has(q.id)) throw new ToolRefusal(`${at}.id "${q.id}" is used twice; ids must be unique`);
    ids.add(q.id);
    if (q.kind !== 'free_text' && q.kind !== 'confirm') throw new ToolRefusal(`${at}.kind must be free_text or confirm`);
    if (typeof q.question !== 'string' || !q.question.trim()) throw new ToolRefusal(`${at}.question must be a non-empty string`);
    return { id: q.id, kind: q.kind, question: q.question };
  });
}
