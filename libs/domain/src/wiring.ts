/**
 * Pure rules about a pipeline's wiring that the scheduler and the envelope validator share: which
 * stages a loop replays, what a fork stage may choose, what a clone emitter's array must hold.
 */
import type { StageEnvelope } from './envelope';
import type { CloneInstance } from './events';
import type { StageDefinition } from './pipeline';

/**
 * The stages a feedback loop replays: every stage on a forward path from `target` to `source`,
 * both included, in YAML declaration order. Empty when `target` is not an ancestor of `source`.
 */
export function replayRoute(stages: readonly StageDefinition[], target: string, source: string): string[] {
  const byId = new Map(stages.map((s) => [s.id, s]));
  const reach = (start: string, next: (id: string) => readonly string[]) => {
    const seen = new Set<string>([start]);
    const todo = [start];
    while (todo.length) {
      for (const n of next(todo.pop() as string)) {
        if (!seen.has(n)) {
          seen.add(n);
          todo.push(n);
        }
      }
    }
    return seen;
  };
  const parents = new Map<string, string[]>(stages.map((s) => [s.id, []]));
  for (const s of stages) for (const e of s.route) parents.get(e.to)?.push(s.id);
  const below = reach(target, (id) => (byId.get(id)?.route ?? []).map((e) => e.to));
  const above = reach(source, (id) => parents.get(id) ?? []);
  if (!below.has(source)) return [];
  return stages.filter((s) => below.has(s.id) && above.has(s.id)).map((s) => s.id);
}

/**
 * Why a success envelope's `fork_choice` is illegal for a fork stage, or null when it is legal
 * (001_*: ids must be immediate successors; `one` needs exactly one; `[]` only with
 * `select: subset` and `allow_none: true`). Not a fork stage: null (nothing to check).
 */
export function forkChoiceProblem(stage: StageDefinition, envelope: StageEnvelope): string | null {
  if (!stage.fork || envelope.status !== 'success') return null;
  const choice = envelope.fork_choice;
  if (!choice) return `stage ${stage.id} is a fork stage: a success envelope needs fork_choice`;
  const successors = stage.route.map((e) => e.to);
  const unknown = choice.filter((id) => !successors.includes(id));
  if (unknown.length) return `fork_choice names ${unknown.join(', ')}, not an immediate successor of ${stage.id} (${successors.join(', ')})`;
  if (new Set(choice).size !== choice.length) return 'fork_choice names a successor twice';
  if (stage.fork.select === 'one' && choice.length !== 1) return `fork select: one needs exactly one choice, got ${choice.length}`;
  if (choice.length === 0 && !stage.fork.allow_none) return 'fork_choice: [] needs select: subset with allow_none: true';
  return null;
}

export type CloneArray = { readonly ok: true; readonly instances: readonly CloneInstance[] } | { readonly ok: false; readonly problem: string };

const isPlainObject = (v: unknown): v is { [key: string]: unknown } => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The Clone Instances an emitter's payload mints: `{child}~{n}` for n from 1, each with its array
 * element. The array must hold 1..cap objects; anything else is a problem (never truncated).
 */
export function cloneInstancesOf(emitter: StageDefinition, payload: { readonly [key: string]: unknown } | undefined): CloneArray {
  if (emitter.clone?.role !== 'emitter') return { ok: false, problem: `stage ${emitter.id} is not a clone emitter` };
  const { array_field: field, cap, child } = emitter.clone;
  const items = payload?.[field];
  if (!Array.isArray(items)) return { ok: false, problem: `clone emitter ${emitter.id}: payload field ${field} is not an array` };
  if (items.length < 1) return { ok: false, problem: `clone emitter ${emitter.id}: ${field} is empty (a Clone Array needs 1..${cap} items)` };
  if (items.length > cap) return { ok: false, problem: `clone emitter ${emitter.id}: ${field} has ${items.length} items, above clone_cap ${cap}` };
  const bad = items.findIndex((item) => !isPlainObject(item));
  if (bad >= 0) return { ok: false, problem: `clone emitter ${emitter.id}: ${field}[${bad}] is not an object` };
  return {
    ok: true,
    instances: items.map((item, i) => ({ id: cloneInstanceId(child, i + 1), n: i + 1, item: item as { [key: string]: unknown } })),
  };
}

export const cloneInstanceId = (child: string, n: number) => `${child}~${n}`;
