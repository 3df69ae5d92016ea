import type { CloneRole, PipelineDefinition, StageDefinition } from '@stageflow/domain';
import { at, type IssueSink, type Site } from './issues';
import { isNonEmptyString, isPlainObject, type PlainObject } from './guards';
import { checkCloneChains, isCloneEdge } from './cloneChain';
import { checkDag, type DagNode } from './dag';
import { ioSchemaProblems } from './ioSchemaShape';
import { parseOnVerifyFail } from './onVerifyFail';
import { predicateSchemaProblem } from './routeIf';
import { parseRoute, type ParsedRoute } from './routes';
import { ioSubsetMismatch } from './schemaSubset';
import { expandSchemaRefs } from './schemaRefs';
import { normalizeEntry, type EntryDraft, type StageFileLookup } from './stageEntry';
import type { StageBodyDraft } from './stageBody';

const TOP_LEVEL_KEYS = ['id', 'stages', 'model', 'agent', 'schemas'];

/** What validation needs from outside the document; the loader supplies it from the disk. */
export interface PipelineEnvironment {
  readonly loadStage: (uses: string) => StageFileLookup;
  /** The `model:` of the nearest stageflow.yaml, if any. */
  readonly defaultModel?: string;
}

interface ResolvedIo {
  readonly input?: PlainObject;
  readonly output?: PlainObject;
}

/**
 * Validates a parsed pipeline document and resolves it. Pure apart from `env.loadStage`. Reports
 * every error it can find in one pass; later phases skip what earlier errors made meaningless.
 * Returns the resolved pipeline only when no error was reported.
 */
export function validatePipelineDocument(value: unknown, site: Site, sink: IssueSink, env: PipelineEnvironment): PipelineDefinition | undefined {
  if (!isPlainObject(value)) {
    sink.error('pipeline.invalid_shape', 'a pipeline file must be a mapping with id and stages', site);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!TOP_LEVEL_KEYS.includes(key)) sink.error('pipeline.invalid_shape', `unknown key "${key}" at the top of a pipeline (allowed: ${TOP_LEVEL_KEYS.join(', ')})`, at(site, key));
  }
  const pipelineId = isNonEmptyString(value.id) ? value.id : undefined;
  if (pipelineId === undefined) sink.error('pipeline.invalid_shape', 'pipeline id is required (a non-empty string)', at(site, 'id'));
  const pipelineModel = isNonEmptyString(value.model) ? value.model : undefined;
  if (value.model !== undefined && pipelineModel === undefined) sink.error('pipeline.invalid_model', 'pipeline model must be a non-empty string', at(site, 'model'));
  if (value.agent !== undefined && !isNonEmptyString(value.agent)) sink.error('pipeline.invalid_agent', 'pipeline agent must be a non-empty string', at(site, 'agent'));
  const schemas = parseSchemasMap(value.schemas, at(site, 'schemas'), sink);
  const stagesRaw = value.stages;
  const stagesSite = at(site, 'stages');
  if (!Array.isArray(stagesRaw) || stagesRaw.length === 0) {
    sink.error('pipeline.invalid_shape', 'stages must be a non-empty list of stage entries', stagesSite);
    return undefined;
  }
  const stringRefs = stagesRaw.map((entry, index) => [entry, index] as const).filter(([entry]) => typeof entry === 'string');
  for (const [entry, index] of stringRefs) {
    sink.error('pipeline.string_stage_ref', `bare string stage refs are not supported: write { uses: ./${String(entry)}.yaml } or an inline body`, at(stagesSite, index));
  }
  if (stringRefs.length > 0) return undefined;

  const entries: EntryDraft[] = [];
  stagesRaw.forEach((raw, index) => {
    if (!isPlainObject(raw)) {
      sink.error('pipeline.invalid_shape', `stages[${index}] must be a mapping (uses: or an inline body)`, at(stagesSite, index));
      return;
    }
    const entry = normalizeEntry(raw, index, at(stagesSite, index), sink, env.loadStage);
    if (entry !== undefined) entries.push(entry);
  });

  const models = resolveModels(entries, pipelineModel, env.defaultModel, site, sink);
  const io = new Map<string, ResolvedIo>();
  for (const entry of entries) if (entry.body !== undefined) io.set(entry.id, resolveIo(entry.body, schemas, entry.id, sink));

  const routes = new Map<string, ParsedRoute>();
  const dagNodes: DagNode[] = entries.map((entry) => {
    const route = parseRoute(entry.raw.route, at(entry.site, 'route'), sink, entry.id);
    routes.set(entry.id, route);
    return { id: entry.id, site: entry.site, entry: readFlag(entry, 'entry', false, sink), replaySafe: readFlag(entry, 'replay_safe', true, sink), edges: route.edges, loops: route.loops };
  });
  const dag = checkDag(dagNodes, sink, site.file);
  const roles = checkCloneChains(
    dagNodes.map((node, i) => ({
      ...node,
      rawInput: entries[i].body?.io?.input,
      rawOutput: entries[i].body?.io?.output,
      cloneCap: entries[i].raw.clone_cap,
      cloneMode: entries[i].raw.clone_mode,
    })),
    dag.parents,
    sink,
  );
  applyCloneCaps(roles, io);
  checkRouteIfs(dagNodes, io, sink);
  checkEdgesIo(entries, dagNodes, io, sink);
  const onVerifyFail = new Map(entries.filter((e) => e.raw.on_verify_fail !== undefined).map((e) => [e.id, parseOnVerifyFail(e.raw.on_verify_fail, e.body?.verify, at(e.site, 'on_verify_fail'), sink, e.id)]));
  for (const entry of entries) if (entry.body !== undefined) checkVerifyAgainstBody(entry.body, io.get(entry.id), entry.id, sink);

  if (sink.errorCount > 0 || pipelineId === undefined) return undefined;
  const stages = entries.map((entry): StageDefinition => {
    const body = entry.body as StageBodyDraft;
    const stageIo = io.get(entry.id) as Required<ResolvedIo>;
    const route = routes.get(entry.id) as ParsedRoute;
    const policy = onVerifyFail.get(entry.id);
    const role: CloneRole | undefined = roles.get(entry.id);
    return {
      id: entry.id,
      system_prompt: body.system_prompt as string,
      model: models.get(entry.id) as string,
      io: { input: { schema: stageIo.input }, output: { schema: stageIo.output } },
      verify: body.verify,
      gate_kinds: body.gate_kinds,
      ...(body.timeout_ms !== undefined ? { timeout_ms: body.timeout_ms } : {}),
      ...(body.network !== undefined ? { network: body.network } : {}),
      entry: dag.allRoots || entry.raw.entry === true,
      route: route.edges.map(({ site: _site, ...edge }) => edge),
      ...(route.loops[0] !== undefined ? { loop: stripSite(route.loops[0]) } : {}),
      ...(policy !== undefined ? { on_verify_fail: policy } : {}),
      replay_safe: entry.raw.replay_safe !== false,
      ...(role !== undefined ? { clone: role } : {}),
      source: { file: entry.bodyFile, ...(entry.uses !== undefined ? { uses: entry.uses } : {}) },
    };
  });
  return { id: pipelineId, ...(pipelineModel !== undefined ? { model: pipelineModel } : {}), stages };
}

function stripSite<T extends { site: Site }>(value: T): Omit<T, 'site'> {
  const { site: _site, ...rest } = value;
  return rest;
}

function parseSchemasMap(raw: unknown, site: Site, sink: IssueSink): PlainObject | undefined {
  if (raw === undefined) return undefined;
  if (!isPlainObject(raw)) {
    sink.error('pipeline.invalid_shape', 'schemas must be a mapping of name -> JSON schema', site);
    return undefined;
  }
  for (const [name, schema] of Object.entries(raw)) {
    if (!isPlainObject(schema)) sink.error('pipeline.invalid_shape', `schemas.${name} must be a schema mapping`, at(site, name));
  }
  return raw;
}

function readFlag(entry: EntryDraft, key: 'entry' | 'replay_safe', fallback: boolean, sink: IssueSink): boolean {
  const value = entry.raw[key];
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  sink.error('pipeline.invalid_shape', `stage "${entry.id}": ${key} must be true or false`, at(entry.site, key), entry.id);
  return fallback;
}

/** stage.model ?? pipeline.model ?? stageflow.yaml model; a pipeline default filling a stage warns. */
function resolveModels(entries: readonly EntryDraft[], pipelineModel: string | undefined, defaultModel: string | undefined, site: Site, sink: IssueSink): Map<string, string> {
  const models = new Map<string, string>();
  const filledByPipeline: string[] = [];
  for (const entry of entries) {
    if (entry.body === undefined) continue;
    const model = entry.body.model ?? pipelineModel ?? defaultModel;
    if (model === undefined) {
      sink.error('stage.missing_model', `stage "${entry.id}": no model: set model on the stage, on the pipeline, or in stageflow.yaml`, entry.body.site, entry.id);
      continue;
    }
    if (entry.body.model === undefined && pipelineModel !== undefined) filledByPipeline.push(entry.id);
    models.set(entry.id, model);
  }
  if (filledByPipeline.length > 0) {
    sink.warn('pipeline.model_applies', `pipeline model "${pipelineModel}" applies to stages without their own model: ${filledByPipeline.join(', ')}`, at(site, 'model'));
  }
  return models;
}

function resolveIo(body: StageBodyDraft, schemas: PlainObject | undefined, stageId: string, sink: IssueSink): ResolvedIo {
  if (body.io === undefined) return {};
  const resolved: { input?: PlainObject; output?: PlainObject } = {};
  for (const side of ['input', 'output'] as const) {
    const where = at(body.site, 'io', side, 'schema');
    const invalidCode = side === 'output' ? 'stage.invalid_payload_schema' : 'stage.invalid_input_schema';
    const expansion = expandSchemaRefs(body.io[side], schemas);
    if (!expansion.ok) {
      const code = expansion.reason === 'unresolved' ? 'stage.unresolved_schema_ref' : invalidCode;
      sink.error(code, `stage "${stageId}": io.${side}.${expansion.message}`, where, stageId);
      continue;
    }
    const problems = ioSchemaProblems(expansion.schema);
    for (const problem of problems) sink.error(invalidCode, `stage "${stageId}": io.${side}.${problem}`, where, stageId);
    if (problems.length === 0) resolved[side] = expansion.schema;
  }
  return resolved;
}

/** The Clone Array of an emitter holds 1..clone_cap items: the emitter's emit is held to that. */
function applyCloneCaps(roles: ReadonlyMap<string, CloneRole>, io: Map<string, ResolvedIo>): void {
  for (const [id, role] of roles) {
    if (role.role !== 'emitter') continue;
    const output = io.get(id)?.output;
    const properties = output?.properties;
    if (output === undefined || !isPlainObject(properties) || !isPlainObject(properties[role.array_field])) continue;
    const capped = { ...(properties[role.array_field] as PlainObject), minItems: 1, maxItems: role.cap };
    io.set(id, { ...io.get(id), output: { ...output, properties: { ...properties, [role.array_field]: capped } } });
  }
}

function checkRouteIfs(nodes: readonly DagNode[], io: ReadonlyMap<string, ResolvedIo>, sink: IssueSink): void {
  for (const node of nodes) {
    const gated = node.edges.filter((edge) => edge.if !== undefined);
    const output = io.get(node.id)?.output;
    for (const edge of gated) {
      if (output === undefined || edge.if === undefined) continue;
      const problem = predicateSchemaProblem(edge.if, output);
      if (problem !== undefined) sink.error('pipeline.route_if_invalid', `stage "${node.id}": route "${edge.to}" if: ${problem}`, at(edge.site, 'if'), node.id);
    }
    if (node.edges.length > 0 && gated.length === node.edges.length) {
      sink.warn('pipeline.route_all_gated', `stage "${node.id}": every forward route entry has if; when none matches, no successor runs`, at(node.site, 'route'), node.id);
    }
  }
}

/** Sequential and fan-in edges: the child's io.input must be a structural subset of the parent's io.output. */
function checkEdgesIo(entries: readonly EntryDraft[], nodes: readonly DagNode[], io: ReadonlyMap<string, ResolvedIo>, sink: IssueSink): void {
  const rawById = new Map(entries.map((entry) => [entry.id, entry.body?.io]));
  for (const node of nodes) {
    const producer = io.get(node.id)?.output;
    for (const edge of node.edges) {
      const consumer = io.get(edge.to)?.input;
      if (producer === undefined || consumer === undefined) continue;
      if (isCloneEdge(rawById.get(node.id)?.output, rawById.get(edge.to)?.input)) continue;
      const mismatch = ioSubsetMismatch(consumer, producer);
      if (mismatch !== undefined) {
        sink.error(
          'pipeline.io_incompatible',
          `edge ${node.id} -> ${edge.to}: io.input is not a structural subset of the parent's io.output (${mismatch})`,
          at(edge.site, 'to'),
          edge.to,
        );
      }
    }
  }
}

/** Gate kinds must be declared in gate_kinds; checkout_changes.path_fields must be required string arrays. */
export function checkVerifyAgainstBody(body: StageBodyDraft, io: ResolvedIo | undefined, stageId: string, sink: IssueSink): void {
  body.verify.forEach((item, index) => {
    const where = at(body.site, 'verify', index);
    if (item.type === 'gate' && !body.gate_kinds.includes(item.kind)) {
      sink.error('pipeline.invalid_verify', `stage "${stageId}": gate check "${item.id}" requires gate_kinds to include "${item.kind}"`, at(where, 'kind'), stageId);
    }
    if (item.type === 'checkout_changes' && item.path_fields !== undefined && io?.output !== undefined) {
      const output = io.output;
      const properties = isPlainObject(output.properties) ? output.properties : {};
      const required = Array.isArray(output.required) ? output.required : [];
      for (const field of item.path_fields) {
        const prop = properties[field];
        const ok = required.includes(field) && isPlainObject(prop) && prop.type === 'array' && isPlainObject(prop.items) && prop.items.type === 'string';
        if (!ok) sink.error('pipeline.invalid_verify', `stage "${stageId}": checkout_changes "${item.id}" path_fields entry "${field}" must name a required array-of-strings field of io.output.schema`, at(where, 'path_fields'), stageId);
      }
    }
  });
}
