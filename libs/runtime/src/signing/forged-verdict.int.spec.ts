/**
 * Write access to a run's subject cannot pass a stage: a verdict appended by hand — unsigned,
 * signed by a key nobody trusts, or a genuine one copied from another run — is refused by the
 * run store's fold (a fresh one and the appender's own), by the fold the api summarises, and by
 * the read-model projection, on the JetStream log and on the embedded one.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { decideAttempt, decideRecovery, EVENT_VERSION, foldRun, summarizeRun, type RunEvent } from '@stageflow/domain';
import { connectJetStream, openEmbedded, type EventLog } from '@stageflow/eventlog';
import { getRunSummary, project } from '@stageflow/readmodels';
import { openTestDb, type TestDb } from '../../../readmodels/src/testing/test-db';
import { streamNames } from '../../../eventlog/src/jetstream/streams';
import { RunStore } from '../run-store';
import { EventSignatures } from './event-signatures';
import { capturedRun, passedVerdict } from './fixtures';
import { generateSigningJwk, KeyRing } from './keys';

jest.setTimeout(60_000);

const servers = process.env.SF_TEST_NATS_URL ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const T = '2026-01-01T00:00:09.000Z';

interface OpenedLog {
  readonly namespace: string;
  readonly log: EventLog;
  close(): Promise<void>;
}

async function jetstreamLog(): Promise<OpenedLog> {
  const namespace = `sig${randomBytes(5).toString('hex')}`;
  const opened = await connectJetStream({ servers, namespace, provision: true });
  return {
    namespace,
    log: opened.log,
    async close() {
      await opened.close();
      const nc = await connect({ servers });
      try {
        const jsm = await jetstreamManager(nc);
        const names = streamNames(namespace);
        for (const stream of [names.events, names.work, names.smallBlobs, `OBJ_${names.blobs}`]) await jsm.streams.delete(stream).catch(() => undefined);
      } finally {
        await nc.close();
      }
    },
  };
}

async function embeddedLog(): Promise<OpenedLog> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-forged-'));
  const opened = openEmbedded({ dir });
  return {
    namespace: 'sf',
    log: opened.log,
    async close() {
      await opened.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe.each([
  ['JetStream', jetstreamLog],
  ['embedded', embeddedLog],
])('a forged verdict on the %s log', (_name, open) => {
  let opened: OpenedLog;
  let signatures: EventSignatures;
  let store: RunStore;
  let db: TestDb;

  beforeAll(async () => {
    opened = await open();
    db = await openTestDb('rm_sig');
    signatures = new EventSignatures(opened.namespace, KeyRing.inMemory());
    store = new RunStore(opened.log, opened.namespace, undefined, signatures);
    for (const runId of ['good', 'unsigned', 'foreign', 'copied']) await capturedRun(store, runId);
    // The genuine path: the verifier's decision, signed by this store, then recovery.
    await store.execute('good', (s) => decideAttempt({ type: 'RecordVerification', stageId: 'a', attempt: 1, now: T, checks: [] }, s));
    // The attacks: plain appends with write access to the run subjects only.
    const foreignKey = new EventSignatures(opened.namespace, KeyRing.inMemory([generateSigningJwk('verifier', 'verifier-attacker')]));
    const forge = (runId: string, event: RunEvent) => opened.log.append(store.subject(runId), { events: [event] });
    await forge('unsigned', passedVerdict('unsigned'));
    await forge('foreign', foreignKey.sign('foreign', (await store.load('foreign')).state, passedVerdict('foreign')));
    const genuine = (await store.load('good')).events.find((e) => e.type === 'AttemptVerified')!;
    await forge('copied', genuine);
    // A StageSucceeded appended by hand for the refused attempt passes nothing either.
    await forge('unsigned', { v: EVENT_VERSION, runId: 'unsigned', at: T, type: 'StageSucceeded', stageId: 'a', attempt: 1, envelope: { status: 'success', summary: 'ok', artifacts: [] } });
    for (const runId of ['good', 'unsigned', 'foreign', 'copied']) {
      await store.execute(runId, (s) => decideRecovery({ type: 'ApplyRecoveryPolicy', stageId: 'a', attempt: 1, now: T }, s));
    }
  });
  afterAll(async () => {
    await db?.drop();
    await opened?.close();
  });

  const forged = ['unsigned', 'foreign', 'copied'] as const;
  const expectedReason = { unsigned: 'unsigned', foreign: 'key verifier-attacker is not trusted', copied: /^signature by .* does not verify$/ };

  it('the appender\'s store and a fresh store pass the genuine run and refuse every forgery', async () => {
    const fresh = new RunStore(opened.log, opened.namespace, undefined, signatures);
    for (const reader of [store, fresh]) {
      expect((await reader.load('good')).state.stages.a).toMatchObject({ status: 'succeeded', attempts: [{ disposition: 'passed' }] });
      for (const runId of forged) {
        const { state } = await reader.load(runId);
        expect(state.stages.a).toMatchObject({ status: 'failed', failureKind: 'verification_error', attempts: [{ phase: 'verified', disposition: 'error' }] });
        expect(state.stages.a.attempts[0].failure).toMatch(/^verdict refused: /);
        expect(state.refusals?.[0]).toMatchObject({ refusedType: 'AttemptVerified', stageId: 'a', attempt: 1, reason: expect.stringMatching(expectedReason[runId]) });
      }
    }
  });

  it('the fold the api summarises (events read through the store, folded from the start) refuses them too', async () => {
    for (const runId of forged) {
      const read = await opened.log.readSubject(store.subject(runId));
      const summary = summarizeRun(foldRun(read.messages.flatMap((m) => store.eventsOf(m))));
      expect(summary.stages[0]).toMatchObject({ status: 'failed', attempts: [{ disposition: 'error' }] });
      expect(summary.security).toMatchObject([{ refused: 'AttemptVerified', stage: 'a', attempt: 1 }]);
    }
  });

  it('the read-model projection refuses them, applied once or twice, and archives the refusal instead', async () => {
    const messages = await opened.log.read(`${opened.namespace}.evt.run.>`);
    await project(db.db, messages, { signatures });
    expect(await project(db.db, messages, { signatures })).toMatchObject({ applied: 0 });
    expect(await getRunSummary(db.db, 'good')).toMatchObject({ stages: [{ status: 'succeeded', attempts: [{ disposition: 'passed' }] }] });
    expect((await getRunSummary(db.db, 'good'))?.security).toBeUndefined();
    for (const runId of forged) {
      const summary = await getRunSummary(db.db, runId);
      expect(summary).toMatchObject({ stages: [{ status: 'failed', attempts: [{ disposition: 'error' }] }], security: [{ refused: 'AttemptVerified', stage: 'a', attempt: 1 }] });
      const stored = await fresh(runId);
      expect(summary).toEqual(summarizeRun(stored));
      const archived = await db.db.selectFrom('event_archive').select('type').where('run_id', '=', runId).execute();
      expect(archived.map((r) => r.type)).toContain('SignatureRefused');
      expect(archived.map((r) => r.type)).not.toContain('AttemptVerified');
      const accepted = await db.db.selectFrom('envelopes').select('attempt').where('run_id', '=', runId).where('accepted', '=', true).execute();
      expect(accepted).toEqual([]);
    }
  });

  const fresh = async (runId: string) => (await new RunStore(opened.log, opened.namespace, undefined, signatures).load(runId)).state;
});
