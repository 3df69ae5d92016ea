export * from './verifier.module';
export * from './verifier.controller';
export * from './verify-attempt';
export * from './jobs';
