import * as path from 'node:path';
import type { PipelineDefinition } from '@stageflow/domain';
import { IssueSink, type CatalogIssue, type Site } from './issues';
import { settle } from './loadResult';
import { findManifestModel, findProjectRoot, stageFileReader } from './projectFiles';
import { validatePipelineDocument } from './validatePipeline';
import { readYamlFile } from './yamlSource';

export interface LoadOptions {
  /** Promote every warning that --strict may promote to an error. */
  readonly strict?: boolean;
  /** Bounds `uses:` paths and the stageflow.yaml search; see findProjectRoot for the default. */
  readonly projectRoot?: string;
}

export interface LoadPipelineResult {
  readonly ok: boolean;
  readonly pipeline?: PipelineDefinition;
  readonly errors: CatalogIssue[];
  readonly warnings: CatalogIssue[];
}

/** Loads, validates and resolves a `*.pipeline.yaml`. Never throws: every failure is an issue. */
export function loadPipeline(file: string, options: LoadOptions = {}): LoadPipelineResult {
  const sink = new IssueSink();
  const absolute = path.resolve(file);
  const dir = path.dirname(absolute);
  const read = readYamlFile(absolute);
  if (!read.ok) {
    const code = read.reason === 'unreadable' ? 'pipeline.load_error' : 'pipeline.invalid_yaml';
    sink.errors.push({ code, message: read.message, file: absolute, path: '', ...(read.line !== undefined ? { line: read.line, column: read.column } : {}) });
    return settle(sink, options.strict === true);
  }
  const projectRoot = path.resolve(options.projectRoot ?? findProjectRoot(dir));
  const manifest = findManifestModel(dir, projectRoot);
  const site: Site = { file: absolute, locate: read.locate, path: [] };
  if (!manifest.ok) {
    sink.errors.push({ code: 'catalog.manifest_invalid', message: manifest.message, file: manifest.file, path: '' });
  }
  const pipeline = validatePipelineDocument(read.value, site, sink, {
    loadStage: stageFileReader(dir, projectRoot),
    ...(manifest.ok && manifest.model !== undefined ? { defaultModel: manifest.model } : {}),
  });
  const settled = settle(sink, options.strict === true);
  return { ...settled, ...(settled.ok && pipeline !== undefined ? { pipeline } : {}) };
}
