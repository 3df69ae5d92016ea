/**
 * Loading an inline pipeline bundle (a run request's pipeline by value) through the catalog:
 * the files are written to a private temporary folder and loaded exactly like files on disk, so
 * a bundled pipeline is validated by the same rules as `sf validate`. Paths are confined.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatIssue, loadPipeline } from '@stageflow/catalog';
import type { InlinePipelineBundle, PipelineDefinition } from '@stageflow/domain';
import { InvalidCommand } from '@stageflow/domain';

const MAX_BUNDLE_BYTES = 2 * 1024 * 1024;
const MAX_BUNDLE_FILES = 200;

function safeRelative(p: string): boolean {
  if (!p || p.includes('\0') || path.isAbsolute(p) || p.includes('\\')) return false;
  return p.split('/').every((seg) => seg !== '..' && seg !== '');
}

export function loadBundle(bundle: InlinePipelineBundle): PipelineDefinition {
  const entries = Object.entries(bundle.files ?? {});
  if (entries.length === 0 || entries.length > MAX_BUNDLE_FILES) throw new InvalidCommand('request.bundle_invalid', `a pipeline bundle holds 1..${MAX_BUNDLE_FILES} files`);
  const bytes = entries.reduce((n, [, text]) => n + Buffer.byteLength(String(text)), 0);
  if (bytes > MAX_BUNDLE_BYTES) throw new InvalidCommand('request.bundle_too_large', `a pipeline bundle is at most ${MAX_BUNDLE_BYTES} bytes`);
  for (const [p, text] of entries) {
    if (!safeRelative(p) || typeof text !== 'string') throw new InvalidCommand('request.bundle_invalid', `bundle path ${JSON.stringify(p)} must be relative, without "..", with text content`);
  }
  if (!(bundle.entry in bundle.files)) throw new InvalidCommand('request.bundle_invalid', `bundle entry ${bundle.entry} is not among its files`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-bundle-'));
  try {
    // A project marker keeps `uses:` paths inside the bundle.
    fs.writeFileSync(path.join(dir, '.stageflow-bundle-root'), '');
    for (const [p, text] of entries) {
      const target = path.join(dir, p);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, text);
    }
    const result = loadPipeline(path.join(dir, bundle.entry), { projectRoot: dir });
    if (!result.ok || !result.pipeline) {
      const issues = result.errors.map((i) => formatIssue({ ...i, file: path.relative(dir, i.file) || i.file }, 'error'));
      throw new InvalidCommand('pipeline.invalid', `pipeline ${bundle.entry} is invalid: ${issues.join('; ')}`);
    }
    return stripSources(result.pipeline, dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Source paths of a bundle are relative to the bundle, not to the temporary folder. */
function stripSources(pipeline: PipelineDefinition, dir: string): PipelineDefinition {
  return {
    ...pipeline,
    stages: pipeline.stages.map((s) => (s.source ? { ...s, source: { ...s.source, file: path.relative(dir, s.source.file) } } : s)),
  };
}
