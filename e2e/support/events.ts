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
