export * from './scheduler.module';
export * from './scheduler.controller';
export * from './jobs';
