export * from './types';
export { EventLogError } from './errors';
export { connectJetStream, type JetStreamOptions } from './jetstream/connect';
export { openEmbedded, type EmbeddedOptions } from './embedded/open';
export { setupJetStream, type SetupReport } from './jetstream/setup';
export { renderNatsConf, renderShippedNatsConf, passwordVariable, type NatsConfOptions } from './jetstream/nats-conf';
export { permissionsFor, inboxPrefixOf, type Permissions } from './jetstream/permissions';
export * from './topology';
