import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { randomBytes } from 'node:crypto';
import { describeEventLogContract } from '../contract';
import { EventLogError } from '../errors';
import { connectJetStream } from './connect';
import { streamNames } from './streams';
import { setupJetStream } from './setup';
import { topology } from '../topology';

const servers = process.env.SF_TEST_NATS_URL ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

async function deleteNamespace(namespace: string): Promise<void> {
  const nc = await connect({ servers });
  try {
    const jsm = await jetstreamManager(nc);
    const names = streamNames(namespace);
    for (const stream of [names.events, names.work, names.smallBlobs, `OBJ_${names.blobs}`]) {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
  } finally {
    await nc.close();
  }
}

describeEventLogContract('jetstream', async () => {
  const namespace = `t${randomBytes(6).toString('hex')}`;
  return {
    namespace,
    // The contract creates its own durables and queues: admin rights, as `sf setup` has.
    open: () => connectJetStream({ servers, namespace, provision: true }),
    destroy: () => deleteNamespace(namespace),
  };
});

describe('jetstream: connection errors', () => {
  it('fails to connect with a retryable error when no server answers', async () => {
    const failure = connectJetStream({ servers: 'nats://127.0.0.1:1', namespace: 'unreachable' });
    await expect(failure).rejects.toBeInstanceOf(EventLogError);
    await expect(failure).rejects.toMatchObject({ retryable: true });
  });
});

describe('jetstream: blobs read back only as the bytes of their digest', () => {
  it('refuses, not returns, a small blob whose message was replaced by other bytes', async () => {
    const namespace = `t${randomBytes(6).toString('hex')}`;
    const instance = await connectJetStream({ servers, namespace, provision: true });
    const nc = await connect({ servers });
    try {
      const digest = await instance.blobs.put(new TextEncoder().encode('the genuine bytes'));
      const js = jetstream(nc);
      // Anyone who may put blobs may publish to the subject; the stream keeps the last message.
      await js.publish(`${namespace}.blob.${digest.slice('sha256:'.length)}`, new TextEncoder().encode('other bytes'));
      await expect(instance.blobs.get(digest)).rejects.toMatchObject({ retryable: false, message: expect.stringContaining('do not match their digest') });
    } finally {
      await nc.close();
      await instance.close();
      await deleteNamespace(namespace);
    }
  });
});

describe('jetstream: sf setup and binding', () => {
  it('a namespace not set up is refused at connect, naming sf setup; setup is idempotent and gives each consumer its delivery settings from the table', async () => {
    const namespace = `t${randomBytes(6).toString('hex')}`;
    try {
      await expect(connectJetStream({ servers, namespace })).rejects.toMatchObject({ retryable: false, message: expect.stringContaining('run `sf setup`') });
      const table = topology({ SF_ACK_WAIT_MS: '4000', SF_MAX_DELIVER: '3' });
      const first = await setupJetStream({ servers, namespace }, table);
      expect(await setupJetStream({ servers, namespace }, table)).toEqual(first);
      const names = streamNames(namespace);
      const nc = await connect({ servers });
      try {
        const jsm = await jetstreamManager(nc);
        for (const { queue, delivery } of table.queues) {
          const { config } = await jsm.consumers.info(names.work, queue);
          expect([queue, config.ack_wait, config.max_deliver]).toEqual([queue, delivery.ackWaitMs * 1_000_000, delivery.maxDeliver]);
        }
        for (const { durable, filter, delivery } of table.subscriptions) {
          const { config } = await jsm.consumers.info(names.events, durable);
          expect([durable, config.filter_subject, config.max_deliver, config.max_ack_pending]).toEqual([durable, filter.replace('{ns}', namespace), delivery.maxDeliver, delivery.maxAckPending]);
        }
      } finally {
        await nc.close();
      }
      // A service binds; a durable the table does not name is not created for it.
      const bound = await connectJetStream({ servers, namespace });
      try {
        await expect(bound.log.subscribe('unknown', `${namespace}.evt.>`, async () => undefined)).rejects.toMatchObject({ retryable: false, message: expect.stringContaining('durable consumer "unknown"') });
        await expect(bound.queues.consume('unknown', async () => undefined)).rejects.toMatchObject({ retryable: false, message: expect.stringContaining('run `sf setup`') });
      } finally {
        await bound.close();
      }
    } finally {
      await deleteNamespace(namespace);
    }
  });
});

