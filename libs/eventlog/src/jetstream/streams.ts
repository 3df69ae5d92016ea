import { JetStreamApiError, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from './messages';
import type { Subjects } from '../subjects';

export interface StreamNames {
  readonly events: string;
  readonly work: string;
  /** Object store bucket for large blobs. */
  readonly blobs: string;
  /** Stream of small blobs, one message per digest, read by direct get. */
  readonly smallBlobs: string;
}

export function streamNames(namespace: string): StreamNames {
  const upper = namespace.toUpperCase();
  return { events: `${upper}_EVENTS`, work: `${upper}_WORK`, blobs: `${namespace}_blobs`, smallBlobs: `${upper}_BLOBS` };
}

/** Subject of a small blob: `<ns>.blob.<hex>`. */
export const smallBlobSubject = (namespace: string, hex: string) => `${namespace}.blob.${hex}`;

/** JetStream API error: stream name already in use with a different configuration. */
const STREAM_NAME_IN_USE = 10058;

/**
 * Creates the namespace's streams, or updates them to this configuration: the events stream keeps
 * every message (limits retention without limits, file storage); the work stream removes a job
 * once it is acknowledged (workqueue retention). Both dedupe msg ids over `duplicateWindowMs`
 * (server default 2 minutes when a stream is created without one).
 */
export async function ensureStreams(jsm: JetStreamManager, names: StreamNames, subjects: Subjects, duplicateWindowMs: number | undefined): Promise<void> {
  // A process that does not configure the window leaves the streams' window as it is.
  const common = { storage: StorageType.File, num_replicas: 1, ...(duplicateWindowMs !== undefined ? { duplicate_window: nanos(duplicateWindowMs) } : {}) };
  // allow_direct: a reader catching up on one subject gets its few new messages by direct get.
  await ensureStream(jsm, { ...common, name: names.events, subjects: [...subjects.appendable], retention: RetentionPolicy.Limits, allow_direct: true });
  await ensureStream(jsm, { ...common, name: names.work, subjects: [subjects.work('>')], retention: RetentionPolicy.Workqueue });
  // One message per digest (content-addressed, so never replaced), fetched in one request.
  await ensureStream(jsm, {
    ...common,
    name: names.smallBlobs,
    subjects: [smallBlobSubject(subjects.namespace, '>')],
    retention: RetentionPolicy.Limits,
    max_msgs_per_subject: 1,
    allow_direct: true,
  });
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    await jsm.streams.add(config);
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === STREAM_NAME_IN_USE)) throw err;
    await jsm.streams.update(config.name, config);
  }
}
