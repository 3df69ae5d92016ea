/**
 * The live projector: reads the log from its checkpoint in batches and projects them, until
 * stopped. The checkpoint lives in the database, so a restarted projector (or another replica)
 * continues exactly where the last committed batch ended.
 */
import type { EventLog } from '@stageflow/eventlog';
import type { Kysely } from 'kysely';
import type { Database } from '../schema';
import { DEFAULT_PROJECTOR, readCheckpoint } from './checkpoint';
import type { EventAdmission } from './decode';
import { project } from './project';

export interface ProjectorOptions {
  /** Checkpoint name. Default `readmodels`. */
  readonly name?: string;
  /** Subject filter read from the log. Default `sf.evt.run.>`. */
  readonly filter?: string;
  /** Messages (decisions) per transaction. Default 500. */
  readonly batchSize?: number;
  /** Idle wait between polls when caught up (a `wake()` cuts it short). Default 250 ms. */
  readonly pollMs?: number;
  /** Called after every batch with the current lag (events not yet projected). */
  readonly onLag?: (lag: number) => void;
  /** Called when a batch fails; the projector waits `pollMs` and tries again. */
  readonly onError?: (error: unknown) => void;
  /** Checks signatures: the read models apply only what every other reader applies. */
  readonly signatures: EventAdmission;
}

export interface ProjectorMetrics {
  /** log.lastSequence() − checkpoint, as of the last batch. */
  readonly lag: number;
  readonly checkpoint: number;
  readonly batches: number;
  /** Log messages (decisions) projected. */
  readonly messages: number;
  /** Events in those messages. */
  readonly events: number;
  readonly errors: number;
  readonly lastError?: string;
}

export class Projector {
  private readonly name: string;
  private readonly filter: string;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private running = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private current: ProjectorMetrics = { lag: 0, checkpoint: 0, batches: 0, messages: 0, events: 0, errors: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: EventLog,
    private readonly options: ProjectorOptions,
  ) {
    this.name = options.name ?? DEFAULT_PROJECTOR;
    this.filter = options.filter ?? 'sf.evt.run.>';
    this.batchSize = options.batchSize ?? 500;
    this.pollMs = options.pollMs ?? 250;
  }

  /** Starts the loop (idempotent). */
  start(): this {
    if (!this.running) {
      this.running = true;
      this.loop = this.run();
    }
    return this;
  }

  /** Ends the idle wait now: new events were appended. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Finishes the batch in flight (it commits or rolls back whole), then stops. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  metrics(): ProjectorMetrics {
    return this.current;
  }

  /** Events in the log not yet projected: log.lastSequence() − checkpoint. */
  async lag(): Promise<number> {
    const [last, checkpoint] = await Promise.all([this.log.lastSequence(), readCheckpoint(this.db, this.name)]);
    return Math.max(0, last - checkpoint);
  }

  /** Projects batches until the checkpoint reaches the log's end as seen at the call. */
  async catchUp(): Promise<void> {
    while (!(await this.step()).caughtUp);
  }

  /** One batch. `caughtUp` when the read came back short: everything matching is projected. */
  async step(): Promise<{ applied: number; caughtUp: boolean }> {
    const checkpoint = await readCheckpoint(this.db, this.name);
    const end = await this.log.lastSequence();
    const messages = await this.log.read(this.filter, checkpoint, this.batchSize);
    const caughtUp = messages.length < this.batchSize;
    const result = await project(this.db, messages, { name: this.name, throughSeq: caughtUp ? end : undefined, signatures: this.options.signatures });
    const lag = Math.max(0, (await this.log.lastSequence()) - result.checkpoint);
    this.current = {
      ...this.current,
      lag,
      checkpoint: result.checkpoint,
      batches: this.current.batches + 1,
      messages: this.current.messages + result.applied,
      events: this.current.events + result.events,
    };
    this.options.onLag?.(lag);
    return { applied: result.applied, caughtUp };
  }

  private async run(): Promise<void> {
    while (this.running) {
      let caughtUp = true;
      try {
        caughtUp = (await this.step()).caughtUp;
      } catch (err) {
        this.current = { ...this.current, errors: this.current.errors + 1, lastError: err instanceof Error ? err.message : String(err) };
        this.options.onError?.(err);
      }
      if (caughtUp && this.running) await this.idle();
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.pollMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }
}

/** Starts a projector loop. */
export function runProjector(db: Kysely<Database>, log: EventLog, options: ProjectorOptions): Projector {
  return new Projector(db, log, options).start();
}
