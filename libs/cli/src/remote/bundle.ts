/**
 * A pipeline by value (`{entry, files}`) from files on this machine, for a cluster that cannot see
 * them: the pipeline file, every stage file its `uses:` names, and each stageflow.yaml between the
 * pipeline's folder and its project root (whose `model:` the catalog reads).
 *
 * Guarantees: paths are relative to the project root (the nearest ancestor holding a stageflow.yaml
 * or .git, as the catalog finds it), so the same files bundle to the same bytes from any working
 * directory; the pipeline is validated here first, so an invalid one is refused before it is sent.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseYamlText } from '@stageflow/catalog';
import type { InlinePipelineBundle, PipelineDefinition } from '@stageflow/domain';
import { UsageError } from '../output';
import { loadValidPipeline } from '../run-request';

export interface LocalPipeline {
  readonly pipeline: PipelineDefinition;
  readonly bundle: InlinePipelineBundle;
}

export function bundlePipeline(file: string): LocalPipeline {
  const pipeline = loadValidPipeline(file);
  const absolute = fs.realpathSync(path.resolve(file));
  const dir = path.dirname(absolute);
  const root = projectRoot(dir);
  const read = (p: string) => fs.readFileSync(p, 'utf8');
  const files: Record<string, string> = {};
  const add = (p: string) => (files[path.relative(root, p).split(path.sep).join('/')] = read(p));
  add(absolute);
  for (const uses of usedStageFiles(read(absolute))) add(fs.realpathSync(path.resolve(dir, uses)));
  for (let current = dir; ; current = path.dirname(current)) {
    const manifest = path.join(current, 'stageflow.yaml');
    if (fs.existsSync(manifest)) add(manifest);
    if (current === root || path.dirname(current) === current) break;
  }
  for (const p of Object.keys(files)) {
    if (p.startsWith('..')) throw new UsageError(`${p} lies outside the project root ${root}; it cannot be bundled`);
  }
  return { pipeline, bundle: { entry: path.relative(root, absolute).split(path.sep).join('/'), files } };
}

function projectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'stageflow.yaml')) || fs.existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return dir;
  }
}

/** The `uses:` paths of a (validated) pipeline document. */
function usedStageFiles(text: string): string[] {
  const parsed = parseYamlText(text);
  const doc = parsed.ok ? parsed.value : undefined;
  const stages = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as { stages?: unknown }).stages : undefined;
  if (!Array.isArray(stages)) return [];
  return stages.flatMap((s: unknown) => (s !== null && typeof s === 'object' && typeof (s as { uses?: unknown }).uses === 'string' ? [(s as { uses: string }).uses] : []));
}
