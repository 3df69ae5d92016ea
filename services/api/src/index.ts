export * from './api.module';
export * from './read-models';
export * from './run-requests';
export * from './pipeline-bundle';
export * from './pipelines';
export * from './operations';
export * from './mcp/tools';
