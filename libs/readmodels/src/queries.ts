/** Read-side queries over the projected tables. */
export * from './queries/list-runs';
export * from './queries/run-summary';
export * from './queries/verification';
export * from './queries/envelope';
