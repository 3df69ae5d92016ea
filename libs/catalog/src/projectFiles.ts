import * as fs from 'node:fs';
import * as path from 'node:path';
import { isNonEmptyString, isPlainObject } from './guards';
import type { StageFileLookup } from './stageEntry';
import { readYamlFile } from './yamlSource';

/**
 * The project root bounds every `uses:` path: the given one, else the nearest ancestor holding a
 * stageflow.yaml or .git, else the filesystem root.
 */
export function findProjectRoot(startDir: string): string {
  let dir = path.resolve(startDir);
  for (;;) {
    if (fs.existsSync(path.join(dir, 'stageflow.yaml')) || fs.existsSync(path.join(dir, '.git'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return dir;
    dir = parent;
  }
}

export type ManifestModel = { readonly ok: true; readonly model?: string } | { readonly ok: false; readonly file: string; readonly message: string };

/** The `model:` of the nearest stageflow.yaml between `dir` and the project root (inclusive). */
export function findManifestModel(dir: string, projectRoot: string): ManifestModel {
  let current = path.resolve(dir);
  const root = path.resolve(projectRoot);
  for (;;) {
    const file = path.join(current, 'stageflow.yaml');
    if (fs.existsSync(file)) {
      const read = readYamlFile(file);
      if (!read.ok) return { ok: false, file, message: `stageflow.yaml: ${read.message}` };
      if (read.value === null || read.value === undefined) return { ok: true };
      if (!isPlainObject(read.value)) return { ok: false, file, message: 'stageflow.yaml must be a mapping' };
      if (read.value.model === undefined) return { ok: true };
      if (!isNonEmptyString(read.value.model)) return { ok: false, file, message: 'stageflow.yaml model must be a non-empty string' };
      return { ok: true, model: read.value.model };
    }
    const parent = path.dirname(current);
    if (current === root || parent === current || !isInside(parent, root)) return { ok: true };
    current = parent;
  }
}

/** Reads `uses:` stage files relative to the pipeline's folder, refusing paths that leave the project root. */
export function stageFileReader(pipelineDir: string, projectRoot: string): (uses: string) => StageFileLookup {
  const realRoot = realpathOr(projectRoot);
  return (uses) => {
    if (path.isAbsolute(uses)) return { ok: false, code: 'pipeline.uses_outside_project', message: `uses: "${uses}" must be a path relative to the pipeline's folder` };
    const file = path.resolve(pipelineDir, uses);
    if (!isInside(file, path.resolve(projectRoot))) {
      return { ok: false, code: 'pipeline.uses_outside_project', message: `uses: "${uses}" leaves the project root ${projectRoot}` };
    }
    if (!fs.existsSync(file)) return { ok: false, code: 'pipeline.missing_stage', message: `uses: "${uses}" does not exist (${file})` };
    if (!isInside(realpathOr(file), realRoot)) {
      return { ok: false, code: 'pipeline.uses_outside_project', message: `uses: "${uses}" resolves (through a symlink) outside the project root` };
    }
    const read = readYamlFile(file);
    if (!read.ok) return { ok: false, code: 'stage.load_error', message: `${uses}: ${read.message}` };
    return { ok: true, file, value: read.value, locate: read.locate };
  };
}

export function isInside(file: string, root: string): boolean {
  const relative = path.relative(root, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function realpathOr(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}
