export * from './recovery.module';
export * from './recovery.controller';
