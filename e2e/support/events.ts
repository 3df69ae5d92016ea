/** Reads a run's events straight from the deployment's JetStream log, as another service would. */
import { connectJetStream } from '@stageflow/eventlog';
import type { RunEvent } from '@stageflow/domain';
import type { Deployment } from './cluster';

export async function natsRunEvents(d: Deployment, runId: string): Promise<RunEvent[]> {
  const js = await connectJetStream({ servers: String(d.env.NATS_URL), namespace: d.namespace });
  try {
    const read = await js.log.readSubject<{ events: RunEvent[] }>(`${d.namespace}.evt.run.${runId}`);
    return read.messages.flatMap((m) => m.data.events);
  } finally {
    await js.close();
  }
}

/** Deletes a deployment's streams and blob stores (object store `<ns>_blobs` is stream `OBJ_<ns>_blobs`). */
export async function deleteNamespace(natsUrl: string, namespace: string): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const upper = namespace.toUpperCase();
    for (const stream of [`${upper}_EVENTS`, `${upper}_WORK`, `${upper}_BLOBS`, `OBJ_${namespace}_blobs`]) {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
  } finally {
    await nc.close();
  }
}
