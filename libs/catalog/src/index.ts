export type { CatalogIssue } from './issues';
export { loadPipeline, type LoadOptions, type LoadPipelineResult, type LoadPipelineResult as LoadResult } from './loadPipeline';
export { loadStageFile, type LoadStageResult, type StageFileDefinition } from './loadStageFile';
export { loadTaskFile, validateTaskDocument, type LoadTaskResult, type TaskDefinition } from './loadTaskFile';
export { validateCommand, formatIssue, type ValidateCommandOptions } from './validateCommand';
export { compileIoSchema, type CompiledIoSchema, type IoValidator } from './compileIoSchema';
export { ioSubsetMismatch } from './schemaSubset';
export { validatePipelineDocument, type PipelineEnvironment } from './validatePipeline';
export { parseYamlText, readYamlFile, MAX_YAML_BYTES, MAX_ALIAS_COUNT, MAX_NESTING_DEPTH } from './yamlSource';
