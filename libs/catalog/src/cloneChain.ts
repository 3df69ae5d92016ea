import type { CloneRole } from '@stageflow/domain';
import { at, type IssueSink, type Site } from './issues';
import { isPlainObject, isPositiveInteger } from './guards';
import type { SitedEdge, SitedLoop } from './routes';
import { bareNamedRef } from './schemaRefs';

const DAG = 'pipeline.dag_error';

export interface CloneNode {
  readonly id: string;
  readonly site: Site;
  readonly edges: readonly SitedEdge[];
  readonly loops: readonly SitedLoop[];
  /** io schemas as written (refs not inlined): the chain is recognised by its named $ref. */
  readonly rawInput: unknown;
  readonly rawOutput: unknown;
  readonly cloneCap: unknown;
  readonly cloneMode: unknown;
}

export interface CloneChain {
  readonly emitter: string;
  readonly child: string;
  readonly join: string;
  readonly arrayField: string;
  readonly cap: number;
  readonly mode: 'parallel' | 'sequential';
}

interface OutputShape {
  readonly namedRefArrays: readonly { field: string; ref: string }[];
  readonly otherArrayFields: readonly string[];
  readonly rootArray: boolean;
}

export function inspectOutput(schema: unknown): OutputShape {
  if (!isPlainObject(schema)) return { namedRefArrays: [], otherArrayFields: [], rootArray: false };
  if (schema.type === 'array') return { namedRefArrays: [], otherArrayFields: [], rootArray: true };
  const namedRefArrays: { field: string; ref: string }[] = [];
  const otherArrayFields: string[] = [];
  if (schema.type === 'object' && isPlainObject(schema.properties)) {
    for (const [field, prop] of Object.entries(schema.properties)) {
      if (!isPlainObject(prop) || prop.type !== 'array') continue;
      const ref = bareNamedRef(prop.items);
      if (ref !== undefined) namedRefArrays.push({ field, ref });
      else otherArrayFields.push(field);
    }
  }
  return { namedRefArrays, otherArrayFields, rootArray: false };
}

/** True when `child` takes exactly one element of an array that `parent` outputs (a clone edge). */
export function isCloneEdge(parentOutput: unknown, childInput: unknown): boolean {
  const ref = bareNamedRef(childInput);
  if (ref === undefined || !isPlainObject(parentOutput)) return false;
  if (parentOutput.type === 'array') return bareNamedRef(parentOutput.items) === ref;
  return inspectOutput(parentOutput).namedRefArrays.some((array) => array.ref === ref);
}

/**
 * Recognises Clone Chains (emitter -> clone child -> Join, bound by a named $ref) and enforces their
 * sealed shape; anything that looks like a chain but breaks the shape is pipeline.dag_error.
 * Also: clone_cap/clone_mode only on emitters (and both required there), no loop from an emitter
 * or clone child, no loop into any chain role, no stage in two chains.
 */
export function checkCloneChains(nodes: readonly CloneNode[], parents: ReadonlyMap<string, readonly string[]>, sink: IssueSink): Map<string, CloneRole> {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parentCount = (id: string): number => parents.get(id)?.length ?? 0;
  const fail = (node: CloneNode, message: string, site: Site = node.site): void => {
    sink.error(DAG, `stage "${node.id}": ${message}`, site, node.id);
  };
  const sealedPath = (emitter: CloneNode, childId: string): boolean => {
    const child = byId.get(childId);
    if (emitter.edges.length !== 1 || emitter.edges[0].if !== undefined || child === undefined) return false;
    if (parentCount(childId) !== 1 || child.edges.length !== 1 || child.edges[0].if !== undefined) return false;
    return byId.has(child.edges[0].to) && parentCount(child.edges[0].to) === 1;
  };
  const takesNamedRef = (id: string): boolean => bareNamedRef(byId.get(id)?.rawInput) !== undefined;

  const chains: CloneChain[] = [];
  for (const emitter of nodes) {
    const edges = emitter.edges;
    if (edges.length === 0) continue;
    const shape = inspectOutput(emitter.rawOutput);
    const hasPolicy = emitter.cloneCap !== undefined || emitter.cloneMode !== undefined;
    if (shape.namedRefArrays.length >= 2) {
      fail(emitter, 'Clone Chain emitter output must have exactly one named $ref Clone Array, found ' + shape.namedRefArrays.map((a) => a.field).join(', '));
      continue;
    }
    if (shape.rootArray) {
      if (hasPolicy || edges.some((edge) => takesNamedRef(edge.to) && sealedPath(emitter, edge.to))) {
        fail(emitter, 'Clone Chain emitter output is a root-level array, which is not a Clone Array (use an object with one array property whose items are a named $ref)');
      }
      continue;
    }
    if (shape.namedRefArrays.length === 0) {
      const lookalike = edges.some((edge) => takesNamedRef(edge.to) && (byId.get(edge.to)?.edges.length ?? 0) > 0);
      if (shape.otherArrayFields.length > 0 && (lookalike || hasPolicy)) {
        fail(emitter, 'Clone Chain emitter Clone Array items must be a named $ref (#/schemas/<name>), not an inline schema');
      }
      continue;
    }
    const array = shape.namedRefArrays[0];
    if (!hasPolicy && !edges.some((edge) => takesNamedRef(edge.to)) && !edges.some((edge) => sealedPath(emitter, edge.to))) continue;
    const chain = checkOneChain(emitter, array, byId, parentCount, fail);
    if (chain !== undefined) chains.push(chain);
  }
  checkSharedRoles(chains, byId, fail);
  const roles = new Map<string, CloneRole>();
  const emitters = new Set(chains.map((chain) => chain.emitter));
  for (const node of nodes) {
    if (emitters.has(node.id)) continue;
    if (node.cloneCap !== undefined) fail(node, '"clone_cap" is only valid on a Clone Chain emitter (the stage whose output holds the Clone Array)', at(node.site, 'clone_cap'));
    if (node.cloneMode !== undefined) fail(node, '"clone_mode" is only valid on a Clone Chain emitter (the stage whose output holds the Clone Array)', at(node.site, 'clone_mode'));
  }
  for (const chain of chains) {
    roles.set(chain.emitter, { role: 'emitter', child: chain.child, join: chain.join, cap: chain.cap, mode: chain.mode, array_field: chain.arrayField });
  }
  for (const chain of chains) {
    roles.set(chain.child, { role: 'child', emitter: chain.emitter, join: chain.join });
    // A Join that also emits the next chain keeps its emitter role; that chain's emitter names it as join.
    if (!roles.has(chain.join)) roles.set(chain.join, { role: 'join', emitter: chain.emitter, child: chain.child });
  }
  checkChainLoops(nodes, chains, fail);
  return roles;
}

function checkOneChain(
  emitter: CloneNode,
  array: { field: string; ref: string },
  byId: ReadonlyMap<string, CloneNode>,
  parentCount: (id: string) => number,
  fail: (node: CloneNode, message: string, site?: Site) => void,
): CloneChain | undefined {
  const edges = emitter.edges;
  if (edges.length !== 1) {
    const matching = edges.filter((edge) => bareNamedRef(byId.get(edge.to)?.rawInput) === array.ref);
    fail(emitter, matching.length >= 2 ? 'Clone Chain emitter must have exactly one clone child' : 'Clone Chain emitter must have exactly one forward Route (the clone child)');
    return undefined;
  }
  const edge = edges[0];
  if (edge.if !== undefined) return void fail(emitter, 'Clone Chain route to the clone child must not have if', at(edge.site, 'if'));
  const child = byId.get(edge.to);
  if (child === undefined) return undefined;
  if (bareNamedRef(child.rawInput) !== array.ref) {
    return void fail(child, `Clone Chain clone child io.input.schema must be exactly { $ref: "${array.ref}" } (the emitter's Clone Array items)`);
  }
  if (parentCount(child.id) !== 1) return void fail(child, 'Clone Chain clone child must have exactly one parent (the emitter)');
  if (child.edges.length !== 1) return void fail(child, 'Clone Chain clone child must have exactly one forward Route (the Join)');
  if (child.edges[0].if !== undefined) return void fail(child, 'Clone Chain route from the clone child to the Join must not have if', at(child.edges[0].site, 'if'));
  const join = byId.get(child.edges[0].to);
  if (join === undefined) return undefined;
  if (parentCount(join.id) !== 1) return void fail(join, 'Clone Chain Join must have exactly one parent (the clone child)');
  const childShape = inspectOutput(child.rawOutput);
  if (childShape.namedRefArrays.length > 0 || (childShape.rootArray && isPlainObject(child.rawOutput) && bareNamedRef(child.rawOutput.items) !== undefined)) {
    return void fail(child, 'Clone Chain clone child output must not be a Clone Array (chains do not nest)');
  }
  if (emitter.cloneCap === undefined || emitter.cloneMode === undefined) {
    return void fail(emitter, 'Clone Chain emitter requires clone_cap and clone_mode on its pipeline entry');
  }
  if (!isPositiveInteger(emitter.cloneCap)) return void fail(emitter, 'clone_cap must be an integer >= 1', at(emitter.site, 'clone_cap'));
  if (emitter.cloneMode !== 'parallel' && emitter.cloneMode !== 'sequential') {
    return void fail(emitter, 'clone_mode must be "parallel" or "sequential"', at(emitter.site, 'clone_mode'));
  }
  return { emitter: emitter.id, child: child.id, join: join.id, arrayField: array.field, cap: emitter.cloneCap, mode: emitter.cloneMode };
}

function checkSharedRoles(chains: readonly CloneChain[], byId: ReadonlyMap<string, CloneNode>, fail: (node: CloneNode, message: string) => void): void {
  const roles = [
    ['emitter', (chain: CloneChain) => chain.emitter],
    ['clone child', (chain: CloneChain) => chain.child],
    ['Join', (chain: CloneChain) => chain.join],
  ] as const;
  for (const [role, pick] of roles) {
    const seen = new Set<string>();
    for (const chain of chains) {
      const node = byId.get(pick(chain));
      if (node !== undefined && seen.has(node.id)) fail(node, `Clone Chain ${role} is shared with another Clone Chain`);
      seen.add(pick(chain));
    }
  }
}

function checkChainLoops(nodes: readonly CloneNode[], chains: readonly CloneChain[], fail: (node: CloneNode, message: string, site?: Site) => void): void {
  const roleOf = new Map<string, string>();
  for (const chain of chains) {
    roleOf.set(chain.emitter, 'emitter');
    roleOf.set(chain.child, 'clone child');
    roleOf.set(chain.join, 'Join');
  }
  for (const node of nodes) {
    for (const loop of node.loops) {
      const sourceRole = roleOf.get(node.id);
      if (sourceRole === 'emitter' || sourceRole === 'clone child') {
        fail(node, `Clone Chain ${sourceRole} cannot originate a Loop (only the Join may loop, to a stage before the emitter)`, loop.site);
        continue;
      }
      const targetRole = roleOf.get(loop.to);
      if (targetRole !== undefined) fail(node, `Loop target "${loop.to}" is a Clone Chain ${targetRole}; loop to a stage before the emitter`, at(loop.site, 'to'));
    }
  }
}
