import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EVENT_VERSION, initialRunState, type RunEvent } from '@stageflow/domain';
import { EventSignatures, KeyRing } from '@stageflow/runtime';
import { main } from '../main';
import type { Output } from '../output';

function captured(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, isTTY: false, out: (s: string) => void stdout.push(s), err: (s: string) => void stderr.push(s) };
}

describe('sf keys new', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-keys-cli-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes a private key (0600) that signs, and prints the public key that verifies it', async () => {
    const file = path.join(dir, 'verifier.jwk');
    const out = captured();
    expect(await main(['node', 'sf', 'keys', 'new', '--role', 'verifier', '--kid', 'v-2026', '--out', file], out)).toBe(0);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const trusted = path.join(dir, 'trusted.json');
    const publicKey = JSON.parse(out.stdout.join(''));
    expect(publicKey).toEqual({ kty: 'OKP', crv: 'Ed25519', x: expect.any(String), kid: 'v-2026', role: 'verifier' });
    fs.writeFileSync(trusted, JSON.stringify({ keys: [publicKey] }));
    const verdict: RunEvent = { v: EVENT_VERSION, runId: 'r', at: 't', type: 'AttemptVerified', stageId: 'a', attempt: 1, disposition: 'passed', checks: [], failure: null };
    const signed = new EventSignatures('sf', new KeyRing({ keysDir: dir, signingKeyFile: file, trustedKeysPath: trusted })).sign('r', initialRunState(), verdict);
    expect(new EventSignatures('sf', new KeyRing({ keysDir: dir, trustedKeysPath: trusted })).admit('r', signed)).toBe(signed);
  });

  it('never overwrites a key, and refuses an unknown role', async () => {
    const file = path.join(dir, 'k.jwk');
    fs.writeFileSync(file, 'keep');
    const out = captured();
    expect(await main(['node', 'sf', 'keys', 'new', '--role', 'operator', '--out', file], out)).toBe(1);
    expect(fs.readFileSync(file, 'utf8')).toBe('keep');
    expect(await main(['node', 'sf', 'keys', 'new', '--role', 'agent', '--out', path.join(dir, 'x.jwk')], captured())).toBe(1);
    expect(fs.existsSync(path.join(dir, 'x.jwk'))).toBe(false);
  });
});
