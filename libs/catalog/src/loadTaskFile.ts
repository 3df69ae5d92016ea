import * as path from 'node:path';
import type { PipelineDefinition } from '@stageflow/domain';
import { compileIoSchema } from './compileIoSchema';
import { IssueSink, at, type CatalogIssue, type Site } from './issues';
import { isNonEmptyString, isPlainObject, type PlainObject } from './guards';
import { readYamlFile } from './yamlSource';

const TASK_KEYS = ['id', 'goal', 'context', 'constraints', 'checkout', 'input'];

/** The run input: what an operator asks a pipeline to do. */
export interface TaskDefinition {
  readonly id: string;
  readonly goal: string;
  readonly context?: string;
  readonly constraints?: string;
  readonly checkout?: string;
  /** Omitted input is {}. */
  readonly input: PlainObject;
}

export interface LoadTaskResult {
  readonly ok: boolean;
  readonly task?: TaskDefinition;
  readonly errors: CatalogIssue[];
  readonly warnings: CatalogIssue[];
}

/** Loads a `*.task.yaml` and checks its input against every entry stage's io.input.schema. */
export function loadTaskFile(file: string, pipeline: PipelineDefinition): LoadTaskResult {
  const sink = new IssueSink();
  const absolute = path.resolve(file);
  const read = readYamlFile(absolute);
  if (!read.ok) {
    sink.errors.push({ code: 'task.load_error', message: read.message, file: absolute, path: '', ...(read.line !== undefined ? { line: read.line, column: read.column } : {}) });
    return { ok: false, errors: sink.errors, warnings: [] };
  }
  const task = validateTaskDocument(read.value, { file: absolute, locate: read.locate, path: [] }, sink, pipeline);
  return { ok: sink.errorCount === 0, ...(sink.errorCount === 0 && task !== undefined ? { task } : {}), errors: sink.errors, warnings: sink.warnings };
}

/** Pure part of loadTaskFile. */
export function validateTaskDocument(value: unknown, site: Site, sink: IssueSink, pipeline: PipelineDefinition): TaskDefinition | undefined {
  if (!isPlainObject(value)) {
    sink.error('task.invalid_shape', 'a task file must be a mapping with id and goal', site);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!TASK_KEYS.includes(key)) sink.error('task.invalid_shape', `unknown key "${key}" in a task file`, at(site, key));
  }
  for (const key of ['id', 'goal']) {
    if (!isNonEmptyString(value[key])) sink.error('task.invalid_shape', `${key} is required (a non-empty string)`, at(site, key));
  }
  for (const key of ['context', 'constraints', 'checkout']) {
    if (value[key] !== undefined && typeof value[key] !== 'string') sink.error('task.invalid_shape', `${key} must be a string`, at(site, key));
  }
  if (value.input !== undefined && !isPlainObject(value.input)) {
    sink.error('task.invalid_shape', 'input must be a mapping', at(site, 'input'));
    return undefined;
  }
  const input = (value.input as PlainObject | undefined) ?? {};
  for (const stage of pipeline.stages.filter((s) => s.entry)) {
    const compiled = compileIoSchema(stage.io.input.schema);
    const problems = compiled.ok ? compiled.validate(input) : compiled.problems;
    for (const problem of problems) {
      sink.error('task.entry_input_unmet', `entry stage "${stage.id}": task input does not match its io.input.schema: ${problem.replace(/^payload/, 'input')}`, at(site, 'input'), stage.id);
    }
  }
  if (sink.errorCount > 0) return undefined;
  return {
    id: value.id as string,
    goal: value.goal as string,
    ...(typeof value.context === 'string' ? { context: value.context } : {}),
    ...(typeof value.constraints === 'string' ? { constraints: value.constraints } : {}),
    ...(typeof value.checkout === 'string' ? { checkout: value.checkout } : {}),
    input,
  };
}
