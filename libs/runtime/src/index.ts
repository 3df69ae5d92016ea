export * from './config';
export * from './logger';
export * from './run-store';
export * from './infrastructure';
export * from './subjects';
export * from './validation';
