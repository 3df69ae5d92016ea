export * from './agent-spec';
export * from './agent-runner.module';
export * from './run-workspace';
export * from './resume';
