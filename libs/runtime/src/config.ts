/** Process configuration from the environment. Nothing else reads process.env for these. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadApiTokens, type ApiToken } from './api-tokens';

export interface StageflowConfig {
  /** `embedded`: everything in this process on files under `home`; `cluster`: NATS + Postgres. */
  readonly mode: 'embedded' | 'cluster';
  readonly home: string;
  readonly natsUrl?: string;
  readonly natsToken?: string;
  /** Path of a NATS `.creds` file: each service authenticates with its own credentials. */
  readonly natsCredentials?: string;
  readonly natsUser?: string;
  readonly natsPassword?: string;
  readonly databaseUrl?: string;
  /** Subject and stream namespace; isolates deployments (and tests) on one NATS server. */
  readonly namespace: string;
  /** Scratch space of this process (checkouts, materialized snapshots). */
  readonly workDir: string;
  /** Bearer tokens the API accepts, with their names and scopes (`SF_API_TOKENS_FILE`, `SF_API_TOKENS`; see api-tokens.ts). */
  readonly apiTokens: readonly ApiToken[];
  /** How long the JetStream streams drop repeated msg ids (`SF_DUPLICATE_WINDOW_MS`); default 2 minutes. Every process of a deployment must agree. */
  readonly duplicateWindowMs?: number;
  /**
   * Where signing keys come from (see signing/keys.ts): `SF_SIGNING_KEY_FILE` (this process's
   * private JWK), `SF_TRUSTED_KEYS_FILE` (a JWK set file or directory), else `SF_KEYS_DIR`
   * (default `<home>/keys`), where a process that signs makes its own key.
   */
  readonly keys?: { readonly signingKeyFile?: string; readonly trustedKeysPath?: string; readonly keysDir: string };
  /**
   * What one attempt may add or change in its sealed snapshots: `SF_MAX_FILE_BYTES` per file
   * (default 100 MiB) and `SF_MAX_ATTEMPT_BYTES` over the checkout and artifacts together (default 1 GiB).
   */
  readonly snapshotLimits: { readonly maxFileBytes: number; readonly maxAttemptBytes: number };
}

/** A positive whole number of bytes from the environment variable `name`, or the default when it is unset or empty. */
function byteLimit(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name]?.trim();
  if (value === undefined || value === '') return fallback;
  const bytes = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(bytes) || bytes === 0) throw new Error(`${name} must be a positive whole number of bytes, not ${JSON.stringify(value)}`);
  return bytes;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): StageflowConfig {
  const home = path.resolve(env.STAGEFLOW_HOME || '.stageflow');
  const natsUrl = env.NATS_URL || undefined;
  const databaseUrl = env.DATABASE_URL || undefined;
  return {
    mode: natsUrl ? 'cluster' : 'embedded',
    home,
    natsUrl,
    natsToken: env.NATS_TOKEN || undefined,
    natsCredentials: env.NATS_CREDS || undefined,
    natsUser: env.NATS_USER || undefined,
    natsPassword: env.NATS_PASSWORD || undefined,
    databaseUrl,
    namespace: env.SF_NAMESPACE || 'sf',
    keys: {
      ...(env.SF_SIGNING_KEY_FILE ? { signingKeyFile: path.resolve(env.SF_SIGNING_KEY_FILE) } : {}),
      ...(env.SF_TRUSTED_KEYS_FILE ? { trustedKeysPath: path.resolve(env.SF_TRUSTED_KEYS_FILE) } : {}),
      keysDir: path.resolve(env.SF_KEYS_DIR || path.join(home, 'keys')),
    },
    workDir: path.resolve(env.SF_WORK_DIR || path.join(home, 'work')),
    apiTokens: loadApiTokens(env, (file) => fs.readFileSync(file, 'utf8')),
    snapshotLimits: {
      maxFileBytes: byteLimit(env, 'SF_MAX_FILE_BYTES', 100 * 1024 * 1024),
      maxAttemptBytes: byteLimit(env, 'SF_MAX_ATTEMPT_BYTES', 1024 * 1024 * 1024),
    },
    ...(Number(env.SF_DUPLICATE_WINDOW_MS) > 0 ? { duplicateWindowMs: Number(env.SF_DUPLICATE_WINDOW_MS) } : {}),
  };
}
