export * from './schema';
export * from './database';
export * from './migrate';
export * from './projector';
export * from './queries';
