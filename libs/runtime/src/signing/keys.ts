/**
 * Ed25519 keys of the two signing roles, as JSON Web Keys (RFC 8037 `OKP`/`Ed25519`) with a `kid`
 * and a `role` member.
 *
 * node:crypto rather than @nats-io/nkeys: verification runs for every signed event of every fold,
 * and OpenSSL's ed25519 is native and constant-time, where nkeys verifies in JavaScript; JWK is a
 * standard text form any tool can write, and node reads it directly.
 *
 * Where keys come from:
 * - `SF_SIGNING_KEY_FILE`: this process's private key (one JWK with `d`), for its one role.
 * - `SF_TRUSTED_KEYS_FILE`: the public keys trusted, a JWK, a JWK set (`{ "keys": [...] }`), or a
 *   directory of such `.json`/`.jwk` files. Several keys per role may be trusted at once, so a
 *   rotated-out key still verifies what it signed.
 * - Otherwise the keys directory (`SF_KEYS_DIR`, default `$STAGEFLOW_HOME/keys`): a process that
 *   must sign and has no key makes `<role>.jwk` there (0600, directory 0700), and every JWK in
 *   the directory is trusted. This is the embedded default; the sandbox never shows the state
 *   directory to an agent.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SIGNER_ROLES, type SignerRole } from '@stageflow/domain';

export interface SigningKey {
  readonly kid: string;
  readonly role: SignerRole;
  readonly privateKey: KeyObject;
}

export interface TrustedKey {
  readonly kid: string;
  readonly role: SignerRole;
  readonly publicKey: KeyObject;
}

export interface KeySources {
  readonly signingKeyFile?: string;
  readonly trustedKeysPath?: string;
  readonly keysDir: string;
}

/** A signing JWK as stored: public `x`, private `d`, key id and role. */
export interface SigningJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly d: string;
  readonly kid: string;
  readonly role: SignerRole;
}

export class KeyConfigurationError extends Error {
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'KeyConfigurationError';
  }
}

export function generateSigningJwk(role: SignerRole, kid?: string): SigningJwk {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x!, d: jwk.d!, kid: kid ?? defaultKid(role, jwk.x!), role };
}

const defaultKid = (role: SignerRole, x: string) => `${role}-${createHash('sha256').update(x).digest('hex').slice(0, 16)}`;

/** The public half of a JWK, as it is handed to other processes to trust. */
export function publicJwk(jwk: SigningJwk): Omit<SigningJwk, 'd'> {
  const { d: _d, ...rest } = jwk;
  return rest;
}

function roleOf(value: unknown, where: string): SignerRole {
  if (SIGNER_ROLES.includes(value as SignerRole)) return value as SignerRole;
  throw new KeyConfigurationError(`${where}: "role" must be one of ${SIGNER_ROLES.join(', ')}`);
}

function toTrusted(raw: Record<string, unknown>, where: string): TrustedKey {
  if (raw.kty !== 'OKP' || raw.crv !== 'Ed25519' || typeof raw.x !== 'string') throw new KeyConfigurationError(`${where}: not an Ed25519 JWK`);
  if (typeof raw.kid !== 'string' || !raw.kid) throw new KeyConfigurationError(`${where}: a trusted key needs a "kid"`);
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.x } as JsonWebKey, format: 'jwk' });
  return { kid: raw.kid, role: roleOf(raw.role, where), publicKey };
}

function toSigning(raw: Record<string, unknown>, where: string): SigningKey {
  const trusted = toTrusted(raw, where);
  if (typeof raw.d !== 'string') throw new KeyConfigurationError(`${where}: a signing key needs its private part "d"`);
  const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.x, d: raw.d } as JsonWebKey, format: 'jwk' });
  return { kid: trusted.kid, role: trusted.role, privateKey };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new KeyConfigurationError(`${file}: ${(err as Error).message}`);
  }
}

/** Every key in a JWK or JWK-set file, or in every `.json`/`.jwk` file of a directory. */
export function readTrustedKeys(location: string): TrustedKey[] {
  if (!fs.existsSync(location)) return [];
  if (fs.statSync(location).isDirectory()) {
    return fs
      .readdirSync(location)
      .filter((name) => /\.(json|jwk)$/.test(name))
      .sort()
      .flatMap((name) => readTrustedKeys(path.join(location, name)));
  }
  const content = readJson(location) as { keys?: unknown };
  const keys = Array.isArray(content?.keys) ? content.keys : [content];
  return keys.map((key, i) => toTrusted(key as Record<string, unknown>, `${location}#${i}`));
}

export function readSigningKey(file: string): SigningKey {
  return toSigning(readJson(file) as Record<string, unknown>, file);
}

/** Reads `<dir>/<role>.jwk`, creating it (exclusively, 0600) when missing. */
function ownKey(dir: string, role: SignerRole): SigningKey {
  const file = path.join(dir, `${role}.jwk`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    try {
      fs.writeFileSync(file, `${JSON.stringify(generateSigningJwk(role), null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another process made it first: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return readSigningKey(file);
}

/** This process's signing keys and the keys it trusts, from the configured sources. */
export class KeyRing {
  private readonly signers = new Map<SignerRole, SigningKey>();
  private trusted = new Map<string, TrustedKey>();

  constructor(private readonly sources: KeySources | { readonly memory: readonly SigningJwk[]; readonly trusted: readonly Omit<SigningJwk, 'd'>[] }) {
    if ('memory' in sources) {
      for (const jwk of sources.memory) this.signers.set(jwk.role, toSigning({ ...jwk }, `in-memory ${jwk.kid}`));
    } else if (sources.signingKeyFile) {
      const key = readSigningKey(sources.signingKeyFile);
      this.signers.set(key.role, key);
    }
    this.reloadTrusted();
  }

  /**
   * Keys held in memory only (tests, one-off tools): signs with `signing` (one fresh key per
   * role by default) and trusts their public halves plus `alsoTrusted`.
   */
  static inMemory(signing: readonly SigningJwk[] = SIGNER_ROLES.map((role) => generateSigningJwk(role)), alsoTrusted: readonly Omit<SigningJwk, 'd'>[] = []): KeyRing {
    return new KeyRing({ memory: signing, trusted: [...signing.map(publicJwk), ...alsoTrusted] });
  }

  /** The key this process signs `role` events with; made in the keys directory if none is configured. */
  signer(role: SignerRole): SigningKey {
    const known = this.signers.get(role);
    if (known) return known;
    if ('memory' in this.sources || this.sources.signingKeyFile) {
      throw new KeyConfigurationError(`this process signs as ${[...this.signers.keys()].join(', ') || 'nobody'}, not as ${role}`);
    }
    const key = ownKey(this.sources.keysDir, role);
    this.signers.set(role, key);
    this.reloadTrusted();
    return key;
  }

  /** The trusted key `kid`; the sources are read again once when it is not known (a key made or added since). */
  trustedKey(kid: string): TrustedKey | undefined {
    const known = this.trusted.get(kid);
    if (known) return known;
    this.reloadTrusted();
    return this.trusted.get(kid);
  }

  private reloadTrusted(): void {
    const sources = this.sources;
    const keys =
      'memory' in sources
        ? sources.trusted.map((jwk) => toTrusted({ ...jwk }, `in-memory ${jwk.kid}`))
        : readTrustedKeys(sources.trustedKeysPath ?? sources.keysDir);
    this.trusted = new Map(keys.map((k) => [k.kid, k]));
  }
}
