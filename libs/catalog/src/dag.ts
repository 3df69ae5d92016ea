import { at, type IssueSink, type Site } from './issues';
import type { SitedEdge, SitedLoop } from './routes';

const DAG = 'pipeline.dag_error';

export interface DagNode {
  readonly id: string;
  readonly site: Site;
  readonly entry: boolean;
  readonly replaySafe: boolean;
  readonly edges: readonly SitedEdge[];
  readonly loops: readonly SitedLoop[];
}

export interface DagFacts {
  /** Stage ids that are unique; edges to other ids were reported and are absent here. */
  readonly parents: ReadonlyMap<string, readonly string[]>;
  /** Undefined when the graph has a cycle (ancestry is meaningless then). */
  readonly ancestors?: ReadonlyMap<string, ReadonlySet<string>>;
  /** True when no stage declares route or entry: every stage then starts the run. */
  readonly allRoots: boolean;
}

/**
 * Graph rules over the pipeline's wiring (all pipeline.dag_error): unique ids, known route
 * targets, at most one loop per stage, an entry stage and no unreachable stage (when the pipeline
 * uses route/entry at all), no cycle of forward edges, and every loop target a strict ancestor
 * of its source with no `replay_safe: false` stage on the replayed path.
 */
export function checkDag(nodes: readonly DagNode[], sink: IssueSink, file: string): DagFacts {
  const byId = new Map<string, DagNode>();
  for (const node of nodes) {
    if (byId.has(node.id)) sink.error(DAG, `Duplicate stage id "${node.id}" in ${file}`, at(node.site, 'id'), node.id);
    else byId.set(node.id, node);
  }
  const parents = new Map<string, string[]>([...byId.keys()].map((id) => [id, []]));
  for (const node of byId.values()) {
    for (const edge of node.edges) {
      if (!byId.has(edge.to)) sink.error(DAG, `stage "${node.id}" has unknown route target "${edge.to}"`, at(edge.site, 'to'), node.id);
      else parents.get(edge.to)?.push(node.id);
    }
    if (node.loops.length > 1) {
      sink.error(DAG, `stage "${node.id}": route supports at most one loop entry, got ${node.loops.length}`, node.loops[1].site, node.id);
    }
  }
  const usesRouting = [...byId.values()].some((node) => node.entry || node.edges.length > 0);
  if (usesRouting) {
    if (![...byId.values()].some((node) => node.entry)) {
      sink.error(DAG, 'no stage is marked entry: true; mark the stages that start the run', at(nodes[0].site), undefined);
    }
    for (const node of byId.values()) {
      if (!node.entry && (parents.get(node.id) ?? []).length === 0) {
        sink.error(DAG, `stage "${node.id}" is unreachable: not marked entry: true and not targeted by any route entry`, node.site, node.id);
      }
    }
  }
  const order = topologicalOrder(byId, parents);
  if (order === undefined) {
    sink.error(DAG, 'dependency cycle detected among forward route entries (use a { type: loop } entry to send work back)', nodes[0].site);
    return { parents, allRoots: !usesRouting };
  }
  const ancestors = new Map<string, Set<string>>();
  for (const id of order) {
    const set = new Set<string>();
    for (const parent of parents.get(id) ?? []) {
      set.add(parent);
      for (const above of ancestors.get(parent) ?? []) set.add(above);
    }
    ancestors.set(id, set);
  }
  for (const node of byId.values()) {
    for (const loop of node.loops.slice(0, 1)) checkLoop(node, loop, byId, ancestors, sink);
  }
  return { parents, ancestors, allRoots: !usesRouting };
}

function checkLoop(node: DagNode, loop: SitedLoop, byId: ReadonlyMap<string, DagNode>, ancestors: ReadonlyMap<string, ReadonlySet<string>>, sink: IssueSink): void {
  const prefix = `stage "${node.id}": feedback_loop target "${loop.to}"`;
  if (!byId.has(loop.to)) {
    sink.error(DAG, `${prefix} is not declared`, at(loop.site, 'to'), node.id);
    return;
  }
  if (!(ancestors.get(node.id)?.has(loop.to) ?? false)) {
    sink.error(DAG, `${prefix} must be an earlier ancestor (reachable from it by forward route entries)`, at(loop.site, 'to'), node.id);
    return;
  }
  const path = [...byId.keys()].filter(
    (id) => id === node.id || id === loop.to || ((ancestors.get(id)?.has(loop.to) ?? false) && (ancestors.get(node.id)?.has(id) ?? false)),
  );
  const unsafe = path.find((id) => byId.get(id)?.replaySafe === false);
  if (unsafe !== undefined) sink.error(DAG, `${prefix} replays replay_safe: false stage "${unsafe}"`, loop.site, node.id);
}

function topologicalOrder(byId: ReadonlyMap<string, DagNode>, parents: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const indegree = new Map<string, number>();
  const children = new Map<string, string[]>();
  for (const id of byId.keys()) children.set(id, []);
  for (const [id, list] of parents) {
    indegree.set(id, list.length);
    for (const parent of list) children.get(parent)?.push(id);
  }
  const queue = [...byId.keys()].filter((id) => indegree.get(id) === 0);
  const order: string[] = [];
  while (queue.length > 0) {
    const id = queue.shift() as string;
    order.push(id);
    for (const child of children.get(id) ?? []) {
      const left = (indegree.get(child) ?? 0) - 1;
      indegree.set(child, left);
      if (left === 0) queue.push(child);
    }
  }
  return order.length === byId.size ? order : undefined;
}
