export * from './types';
export { EventLogError } from './errors';
export { connectJetStream, type JetStreamOptions } from './jetstream/connect';
export { openEmbedded, type EmbeddedOptions } from './embedded/open';
