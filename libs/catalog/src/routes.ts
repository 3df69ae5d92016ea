import type { EdgeOutcome, LoopRoute, RouteEdge } from '@stageflow/domain';
import { at, type IssueSink, type Site } from './issues';
import { hasOwn, isNonEmptyString, isPlainObject, isPositiveInteger } from './guards';
import { parsePredicate } from './routeIf';

const DAG = 'pipeline.dag_error';
const IF_INVALID = 'pipeline.route_if_invalid';
const OUTCOMES: readonly EdgeOutcome[] = ['succeeded', 'failed', 'skipped'];
const LOOP_KEYS = ['type', 'to', 'max_replays', 'on_max_replays', 'replay_session'];

export interface SitedEdge extends RouteEdge {
  readonly site: Site;
}
export interface SitedLoop extends LoopRoute {
  readonly site: Site;
}
export interface ParsedRoute {
  readonly edges: readonly SitedEdge[];
  readonly loops: readonly SitedLoop[];
}

/**
 * Parses one stage's `route:`. Shape problems are pipeline.dag_error, `if` problems
 * pipeline.route_if_invalid. An entry whose `if` is invalid keeps its edge (without the `if`) so
 * that one bad predicate does not also make its target look unreachable.
 */
export function parseRoute(raw: unknown, site: Site, sink: IssueSink, stageId: string): ParsedRoute {
  const edges: SitedEdge[] = [];
  const loops: SitedLoop[] = [];
  if (raw === undefined || raw === null) return { edges, loops };
  const prefix = `stage "${stageId}":`;
  if (!Array.isArray(raw) || raw.length === 0) {
    sink.error(DAG, `${prefix} route must be a non-empty list of { to, on?, if? } entries`, site, stageId);
    return { edges, loops };
  }
  const targets = new Set<string>();
  raw.forEach((item, index) => {
    const itemSite = at(site, index);
    if (!isPlainObject(item)) {
      sink.error(DAG, `${prefix} route item must be a mapping { to, on?, if? }`, itemSite, stageId);
      return;
    }
    if (!isNonEmptyString(item.to)) {
      sink.error(DAG, `${prefix} route item must have a non-empty "to" stage id`, at(itemSite, 'to'), stageId);
      return;
    }
    if (targets.has(item.to)) {
      sink.error(DAG, `${prefix} route contains duplicate target "${item.to}"`, at(itemSite, 'to'), stageId);
      return;
    }
    targets.add(item.to);
    if (item.type !== undefined && item.type !== 'loop') {
      sink.error(DAG, `${prefix} route item: type must be "loop" when present, got ${JSON.stringify(item.type)}`, at(itemSite, 'type'), stageId);
      return;
    }
    if (item.type === 'loop') {
      const loop = parseLoop(item, itemSite, sink, stageId);
      if (loop !== undefined) loops.push(loop);
      return;
    }
    const edge = parseForward(item, item.to, itemSite, sink, stageId);
    if (edge !== undefined) edges.push(edge);
  });
  return { edges, loops };
}

function parseForward(item: Record<string, unknown>, to: string, site: Site, sink: IssueSink, stageId: string): SitedEdge | undefined {
  const prefix = `stage "${stageId}": route "${to}"`;
  let ok = true;
  for (const key of Object.keys(item)) {
    if (key !== 'to' && key !== 'on' && key !== 'if') {
      sink.error(DAG, `${prefix}: unknown key "${key}"`, at(site, key), stageId);
      ok = false;
    }
  }
  let on: EdgeOutcome[] = ['succeeded'];
  if (item.on !== undefined) {
    const list = Array.isArray(item.on) ? item.on : [item.on];
    const valid = list.length > 0 && list.every((v) => typeof v === 'string' && (OUTCOMES as readonly string[]).includes(v)) && new Set(list).size === list.length;
    if (!valid) {
      sink.error(DAG, `${prefix}: on must be a non-empty unique subset of ${OUTCOMES.join(', ')}`, at(site, 'on'), stageId);
      ok = false;
    } else {
      on = list as EdgeOutcome[];
    }
  }
  if (!ok) return undefined;
  if (!hasOwn(item, 'if')) return { to, on, site };
  const parsed = parsePredicate(item.if);
  if (!parsed.ok) {
    sink.error(IF_INVALID, `${prefix} if ${parsed.message}`, at(site, 'if'), stageId);
    return { to, on, site };
  }
  if (on.length !== 1 || on[0] !== 'succeeded') {
    sink.error(IF_INVALID, `${prefix}: if is evaluated on success only, so it cannot be combined with on: [${on.join(', ')}]`, at(site, 'on'), stageId);
    return { to, on, site };
  }
  return { to, on, if: parsed.value, site };
}

function parseLoop(item: Record<string, unknown>, site: Site, sink: IssueSink, stageId: string): SitedLoop | undefined {
  const to = item.to as string;
  const prefix = `stage "${stageId}": route "${to}"`;
  let ok = true;
  const fail = (code: string, key: string, message: string): void => {
    sink.error(code, `${prefix}: ${message}`, at(site, key), stageId);
    ok = false;
  };
  for (const key of Object.keys(item)) {
    if (key === 'if') fail(IF_INVALID, key, 'if is not allowed on a { type: loop } entry');
    else if (!LOOP_KEYS.includes(key)) fail(DAG, key, `unknown key "${key}" on a loop entry`);
  }
  if (!isPositiveInteger(item.max_replays)) fail(DAG, 'max_replays', 'max_replays must be a positive integer');
  if (item.on_max_replays !== 'require_continue' && item.on_max_replays !== 'wait_for_human') {
    fail(DAG, 'on_max_replays', 'on_max_replays must be "require_continue" or "wait_for_human"');
  }
  if (item.replay_session !== 'resume' && item.replay_session !== 'new_session') {
    fail(DAG, 'replay_session', 'replay_session must be "resume" or "new_session"');
  }
  if (!ok) return undefined;
  return {
    type: 'loop',
    to,
    max_replays: item.max_replays as number,
    on_max_replays: item.on_max_replays as LoopRoute['on_max_replays'],
    replay_session: item.replay_session as string,
    site,
  };
}
