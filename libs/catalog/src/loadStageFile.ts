import * as path from 'node:path';
import type { GateKind, IoSchema, VerifyItem } from '@stageflow/domain';
import { IssueSink, at, type CatalogIssue, type Site } from './issues';
import { ioSchemaProblems } from './ioSchemaShape';
import { settle } from './loadResult';
import { expandSchemaRefs } from './schemaRefs';
import { validateStageFileDocument } from './stageFile';
import { checkVerifyAgainstBody } from './validatePipeline';
import { readYamlFile } from './yamlSource';

/** A reusable stage file on its own: no wiring, model optional (a pipeline may supply it). */
export interface StageFileDefinition {
  readonly id: string;
  readonly system_prompt: string;
  readonly model?: string;
  readonly io: { readonly input: { readonly schema: IoSchema }; readonly output: { readonly schema: IoSchema } };
  readonly verify: readonly VerifyItem[];
  readonly gate_kinds: readonly GateKind[];
  readonly timeout_ms?: number;
  readonly network?: boolean;
}

export interface LoadStageResult {
  readonly ok: boolean;
  readonly stage?: StageFileDefinition;
  readonly errors: CatalogIssue[];
  readonly warnings: CatalogIssue[];
}

/**
 * Loads one stage file in isolation. A `$ref` cannot resolve here (schemas live on pipelines):
 * it is stage.unresolved_schema_ref, as the same file would resolve once used by a pipeline.
 */
export function loadStageFile(file: string, options: { strict?: boolean } = {}): LoadStageResult {
  const sink = new IssueSink();
  const absolute = path.resolve(file);
  const read = readYamlFile(absolute);
  if (!read.ok) {
    sink.errors.push({ code: read.reason === 'unreadable' ? 'stage.load_error' : 'stage.invalid_yaml', message: read.message, file: absolute, path: '', ...(read.line !== undefined ? { line: read.line, column: read.column } : {}) });
    return settle(sink, options.strict === true);
  }
  const site: Site = { file: absolute, locate: read.locate, path: [] };
  const draft = validateStageFileDocument(read.value, site, sink, true);
  const schemas: Partial<Record<'input' | 'output', IoSchema>> = {};
  if (draft?.body.io !== undefined) {
    for (const side of ['input', 'output'] as const) {
      const expansion = expandSchemaRefs(draft.body.io[side], undefined);
      const where = at(site, 'io', side, 'schema');
      const code = side === 'output' ? 'stage.invalid_payload_schema' : 'stage.invalid_input_schema';
      if (!expansion.ok) {
        sink.error(expansion.reason === 'unresolved' ? 'stage.unresolved_schema_ref' : code, `io.${side}.${expansion.message}`, where, draft.id);
        continue;
      }
      const problems = ioSchemaProblems(expansion.schema);
      for (const problem of problems) sink.error(code, `io.${side}.${problem}`, where, draft.id);
      if (problems.length === 0) schemas[side] = expansion.schema;
    }
  }
  if (draft !== undefined && draft.id !== undefined) checkVerifyAgainstBody(draft.body, schemas, draft.id, sink);
  const settled = settle(sink, options.strict === true);
  if (!settled.ok || draft === undefined || schemas.input === undefined || schemas.output === undefined) return settled;
  const body = draft.body;
  return {
    ...settled,
    stage: {
      id: draft.id as string,
      system_prompt: body.system_prompt as string,
      ...(body.model !== undefined ? { model: body.model } : {}),
      io: { input: { schema: schemas.input }, output: { schema: schemas.output } },
      verify: body.verify,
      gate_kinds: body.gate_kinds,
      ...(body.timeout_ms !== undefined ? { timeout_ms: body.timeout_ms } : {}),
      ...(body.network !== undefined ? { network: body.network } : {}),
    },
  };
}
