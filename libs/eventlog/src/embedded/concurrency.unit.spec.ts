import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbedded } from './open';

const COUNT = 300;

/** Starts a child writer; `ready` resolves once it has opened the log, `go()` starts its appends. */
function childWriter(dir: string, writer: string): { ready: Promise<void>; done: Promise<void>; go(): void } {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'append-child.js'), dir, writer, String(COUNT)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ready = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}: ${stderr}`))));
  });
  return { ready, done, go: () => child.stdin.end('go\n') };
}

describe('embedded: concurrent writers on one file', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sf-eventlog-race-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loses and duplicates no sequence when two instances and a child process append at once', async () => {
    const a = openEmbedded({ dir });
    const b = openEmbedded({ dir });
    const appendAll = async (instance: typeof a, writer: string) => {
      for (let i = 0; i < COUNT; i++) await instance.log.append(`sf.evt.race.${writer}`, { writer, i }, { msgId: `${writer}-${i}` });
    };
    const child = childWriter(dir, 'child');
    await child.ready;
    child.go();
    await Promise.all([child.done, appendAll(a, 'a'), appendAll(b, 'b')]);
    const all = await a.log.read('sf.evt.race.*');
    expect(all.map((m) => m.seq)).toEqual(Array.from({ length: 3 * COUNT }, (_, i) => i + 1));
    for (const writer of ['a', 'b', 'child']) {
      const mine = all.filter((m) => m.subject === `sf.evt.race.${writer}`).map((m) => (m.data as { i: number }).i);
      expect(mine).toEqual(Array.from({ length: COUNT }, (_, i) => i));
    }
    await Promise.all([a.close(), b.close()]);
  }, 30_000);

  it('lets exactly one of two racing instances win an expected-sequence append', async () => {
    const a = openEmbedded({ dir });
    const b = openEmbedded({ dir });
    const subject = 'sf.evt.run.decision';
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).log.append(subject, { i }, { expectedLastSubjectSequence: 0 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await a.log.readSubject(subject)).messages).toHaveLength(1);
    await Promise.all([a.close(), b.close()]);
  });
});
