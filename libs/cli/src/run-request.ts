/**
 * Turning `sf run` flags into a validated run request: the pipeline (validated by the catalog;
 * the runtime never sees an unvalidated pipeline), the task input (checked against every entry
 * stage's io.input.schema), and the checkout (the root of a git working tree, or none).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatIssue, loadPipeline, loadTaskFile } from '@stageflow/catalog';
import { inputLimitProblem, type Checkout, type PipelineDefinition } from '@stageflow/domain';
import { validateStageInput } from '@stageflow/runtime';
import { UsageError } from './output';

export function loadValidPipeline(file: string): PipelineDefinition {
  if (!fs.existsSync(file)) throw new UsageError(`pipeline file not found: ${file}`);
  const result = loadPipeline(file);
  if (!result.ok || !result.pipeline) {
    throw new UsageError([`pipeline ${file} is invalid:`, ...result.errors.map((i) => `  ${formatIssue(i, 'error')}`)].join('\n'));
  }
  return result.pipeline;
}

export function resolveInput(pipeline: PipelineDefinition, options: { input?: string; task?: string }): Record<string, unknown> {
  if (options.input !== undefined && options.task !== undefined) throw new UsageError('give --input or --task, not both');
  let input: Record<string, unknown> = {};
  if (options.task !== undefined) {
    const task = loadTaskFile(options.task, pipeline);
    if (!task.ok || !task.task) {
      throw new UsageError([`task ${options.task} is invalid:`, ...task.errors.map((i) => `  ${formatIssue(i, 'error')}`)].join('\n'));
    }
    input = task.task.input;
  } else if (options.input !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(options.input);
    } catch (err) {
      throw new UsageError(`--input is not JSON: ${(err as Error).message}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--input must be a JSON object');
    input = parsed as Record<string, unknown>;
  }
  const tooBig = inputLimitProblem(input);
  if (tooBig) throw new UsageError(`${options.task !== undefined ? `task ${options.task}` : '--input'}: ${tooBig.message} (${tooBig.code})`);
  for (const stage of pipeline.stages.filter((s) => s.entry)) {
    const problem = validateStageInput(stage, input);
    if (problem) throw new UsageError(`input does not match io.input.schema of entry stage ${stage.id}: ${problem}`);
  }
  return input;
}

/** A `--checkout` must be the root of a git working tree; without one the run gets a fresh repository. */
export function resolveCheckout(dir: string | undefined): Checkout {
  if (dir === undefined) return { kind: 'fresh' };
  const absolute = path.resolve(dir);
  if (!fs.existsSync(absolute) || !fs.statSync(absolute).isDirectory()) throw new UsageError(`--checkout ${dir} is not a directory`);
  let top: string;
  try {
    top = execFileSync('git', ['-C', absolute, 'rev-parse', '--show-toplevel'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    throw new UsageError(`--checkout ${dir} is not inside a git working tree`);
  }
  if (fs.realpathSync(top) !== fs.realpathSync(absolute)) {
    throw new UsageError(`--checkout ${dir} is not the root of its git working tree (the root is ${top})`);
  }
  return { kind: 'path', path: fs.realpathSync(absolute) };
}

export function parseLabels(values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0) throw new UsageError(`--label ${value}: expected key=value`);
    labels[value.slice(0, eq)] = value.slice(eq + 1);
  }
  return labels;
}
