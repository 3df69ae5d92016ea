export * from './schema';
export * from './database';
export * from './embedded';
export * from './migrate';
export * from './open';
export * from './projector';
export * from './queries';
