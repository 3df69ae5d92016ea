import { IssueSink, type CatalogIssue } from '../src/issues';
import { validatePipelineDocument } from '../src/validatePipeline';
import { parseYamlText } from '../src/yamlSource';
import type { PipelineDefinition } from '@stageflow/domain';

/** Validates pipeline YAML text with in-memory stage files (for unit tests; no disk). */
export function validateText(
  text: string,
  stageFiles: Record<string, string> = {},
  defaultModel?: string,
): { pipeline?: PipelineDefinition; errors: CatalogIssue[]; warnings: CatalogIssue[] } {
  const sink = new IssueSink();
  const parsed = parseYamlText(text);
  if (!parsed.ok) return { errors: [{ code: 'pipeline.invalid_yaml', message: parsed.message, file: 'mem.pipeline.yaml', path: '' }], warnings: [] };
  const pipeline = validatePipelineDocument(parsed.value, { file: 'mem.pipeline.yaml', locate: parsed.locate, path: [] }, sink, {
    loadStage: (uses) => {
      const source = stageFiles[uses];
      if (source === undefined) return { ok: false, code: 'pipeline.missing_stage', message: `uses: "${uses}" does not exist` };
      const stage = parseYamlText(source);
      if (!stage.ok) return { ok: false, code: 'stage.load_error', message: stage.message };
      return { ok: true, file: uses, value: stage.value, locate: stage.locate };
    },
    ...(defaultModel !== undefined ? { defaultModel } : {}),
  });
  return { ...(pipeline !== undefined ? { pipeline } : {}), errors: sink.errors, warnings: sink.warnings };
}
