/**
 * What every service runs on: the event log, the work queues, the blob store, and the run store
 * over them. Embedded (a SQLite file under STAGEFLOW_HOME) or JetStream, chosen by the config.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connectJetStream, openEmbedded, type BlobStore, type EventLog, type WorkQueues } from '@stageflow/eventlog';
import type { RunEvent } from '@stageflow/domain';
import type { StageflowConfig } from './config';
import { RunStore } from './run-store';

export interface Infrastructure {
  readonly config: StageflowConfig;
  readonly log: EventLog;
  readonly queues: WorkQueues;
  readonly blobs: BlobStore;
  readonly runs: RunStore;
  close(): Promise<void>;
}

/** Work queues and their delivery limits, declared identically by every replica. */
export const QUEUES = {
  agent: { ackWaitMs: 30_000, maxDeliver: 5 },
  verify: { ackWaitMs: 30_000, maxDeliver: 5 },
} as const;

export async function openInfrastructure(config: StageflowConfig, options: { beforeAppend?: (event: RunEvent) => void; queueOverrides?: Partial<Record<keyof typeof QUEUES, { ackWaitMs: number; maxDeliver: number }>> } = {}): Promise<Infrastructure> {
  let opened: { log: EventLog; queues: WorkQueues; blobs: BlobStore; close(): Promise<void> };
  if (config.mode === 'cluster') {
    opened = await connectJetStream({
      servers: config.natsUrl!,
      namespace: config.namespace,
      ...(config.natsToken ? { token: config.natsToken } : {}),
      ...(config.natsUser ? { user: config.natsUser, pass: config.natsPassword } : {}),
    });
  } else {
    const dir = path.join(config.home, 'log');
    fs.mkdirSync(dir, { recursive: true });
    opened = await openEmbedded({ dir });
  }
  for (const [queue, limits] of Object.entries(QUEUES)) {
    await opened.queues.declare(queue, options.queueOverrides?.[queue as keyof typeof QUEUES] ?? limits);
  }
  return {
    config,
    log: opened.log,
    queues: opened.queues,
    blobs: opened.blobs,
    runs: new RunStore(opened.log, config.namespace, options.beforeAppend),
    close: () => opened.close(),
  };
}
