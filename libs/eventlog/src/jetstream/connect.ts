import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { credsAuthenticator, PermissionViolationError, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { subjectsFor } from '../subjects';
import type { EventLogInstance } from '../types';
import { JetStreamBlobStore } from './blobs';
import { NatsRequestBus } from './bus';
import { natsCall, toEventLogError } from './errors';
import { JetStreamEventLog } from './log';
import { JetStreamWorkQueues } from './queues';
import { isNotFound, notSetUp } from './binding';
import { inboxPrefixOf } from './permissions';
import { ensureStreams, streamNames, type StreamNames } from './streams';

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
  /**
   * Admin rights (`sf setup`, tests): create or update the streams and bucket at connect, and a
   * durable consumer at its first subscribe. Without it the namespace must already be set up: a
   * missing stream or consumer fails with an error naming `sf setup`.
   */
  readonly provision?: boolean;
}


/**
 * Connects to NATS and returns the log, queues and blobs over the namespace's streams (created
 * first with `provision`). A process with a user name uses the inbox prefix `_INBOX.<user>`, the
 * only inbox its permissions let it read. The connection reconnects forever; calls made while it
 * is down fail with a retryable EventLogError.
 */
export async function connectJetStream(options: JetStreamOptions): Promise<EventLogInstance> {
  const subjects = subjectsFor(options.namespace ?? 'sf');
  const names = streamNames(subjects.namespace);
  const nc = await connectNats(options);
  const denied = watchDeniedSubscriptions(nc);
  const provision = options.provision === true;
  try {
    // No $JS.API.INFO probe: only the admin may ask for account-wide JetStream information.
    const jsm = await natsCall('open JetStream', () => jetstreamManager(nc, { checkAPI: false }));
    if (provision) await natsCall('create streams', () => ensureStreams(jsm, names, subjects, options.duplicateWindowMs));
    else await assertSetUp(jsm, names, subjects.namespace);
    const js = jetstream(nc, { checkAPI: false });
    const log = new JetStreamEventLog(js, jsm, names.events, subjects, provision);
    const queues = new JetStreamWorkQueues(js, jsm, names.work, subjects, log, nc);
    const blobs = await JetStreamBlobStore.open(js, jsm, names.blobs, subjects.namespace, names.smallBlobs, provision);
    return {
      log,
      queues,
      blobs,
      bus: new NatsRequestBus(nc),
      deniedSubscriptions: () => [...denied],
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

/** A connection with the options' credentials; with a user name, its replies come to `_INBOX.<user>`. */
export async function connectNats(options: JetStreamOptions): Promise<NatsConnection> {
  return natsCall('connect to NATS', () =>
    connect({
      servers: typeof options.servers === 'string' ? options.servers : [...options.servers],
      maxReconnectAttempts: -1,
      ...(options.token !== undefined ? { token: options.token } : {}),
      ...(options.user !== undefined ? { user: options.user, pass: options.pass, inboxPrefix: inboxPrefixOf(options.user) } : {}),
      ...(options.credentials !== undefined ? { authenticator: credsAuthenticator(new TextEncoder().encode(options.credentials)) } : {}),
    }),
  );
}

/** The events stream exists once `sf setup` ran (every user that connects may read its info). */
async function assertSetUp(jsm: JetStreamManager, names: StreamNames, namespace: string): Promise<void> {
  try {
    await jsm.streams.info(names.events);
  } catch (err) {
    if (isNotFound(err)) throw notSetUp(`stream ${names.events}`, namespace);
    throw toEventLogError(err, 'open the events stream');
  }
}

/**
 * The server refuses a subscription asynchronously (the subscribe call has returned by then) and
 * says so on the connection's status: every refused subject is kept here for readiness.
 */
function watchDeniedSubscriptions(nc: NatsConnection): Set<string> {
  const denied = new Set<string>();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'error' && status.error instanceof PermissionViolationError && status.error.operation === 'subscription') denied.add(status.error.subject);
    }
  })().catch(() => undefined);
  return denied;
}
