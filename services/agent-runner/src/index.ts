export * from '@stageflow/runtime';
export * from './agent-runner.module';
export * from './run-workspace';
export * from './resume';
