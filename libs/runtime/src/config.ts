/** Process configuration from the environment. Nothing else reads process.env for these. */
import * as path from 'node:path';

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
  /** Bearer tokens the API accepts. */
  readonly apiTokens: readonly string[];
  /** How long the JetStream streams drop repeated msg ids (`SF_DUPLICATE_WINDOW_MS`); default 2 minutes. Every process of a deployment must agree. */
  readonly duplicateWindowMs?: number;
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
    workDir: path.resolve(env.SF_WORK_DIR || path.join(home, 'work')),
    apiTokens: (env.SF_API_TOKENS || '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    ...(Number(env.SF_DUPLICATE_WINDOW_MS) > 0 ? { duplicateWindowMs: Number(env.SF_DUPLICATE_WINDOW_MS) } : {}),
  };
}
