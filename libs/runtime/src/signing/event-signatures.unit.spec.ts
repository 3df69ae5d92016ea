import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { foldRun, type RunEvent } from '@stageflow/domain';
import { openEmbedded, type EventLogInstance } from '@stageflow/eventlog';
import { RunStore } from '../run-store';
import { EventSignatures } from './event-signatures';
import { capturedRun, passedVerdict } from './fixtures';
import { generateSigningJwk, KeyConfigurationError, KeyRing, publicJwk } from './keys';

const verifierJwk = generateSigningJwk('verifier', 'verifier-1');
const operatorJwk = generateSigningJwk('operator', 'operator-1');
const keys = KeyRing.inMemory([verifierJwk, operatorJwk]);
const signatures = new EventSignatures('sf', keys);

describe('EventSignatures over a captured run', () => {
  let dir: string;
  let instance: EventLogInstance;
  let store: RunStore;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-signatures-'));
    instance = openEmbedded({ dir });
    store = new RunStore(instance.log, 'sf', undefined, signatures);
    await capturedRun(store, 'r1');
    await capturedRun(store, 'r2');
  });
  afterEach(async () => {
    await instance.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const state = async (runId: string) => (await store.load(runId)).state;
  const genuine = async (runId = 'r1') => signatures.sign(runId, await state(runId), passedVerdict(runId));
  const reason = (event: RunEvent) => (event.type === 'SignatureRefused' ? event.reason : undefined);

  it('admits a genuine verdict unchanged, and the fold passes the attempt', async () => {
    const verdict = await genuine();
    expect(verdict.signature).toMatchObject({ kid: 'verifier-1', candidate: 'checkout:sha256:c-r1 artifacts:sha256:a-r1' });
    const read = JSON.parse(JSON.stringify(verdict)) as RunEvent;
    expect(signatures.admit('r1', read)).toBe(read);
  });

  it.each([
    ['stageId', { stageId: 'b' }],
    ['attempt', { attempt: 2 }],
    ['disposition', { disposition: 'failed' }],
    ['checks', { checks: [{ id: 'x', type: 'command', phase: 'after', status: 'passed', evidence: {}, started_at: 'a', finished_at: 'b' }] }],
    ['failure', { failure: 'nope' }],
    ['at', { at: '2026-01-02T00:00:00.000Z' }],
    ['runId field', { runId: 'r2' }],
  ])('refuses a verdict whose %s was changed after signing', async (_field, change) => {
    const tampered = { ...(await genuine()), ...change } as RunEvent;
    expect(reason(signatures.admit('r1', tampered))).toBe('signature by verifier-1 does not verify');
  });

  it('refuses a verdict whose signed candidate or type was changed', async () => {
    const verdict = await genuine();
    const candidate = { ...verdict, signature: { ...verdict.signature!, candidate: 'checkout:sha256:c-r2 artifacts:sha256:a-r2' } };
    expect(reason(signatures.admit('r1', candidate))).toMatch(/does not verify/);
    const asCancel = { ...verdict, type: 'RunCancelled', by: 'x' } as unknown as RunEvent;
    expect(reason(signatures.admit('r1', asCancel))).toMatch(/is a verifier key; RunCancelled needs a operator key/);
  });

  it('refuses a genuine verdict copied to another run (as is, or with its run id changed), namespace or attempt', async () => {
    const verdict = await genuine();
    expect(reason(signatures.admit('r2', verdict))).toMatch(/does not verify/);
    expect(reason(new EventSignatures('other', keys).admit('r1', verdict))).toMatch(/does not verify/);
    expect(reason(signatures.admit('r2', { ...verdict, runId: 'r2' } as RunEvent))).toMatch(/does not verify/);
    expect(reason(signatures.admit('r1', { ...verdict, attempt: 2 } as RunEvent))).toMatch(/does not verify/);
  });

  it('refuses unsigned verdicts, unknown keys and keys of the other role', async () => {
    const verdict = passedVerdict('r1');
    expect(reason(signatures.admit('r1', verdict))).toBe('unsigned');
    const foreign = new EventSignatures('sf', KeyRing.inMemory([generateSigningJwk('verifier', 'verifier-x')]));
    expect(reason(signatures.admit('r1', foreign.sign('r1', await state('r1'), verdict)))).toBe('key verifier-x is not trusted');
    const operatorSigned = { ...verdict, signature: { ...(await genuine()).signature!, kid: 'operator-1' } };
    expect(reason(signatures.admit('r1', operatorSigned))).toBe('key operator-1 is a operator key; AttemptVerified needs a verifier key');
  });

  it('appends signed verdicts, and folds an appended forgery as a refusal that ends the attempt error', async () => {
    await instance.log.append(store.subject('r2'), { events: [passedVerdict('r2')] });
    await store.execute('r1', (s) => [signatures.sign('r1', s, passedVerdict('r1'))].map((e) => ({ ...e, signature: undefined }) as RunEvent));
    const fresh = new RunStore(instance.log, 'sf', undefined, signatures);
    expect((await fresh.load('r1')).state.stages.a.attempts[0]).toMatchObject({ disposition: 'passed' });
    expect((await fresh.load('r2')).state.stages.a.attempts[0]).toMatchObject({ disposition: 'error', failure: 'verdict refused: unsigned' });
    expect((await fresh.load('r2')).events.at(-1)).toMatchObject({ type: 'SignatureRefused', refusedType: 'AttemptVerified', runId: 'r2' });
  });

  it('folds what it appends as its readers will: a key they do not trust makes its verdict a refusal', async () => {
    const untrusting = new EventSignatures('sf', new KeyRing({ memory: [generateSigningJwk('verifier', 'verifier-stray')], trusted: [publicJwk(verifierJwk)] }));
    const stray = new RunStore(instance.log, 'sf', undefined, untrusting);
    const { state } = await stray.execute('r1', () => [passedVerdict('r1')]);
    expect(state.stages.a.attempts[0]).toMatchObject({ disposition: 'error', failure: 'verdict refused: key verifier-stray is not trusted' });
    const fresh = new RunStore(instance.log, 'sf', undefined, signatures);
    expect((await fresh.load('r1')).state.stages.a.attempts[0]).toEqual(state.stages.a.attempts[0]);
  });

  it('cannot sign for a role it has no key for', async () => {
    const operatorOnly = new RunStore(instance.log, 'sf', undefined, new EventSignatures('sf', KeyRing.inMemory([operatorJwk])));
    await expect(operatorOnly.execute('r1', () => [passedVerdict('r1')])).rejects.toBeInstanceOf(KeyConfigurationError);
  });
});

describe('KeyRing from files', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-keys-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const event = passedVerdict('r1');
  const state = foldRun([]);

  it('makes its own key in the keys directory, 0600, and trusts it from another process', () => {
    const keysDir = path.join(dir, 'keys');
    const signed = new EventSignatures('sf', new KeyRing({ keysDir })).sign('r1', state, event);
    expect(fs.statSync(path.join(keysDir, 'verifier.jwk')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(keysDir).mode & 0o777).toBe(0o700);
    expect(new EventSignatures('sf', new KeyRing({ keysDir })).admit('r1', signed)).toBe(signed);
  });

  it('rotation: events signed before it still verify after it', () => {
    const keysDir = path.join(dir, 'keys');
    const before = new EventSignatures('sf', new KeyRing({ keysDir })).sign('r1', state, event);
    // Rotate: the old key stays trusted under another file name, and a new one is made on first use.
    fs.renameSync(path.join(keysDir, 'verifier.jwk'), path.join(keysDir, 'verifier-2025.jwk'));
    const after = new EventSignatures('sf', new KeyRing({ keysDir }));
    const signedAfter = after.sign('r1', state, event);
    expect(signedAfter.signature!.kid).not.toBe(before.signature!.kid);
    expect(after.admit('r1', before)).toBe(before);
    expect(after.admit('r1', signedAfter)).toBe(signedAfter);
  });

  it('rotation with configured files: a JWK set trusts old and new keys; a key removed from it no longer verifies', () => {
    const old = generateSigningJwk('verifier', 'v-old');
    const next = generateSigningJwk('verifier', 'v-new');
    const oldFile = path.join(dir, 'old.jwk');
    const nextFile = path.join(dir, 'next.jwk');
    fs.writeFileSync(oldFile, JSON.stringify(old));
    fs.writeFileSync(nextFile, JSON.stringify(next));
    const trusted = path.join(dir, 'trusted.json');
    fs.writeFileSync(trusted, JSON.stringify({ keys: [publicJwk(old), publicJwk(next)] }));
    const before = new EventSignatures('sf', new KeyRing({ keysDir: dir, signingKeyFile: oldFile, trustedKeysPath: trusted })).sign('r1', state, event);
    const reader = new EventSignatures('sf', new KeyRing({ keysDir: dir, signingKeyFile: nextFile, trustedKeysPath: trusted }));
    expect(reader.admit('r1', before)).toBe(before);
    expect(reader.admit('r1', reader.sign('r1', state, event)).type).toBe('AttemptVerified');
    fs.writeFileSync(trusted, JSON.stringify({ keys: [publicJwk(next)] }));
    const retired = new EventSignatures('sf', new KeyRing({ keysDir: dir, trustedKeysPath: trusted }));
    expect(retired.admit('r1', before)).toMatchObject({ type: 'SignatureRefused', reason: 'key v-old is not trusted' });
  });

  it('a configured signing key signs only its own role', () => {
    const file = path.join(dir, 'op.jwk');
    fs.writeFileSync(file, JSON.stringify(generateSigningJwk('operator')));
    expect(() => new EventSignatures('sf', new KeyRing({ keysDir: dir, signingKeyFile: file })).sign('r1', state, event)).toThrow(KeyConfigurationError);
  });

  it('refuses a key file that is not an Ed25519 JWK with a kid and a role', () => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ kty: 'RSA', kid: 'x', role: 'verifier' }));
    expect(() => new KeyRing({ keysDir: dir, trustedKeysPath: file })).toThrow(/not an Ed25519 JWK/);
    fs.writeFileSync(file, JSON.stringify({ ...publicJwk(generateSigningJwk('verifier')), role: 'agent' }));
    expect(() => new KeyRing({ keysDir: dir, trustedKeysPath: file })).toThrow(/"role" must be one of verifier, operator/);
  });
});
