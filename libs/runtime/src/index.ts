export * from './config';
export * from './logger';
export * from './run-store';
export * from './infrastructure';
export * from './subjects';
export * from './validation';
export * from './evidence';
export * from './verification-report';
