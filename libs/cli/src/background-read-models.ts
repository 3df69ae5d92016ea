/**
 * The embedded default's read models, beside the engine: Postgres at DATABASE_URL, else the
 * embedded Postgres under STAGEFLOW_HOME, with a projector following the log into it.
 *
 * Guarantees:
 * - nothing waits on it: it starts in the background, `startDelayMs` after the engine (a run
 *   that ends sooner pays nothing: not even loading pg and Kysely), the embedded server at low
 *   priority; a failure to start only logs (a busy data directory, held by another `sf`, at
 *   info level);
 * - on stop, a running projector catches up with the log and the server is closed cleanly; a
 *   start still in progress is abandoned (the server finishes starting and closes itself), and
 *   what it missed is projected by the next projector from the checkpoint;
 * - `SF_READ_MODELS=off` turns it off.
 */
import * as path from 'node:path';
import type { OpenedReadModels, Projector } from '@stageflow/readmodels';
import type { Infrastructure, Logger } from '@stageflow/runtime';

export interface BackgroundReadModelOptions {
  /** Default: on unless SF_READ_MODELS=off. */
  readonly enabled?: boolean;
  /** Schema holding the tables. Default: the namespace's (`readModelSchema`), as the API reads. */
  readonly schema?: string;
  /** Grace period before starting. Default 1 s. */
  readonly startDelayMs?: number;
}

export interface BackgroundReadModels {
  /** True once the projector runs; false if it did not start (disabled, busy, failed, stopped). */
  readonly started: Promise<boolean>;
  /** Catches up and closes (or abandons a start in progress). Never rejects. */
  stop(): Promise<void>;
}

/** Niceness of the embedded server: the run in the foreground keeps the CPU. */
const BACKGROUND_NICENESS = 10;
const DEFAULT_START_DELAY_MS = 1000;
/** Nothing waits for the start (stop abandons it), so only a hung server is given up on. */
const BACKGROUND_START_TIMEOUT_MS = 10 * 60_000;

export const readModelsEnabled = (env: NodeJS.ProcessEnv = process.env): boolean => env.SF_READ_MODELS !== 'off';

export function startBackgroundReadModels(infra: Infrastructure, logger: Logger, options: BackgroundReadModelOptions = {}): BackgroundReadModels {
  if (!(options.enabled ?? readModelsEnabled())) return { started: Promise.resolve(false), stop: async () => undefined };
  const abandon = new AbortController();
  let running: { opened: OpenedReadModels; projector: Projector } | undefined;
  const started = (async () => {
    if (!(await delay(options.startDelayMs ?? DEFAULT_START_DELAY_MS, abandon.signal))) return false;
    try {
      const { openReadModelDb, Projector, readModelSchema } = await import('@stageflow/readmodels');
      const opened = await openReadModelDb({
        databaseUrl: infra.config.databaseUrl,
        embeddedDir: path.join(infra.config.home, 'postgres'),
        schema: options.schema ?? readModelSchema(infra.config.namespace),
        embedded: { niceness: BACKGROUND_NICENESS, signal: abandon.signal, startTimeoutMs: BACKGROUND_START_TIMEOUT_MS },
      });
      const projector = new Projector(opened.db, infra.log, {
        filter: `${infra.config.namespace}.evt.run.>`,
        signatures: infra.runs.signatures,
        onError: (err) => logger.warn('projection failed; retrying', { error: errorText(err) }),
      }).start();
      running = { opened, projector };
      return true;
    } catch (err) {
      if (err instanceof Error && err.name === 'EmbeddedPostgresBusyError') logger.info('read models not projected here', { reason: err.message });
      else if (!abandon.signal.aborted) logger.warn('read models did not start', { error: errorText(err) });
      return false;
    }
  })();
  return {
    started,
    stop: async () => {
      abandon.abort();
      if (!(await started) || !running) return;
      const { opened, projector } = running;
      try {
        await projector.stop();
        await projector.catchUp();
      } catch (err) {
        logger.warn('read models did not catch up', { error: errorText(err) });
      } finally {
        await opened.close().catch((err: unknown) => logger.warn('read models did not close cleanly', { error: errorText(err) }));
      }
    },
  };
}

/** Resolves true after `ms`, or false as soon as the signal aborts. */
function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve(true);
    }, ms);
    function stop(): void {
      clearTimeout(timer);
      resolve(false);
    }
    signal.addEventListener('abort', stop, { once: true });
  });
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
