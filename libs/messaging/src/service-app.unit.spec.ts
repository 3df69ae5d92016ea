import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Controller, Module } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { openEmbedded, type EventLogInstance, type Job } from '@stageflow/eventlog';
import { createLogger, type Infrastructure } from '@stageflow/runtime';
import { workQueue } from './patterns';
import { startService, type ServiceApp } from './service-app';

const deliveries: string[] = [];

class Refused extends Error {
  readonly retryable = false;
}

@Controller()
class PoisonController {
  @EventPattern(workQueue('jobs'))
  async job(@Payload() data: { id: string }, @Ctx() job: Job) {
    deliveries.push(`${data.id}#${job.deliveryCount}`);
    throw new Refused(`cannot ever work: ${data.id}`);
  }
}

@Module({ controllers: [PoisonController] })
class PoisonModule {}

async function deadLetter(queues: EventLogInstance['queues'], jobId: string) {
  for (let i = 0; i < 250; i++) {
    const letter = (await queues.deadLetters('jobs')).find((l) => l.jobId === jobId);
    if (letter) return letter;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no dead letter for ${jobId}`);
}

describe.each([
  ['with an HTTP port (sf serve --port, the API)', 0],
  ['without an HTTP port (embedded default, sf serve)', undefined],
])('startService %s', (_how, port) => {
  let dir: string;
  let eventlog: EventLogInstance;
  let service: ServiceApp;
  const logged: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-service-app-'));
    eventlog = openEmbedded({ dir });
    await eventlog.queues.declare('jobs', { ackWaitMs: 2000, maxDeliver: 3 });
    const infra = { config: { namespace: 'sf' }, log: eventlog.log, queues: eventlog.queues } as unknown as Infrastructure;
    const logger = createLogger({}, 'warn', (line) => logged.push(line));
    service = await startService({ name: 'test', module: PoisonModule, infra, logger, ...(port !== undefined ? { port } : {}) });
  });
  afterAll(async () => {
    await service.close();
    await eventlog.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('terms a non-retryable handler error on its first delivery (the transport sees the original error)', async () => {
    const jobId = `poison-${port ?? 'none'}`;
    await eventlog.queues.enqueue('jobs', { id: jobId }, jobId);
    const letter = await deadLetter(eventlog.queues, jobId);
    expect(letter).toMatchObject({ jobId, deliveries: 1 });
    expect(letter.reason).toContain(`cannot ever work: ${jobId}`);
    expect(deliveries.filter((d) => d.startsWith(`${jobId}#`))).toEqual([`${jobId}#1`]);
    expect(logged.join('\n')).not.toMatch(/Cannot apply global/);
  });
});
