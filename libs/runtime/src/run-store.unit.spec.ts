import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decideAdvance, decideRequest, EVENT_VERSION, type RunEvent } from '@stageflow/domain';
import { openEmbedded, type EventLogInstance } from '@stageflow/eventlog';
import { RunStore } from './run-store';
import { ONE_STAGE } from './signing/fixtures';

const pipeline = ONE_STAGE;
const request = (runId: string) => (state: Parameters<typeof decideRequest>[1]) =>
  decideRequest({ type: 'RequestRun', runId, pipeline, input: {}, checkout: { kind: 'fresh' }, requestedBy: 't', now: '2026-01-01T00:00:00.000Z' }, state);
const advanceAt = (now: string) => (state: Parameters<typeof decideAdvance>[1]) => decideAdvance({ type: 'AdvanceRun', now, validateInput: () => null }, state);
const advance = advanceAt('2026-01-01T00:00:01.000Z');

describe('RunStore', () => {
  let dir: string;
  let instance: EventLogInstance;
  let store: RunStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-runstore-'));
    instance = openEmbedded({ dir });
    store = new RunStore(instance.log);
  });
  afterEach(async () => {
    await instance.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('appends one decision as one message and folds it back', async () => {
    const { events } = await store.execute('r1', request('r1'));
    expect(events.map((e) => e.type)).toEqual(['RunRequested']);
    const read = await instance.log.readSubject('sf.evt.run.r1');
    expect(read.messages).toHaveLength(1);
    expect((await store.load('r1')).state.exists).toBe(true);
  });

  it('appends nothing when the decision changes nothing (a duplicate request)', async () => {
    await store.execute('r1', request('r1'));
    const again = await store.execute('r1', request('r1'));
    expect(again.events).toEqual([]);
    expect((await instance.log.readSubject('sf.evt.run.r1')).messages).toHaveLength(1);
  });

  it('drops events of a decision that change nothing and keeps the rest', async () => {
    await store.execute('r1', request('r1'));
    const { events } = await store.execute('r1', (state) => [...request('r1')(initial()), ...advance(state)]);
    expect(events.map((e) => e.type)).toEqual(['StageAttemptStarted']);
    function initial() {
      return { ...state0 };
    }
  });

  it('decides once when two writers race: the loser reloads and finds the work done', async () => {
    await store.execute('r1', request('r1'));
    const other = new RunStore(instance.log);
    const [x, y] = await Promise.all([store.execute('r1', advanceAt('2026-01-01T00:00:01.000Z')), other.execute('r1', advanceAt('2026-01-01T00:00:02.000Z'))]);
    expect([x.events.length, y.events.length].sort()).toEqual([0, 1]);
    const started = (await store.load('r1')).events.filter((e: RunEvent) => e.type === 'StageAttemptStarted');
    expect(started).toHaveLength(1);
  });

  it('collapses the same decision appended twice on the same sequence into one message', async () => {
    await store.execute('r1', request('r1'));
    const other = new RunStore(instance.log);
    await Promise.all([store.execute('r1', advance), other.execute('r1', advance)]);
    expect((await instance.log.readSubject('sf.evt.run.r1')).messages).toHaveLength(2);
  });

  it('refuses to append an event the append-boundary check rejects', async () => {
    const strict = new RunStore(instance.log, 'sf', (e) => {
      if (e.v !== EVENT_VERSION) throw new Error('bad version');
      if (e.type === 'RunRequested') throw new Error('refused at the boundary');
    });
    await expect(strict.execute('r2', request('r2'))).rejects.toThrow('refused at the boundary');
    expect((await instance.log.readSubject('sf.evt.run.r2')).messages).toHaveLength(0);
  });

  it('refuses a run input nested 8,000 levels deep with input.too_deep, not a stack overflow', async () => {
    const input = nested(8000);
    const deep = (state: Parameters<typeof decideRequest>[1]) =>
      decideRequest({ type: 'RequestRun', runId: 'r3', pipeline, input, checkout: { kind: 'fresh' }, requestedBy: 't', now: '2026-01-01T00:00:00.000Z' }, state);
    await expect(store.execute('r3', deep)).rejects.toMatchObject({ name: 'InvalidCommand', code: 'input.too_deep', retryable: false });
    expect((await instance.log.readSubject('sf.evt.run.r3')).messages).toHaveLength(0);
  });

  it('refuses any decision whose events nest too deep, whoever built it', async () => {
    await store.execute('r4', request('r4'));
    const deepLabel = (): RunEvent[] => [{ v: EVENT_VERSION, type: 'RunFailed', runId: 'r4', at: '2026-01-01T00:00:01.000Z', reason: 'x', extra: nested(8000) } as unknown as RunEvent];
    await expect(store.execute('r4', deepLabel)).rejects.toMatchObject({ code: 'input.too_deep' });
    expect((await instance.log.readSubject('sf.evt.run.r4')).messages).toHaveLength(1);
  });
});

function nested(levels: number): { [key: string]: unknown } {
  let value: { [key: string]: unknown } = {};
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

const state0 = { exists: false } as Parameters<typeof decideRequest>[1];
