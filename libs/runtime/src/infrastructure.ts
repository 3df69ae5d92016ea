/**
 * What every service runs on: the event log, the work queues, the blob store, and the run store
 * over them. Embedded (a SQLite file under STAGEFLOW_HOME) or JetStream, chosen by the config.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connectJetStream, openEmbedded, queueNamed, topology, type BlobStore, type EventLog, type JetStreamOptions, type RequestBus, type WorkQueues } from '@stageflow/eventlog';
import type { RunEvent } from '@stageflow/domain';
import { validateEvent } from '@stageflow/proto';
import type { StageflowConfig } from './config';
import { RunStore } from './run-store';
import { EventSignatures } from './signing/event-signatures';
import { KeyRing } from './signing/keys';

export interface Infrastructure {
  readonly config: StageflowConfig;
  readonly log: EventLog;
  readonly queues: WorkQueues;
  readonly blobs: BlobStore;
  readonly runs: RunStore;
  /** The delivery limits each work queue was declared with. */
  readonly queueLimits: Readonly<Record<keyof typeof QUEUES, { readonly ackWaitMs: number; readonly maxDeliver: number }>>;
  /** Request-reply commands; only with a broker (cluster mode). */
  readonly bus?: RequestBus;
  /** Subscriptions the broker refused; a service with any is not ready. */
  deniedSubscriptions(): readonly string[];
  close(): Promise<void>;
}

/**
 * Work queues and their delivery limits, from the topology table (`SF_ACK_WAIT_MS`,
 * `SF_MAX_DELIVER`): `sf setup` creates their consumers on JetStream, the embedded log declares
 * them at open. A job not acknowledged nor extended with working() within the ack wait is
 * redelivered to another replica; handlers extend it while they work.
 */
export const QUEUES = {
  agent: queueDelivery('agent'),
  verify: queueDelivery('verify'),
} as const;

function queueDelivery(queue: string): { readonly ackWaitMs: number; readonly maxDeliver: number } {
  const delivery = queueNamed(topology(), queue)?.delivery;
  if (!delivery) throw new Error(`work queue ${queue} is not in the topology table`);
  return { ackWaitMs: delivery.ackWaitMs, maxDeliver: delivery.maxDeliver };
}

/**
 * With `SF_VALIDATE_EVENTS=1` (every test run sets it) each event is checked against its JSON
 * Schema in proto/ before it is appended; an event that does not match is never stored.
 */
function validateAtAppend(event: RunEvent): void {
  const problem = validateEvent(event);
  if (problem) throw new Error(`event ${event.type} does not match its schema: ${problem}`);
}

/** How a cluster process reaches JetStream: URL, namespace and its own credentials. */
export function jetStreamOptions(config: StageflowConfig): JetStreamOptions {
  return {
    servers: config.natsUrl!,
    namespace: config.namespace,
    ...(config.natsToken ? { token: config.natsToken } : {}),
    ...(config.natsCredentials ? { credentials: fs.readFileSync(config.natsCredentials, 'utf8') } : {}),
    ...(config.natsUser ? { user: config.natsUser, pass: config.natsPassword } : {}),
    ...(config.duplicateWindowMs ? { duplicateWindowMs: config.duplicateWindowMs } : {}),
  };
}

export interface InfrastructureOptions {
  readonly beforeAppend?: (event: RunEvent) => void;
  readonly queueOverrides?: Partial<Record<keyof typeof QUEUES, { ackWaitMs: number; maxDeliver: number }>>;
  /** Cluster only, admin credentials: create any stream or consumer this process binds to (test and benchmark harnesses). */
  readonly provision?: boolean;
}

export async function openInfrastructure(config: StageflowConfig, options: InfrastructureOptions = {}): Promise<Infrastructure> {
  let opened: { log: EventLog; queues: WorkQueues; blobs: BlobStore; bus?: RequestBus; deniedSubscriptions?(): readonly string[]; close(): Promise<void> };
  if (config.mode === 'cluster') {
    opened = await connectJetStream({ ...jetStreamOptions(config), ...(options.provision ? { provision: true } : {}) });
  } else {
    const dir = path.join(config.home, 'log');
    fs.mkdirSync(dir, { recursive: true });
    opened = await openEmbedded({ dir });
  }
  const queueLimits = {
    agent: options.queueOverrides?.agent ?? QUEUES.agent,
    verify: options.queueOverrides?.verify ?? QUEUES.verify,
  };
  // On JetStream the queues' consumers are `sf setup`'s to create; a service only binds to them.
  if (config.mode === 'embedded') for (const [queue, limits] of Object.entries(queueLimits)) await opened.queues.declare(queue, limits);
  const beforeAppend = options.beforeAppend ?? (process.env.SF_VALIDATE_EVENTS === '1' ? validateAtAppend : undefined);
  return {
    config,
    log: opened.log,
    queues: opened.queues,
    blobs: opened.blobs,
    runs: new RunStore(opened.log, config.namespace, beforeAppend, new EventSignatures(config.namespace, new KeyRing(config.keys ?? { keysDir: path.join(config.home, 'keys') }))),
    queueLimits,
    ...(opened.bus ? { bus: opened.bus } : {}),
    deniedSubscriptions: () => opened.deniedSubscriptions?.() ?? [],
    close: () => opened.close(),
  };
}
