export * from './patterns';
export * from './errors';
export * from './transport';
export * from './tokens';
export * from './transport-state';
export * from './health.controller';
export * from './service-app';
export * from './pass-through.filter';
