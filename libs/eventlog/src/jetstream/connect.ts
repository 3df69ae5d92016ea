import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { credsAuthenticator } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { subjectsFor } from '../subjects';
import type { EventLogInstance } from '../types';
import { JetStreamBlobStore } from './blobs';
import { NatsRequestBus } from './bus';
import { natsCall } from './errors';
import { JetStreamEventLog } from './log';
import { JetStreamWorkQueues } from './queues';
import { ensureStreams, streamNames } from './streams';

export interface JetStreamOptions {
  /** NATS URL(s), e.g. `nats://127.0.0.1:4222`. */
  readonly servers: string | readonly string[];
  /**
   * Isolates one deployment (or one test) from another: streams `<NS>_EVENTS`, `<NS>_WORK`,
   * bucket `<ns>_blobs`, subjects `<ns>.evt.>`, `<ns>.dead.>`, `<ns>.work.>` (`<ns>.cmd.>` stays out of every stream: commands are request-reply on core NATS). Default `sf`.
   */
  readonly namespace?: string;
  /** Contents of a NATS `.creds` file (JWT + nkey seed). */
  readonly credentials?: string;
  readonly token?: string;
  /** User and password (each service has its own; see infra/nats/nats.conf). */
  readonly user?: string;
  readonly pass?: string;
  /** How long the streams remember msg ids to drop duplicates. Unset: 2 minutes for a new stream, unchanged for an existing one. */
  readonly duplicateWindowMs?: number;
}


/**
 * Connects to NATS, creates or updates the namespace's streams and bucket, and returns the log,
 * queues and blobs over them. The connection reconnects forever; calls made while it is down
 * fail with a retryable EventLogError.
 */
export async function connectJetStream(options: JetStreamOptions): Promise<EventLogInstance> {
  const subjects = subjectsFor(options.namespace ?? 'sf');
  const names = streamNames(subjects.namespace);
  const nc = await natsCall('connect to NATS', () =>
    connect({
      servers: typeof options.servers === 'string' ? options.servers : [...options.servers],
      maxReconnectAttempts: -1,
      ...(options.token !== undefined ? { token: options.token } : {}),
      ...(options.user !== undefined ? { user: options.user, pass: options.pass } : {}),
      ...(options.credentials !== undefined ? { authenticator: credsAuthenticator(new TextEncoder().encode(options.credentials)) } : {}),
    }),
  );
  try {
    const jsm = await natsCall('open JetStream', () => jetstreamManager(nc));
    await natsCall('create streams', () => ensureStreams(jsm, names, subjects, options.duplicateWindowMs));
    const js = jetstream(nc);
    const log = new JetStreamEventLog(js, jsm, names.events, subjects);
    const queues = new JetStreamWorkQueues(js, jsm, names.work, subjects, log, nc);
    const blobs = await JetStreamBlobStore.open(js, jsm, names.blobs, subjects.namespace, names.smallBlobs);
    return {
      log,
      queues,
      blobs,
      bus: new NatsRequestBus(nc),
      async close() {
        await Promise.all([log.close(), queues.close(), blobs.close()]);
        if (!nc.isClosed()) await nc.close();
      },
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
