import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommandRefused, subjects } from '@stageflow/domain';
import { openEmbedded } from '@stageflow/eventlog';
import { createHash } from 'node:crypto';
import { CLAIM_STALE_MS, DecisionKeys } from './decision-keys';

describe('DecisionKeys (idempotency of operator decisions, on the embedded log)', () => {
  let dir: string;
  let opened: Awaited<ReturnType<typeof openEmbedded>>;
  let keys: DecisionKeys;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-keys-'));
    opened = await openEmbedded({ dir });
    keys = new DecisionKeys(opened.log, 'sf');
  });
  afterEach(async () => {
    await opened.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const decided = (n: number) => async () => ({ summary: `decided-${n}`, outcome: { based_on: n, appended: true } });
  const replay = async (o: { based_on: number }) => `replayed-${o.based_on}`;

  it('given concurrent requests with one key, when both arrive, then one decides and the other gets its recorded outcome', async () => {
    const decide = jest.fn(decided(7));
    const results = await Promise.all([keys.once('run_1', 'k', 'req', decide, replay), keys.once('run_1', 'k', 'req', decide, replay)]);
    expect(decide).toHaveBeenCalledTimes(1);
    expect(results.sort()).toEqual(['decided-7', 'replayed-7']);
    expect(await keys.once('run_1', 'k', 'req', decide, replay)).toBe('replayed-7');
  });

  it('given a refused decision, when the key comes again, then the same refusal is answered without deciding', async () => {
    const refuse = jest.fn(async () => {
      throw new CommandRefused('recovery.already_decided', 'already made');
    });
    await expect(keys.once('run_1', 'k', 'req', refuse, replay)).rejects.toMatchObject({ code: 'recovery.already_decided' });
    await expect(keys.once('run_1', 'k', 'req', decided(1), replay)).rejects.toMatchObject({ code: 'recovery.already_decided', message: 'already made' });
    expect(refuse).toHaveBeenCalledTimes(1);
  });

  it('given a used key, when a different request brings it, then it is refused as reused; another run may use it', async () => {
    await keys.once('run_1', 'k', 'req-a', decided(1), replay);
    await expect(keys.once('run_1', 'k', 'req-b', decided(2), replay)).rejects.toMatchObject({ code: 'idempotency.key_reused' });
    expect(await keys.once('run_2', 'k', 'req-b', decided(3), replay)).toBe('decided-3');
  });

  it('refuses keys that are empty, too long or not printable ASCII', async () => {
    for (const bad of ['', 'a b', 'x'.repeat(256), 'clé']) {
      await expect(keys.once('run_1', bad, 'req', decided(1), replay)).rejects.toMatchObject({ code: 'idempotency.key_invalid' });
    }
  });

  it('given a claim whose request died before recording an outcome, when it is stale, then the next request decides and records', async () => {
    const subject = subjects('sf').idempotency(createHash('sha256').update('decision\nrun_1\nk').digest('hex'));
    await opened.log.append(subject, { kind: 'decision_claim', key: 'k', run_id: 'run_1', request: 'req', at: new Date(Date.now() - CLAIM_STALE_MS - 1000).toISOString() }, { expectedLastSubjectSequence: 0 });
    expect(await keys.once('run_1', 'k', 'req', decided(5), replay)).toBe('decided-5');
    expect(await keys.once('run_1', 'k', 'req', decided(6), replay)).toBe('replayed-5');
  });
});
