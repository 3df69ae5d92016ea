import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Controller, Module } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { NestFactory } from '@nestjs/core';
import { openEmbedded, type EventLogInstance, type Job, type StoredMessage } from '@stageflow/eventlog';
import { silentLogger } from '@stageflow/runtime';
import { RetryLater } from './errors';
import { PassThroughRpcFilter } from './pass-through.filter';
import { eventStream, workQueue } from './patterns';
import { DEFAULT_SUBSCRIPTION_MAX_DELIVER } from '@stageflow/eventlog';
import { StageflowTransport, type DeadEvent } from './transport';

const seen: string[] = [];
const reported: DeadEvent[] = [];
let attemptsOfFlaky = 0;

class Refused extends Error {
  readonly retryable = false;
}

@Controller()
class TestController {
  @EventPattern(workQueue('jobs'))
  async job(@Payload() data: { kind: string }, @Ctx() job: Job) {
    seen.push(`${data.kind}#${job.deliveryCount}`);
    if (data.kind === 'poison') throw new Refused('cannot ever work');
    if (data.kind === 'flaky' && ++attemptsOfFlaky < 2) throw new RetryLater('not yet', 50);
  }

  @EventPattern(eventStream('follower', '{ns}.evt.>'))
  async event(@Payload() message: StoredMessage) {
    seen.push(`event:${String(message.data)}`);
    if (message.data === 'bad') throw new Refused('poison event');
    if (message.data === 'crash') throw new RangeError('Invalid time value');
  }
}

@Module({ controllers: [TestController] })
class TestModule {}

const until = async (check: () => boolean, ms = 5000) => {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('StageflowTransport', () => {
  let dir: string;
  let infra: EventLogInstance;
  let close: () => Promise<void>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-transport-'));
    infra = openEmbedded({ dir });
    await infra.queues.declare('jobs', { ackWaitMs: 2000, maxDeliver: 3 });
    const transport = new StageflowTransport({ log: infra.log, queues: infra.queues, namespace: 'sf', logger: silentLogger, retryDelayMs: 50, onDeadEvent: async (letter) => void reported.push(letter) });
    const app = await NestFactory.createMicroservice(TestModule, { strategy: transport, logger: false });
    app.useGlobalFilters(new PassThroughRpcFilter());
    await app.listen();
    close = () => app.close();
  });
  afterAll(async () => {
    await close();
    await infra.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('acknowledges a job whose handler resolves: delivered once', async () => {
    await infra.queues.enqueue('jobs', { kind: 'ok' }, 'ok-1');
    await until(() => seen.includes('ok#1'));
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.filter((s) => s.startsWith('ok#'))).toEqual(['ok#1']);
  });

  it('naks a retryable failure and redelivers it', async () => {
    await infra.queues.enqueue('jobs', { kind: 'flaky' }, 'flaky-1');
    await until(() => seen.includes('flaky#2'));
    expect(await infra.queues.deadLetters('jobs')).toEqual([]);
  });

  it('terms a non-retryable failure at once and records it as a dead letter', async () => {
    await infra.queues.enqueue('jobs', { kind: 'poison' }, 'poison-1');
    await until(() => seen.includes('poison#1'));
    let letters = await infra.queues.deadLetters('jobs');
    for (let i = 0; letters.length === 0 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 20));
      letters = await infra.queues.deadLetters('jobs');
    }
    expect(letters[0]).toMatchObject({ queue: 'jobs', jobId: 'poison-1', deliveries: 1 });
    expect(letters[0].reason).toMatch(/cannot ever work/);
    expect(seen.filter((s) => s.startsWith('poison#'))).toEqual(['poison#1']);
  });

  it('follows the log through a durable subscription; a refused event is recorded and skipped', async () => {
    await infra.log.append('sf.evt.test', 'bad');
    await infra.log.append('sf.evt.test', 'good');
    await until(() => seen.includes('event:good'));
    const dead = await infra.log.read<{ durable: string; reason: string }>('sf.dead.events.>');
    expect(dead.map((m) => m.data)).toEqual([expect.objectContaining({ durable: 'follower', reason: expect.stringContaining('poison event') })]);
  });

  it('gives up on an event that fails on every allowed delivery: recorded with its reason, reported, skipped', async () => {
    await infra.log.append('sf.evt.test', 'crash');
    await infra.log.append('sf.evt.test', 'after-crash');
    await until(() => seen.includes('event:after-crash'), 15_000);
    expect(seen.filter((s) => s === 'event:crash')).toHaveLength(DEFAULT_SUBSCRIPTION_MAX_DELIVER);
    const dead = (await infra.log.read<DeadEvent>('sf.dead.events.>')).map((m) => m.data).filter((d) => d.reason.includes('RangeError'));
    expect(dead).toEqual([
      expect.objectContaining({ durable: 'follower', subject: 'sf.evt.test', deliveries: DEFAULT_SUBSCRIPTION_MAX_DELIVER, reason: `failed on delivery ${DEFAULT_SUBSCRIPTION_MAX_DELIVER} of ${DEFAULT_SUBSCRIPTION_MAX_DELIVER}: RangeError: Invalid time value` }),
    ]);
    expect(reported.map((r) => r.reason)).toEqual([expect.stringContaining('poison event'), dead[0].reason]);
  }, 20_000);
});
