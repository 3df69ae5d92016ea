/**
 * `sf setup`: creates or updates everything a namespace needs on JetStream, from the topology
 * table: the events, work and small-blob streams, the object store bucket, every durable
 * subscription and every work queue consumer with its delivery settings. Idempotent; needs
 * admin rights. Services only bind to what this creates.
 */
import { AckPolicy, DeliverPolicy, jetstreamManager, jetstream } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { subjectsFor } from '../subjects';
import { topology as defaultTopology, withNamespace, type Delivery, type Topology } from '../topology';
import { connectNats, type JetStreamOptions } from './connect';
import { natsCall } from './errors';
import { nanos } from './messages';
import { ensureConsumer } from './pull';
import { ensureStreams, streamNames } from './streams';

export interface SetupReport {
  readonly namespace: string;
  readonly streams: readonly string[];
  readonly bucket: string;
  /** `<stream>/<durable>` of every consumer created or updated. */
  readonly consumers: readonly string[];
}

export async function setupJetStream(options: JetStreamOptions, table: Topology = defaultTopology()): Promise<SetupReport> {
  const subjects = subjectsFor(options.namespace ?? 'sf');
  const names = streamNames(subjects.namespace);
  const nc = await connectNats(options);
  try {
    const jsm = await natsCall('open JetStream', () => jetstreamManager(nc));
    const js = jetstream(nc);
    await natsCall('create streams', () => ensureStreams(jsm, names, subjects, options.duplicateWindowMs));
    await natsCall(`create object store ${names.blobs}`, () => new Objm(js).create(names.blobs));
    const consumers: string[] = [];
    for (const { durable, filter, delivery } of table.subscriptions) {
      await natsCall(`create consumer ${durable}`, () =>
        ensureConsumer(js, jsm, names.events, { durable_name: durable, filter_subject: withNamespace(filter, subjects.namespace), ...consumerDelivery(delivery) }),
      );
      consumers.push(`${names.events}/${durable}`);
    }
    for (const { queue, delivery } of table.queues) {
      await natsCall(`create consumer ${queue}`, () =>
        ensureConsumer(js, jsm, names.work, { durable_name: queue, filter_subject: subjects.work(queue), ...consumerDelivery(delivery) }),
      );
      consumers.push(`${names.work}/${queue}`);
    }
    return { namespace: subjects.namespace, streams: [names.events, names.work, names.smallBlobs, `OBJ_${names.blobs}`], bucket: names.blobs, consumers };
  } finally {
    await nc.close();
  }
}

function consumerDelivery(delivery: Delivery) {
  return {
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(delivery.ackWaitMs),
    max_deliver: delivery.maxDeliver,
    max_ack_pending: delivery.maxAckPending,
    ...(delivery.backoffMs ? { backoff: delivery.backoffMs.map(nanos) } : {}),
  };
}
