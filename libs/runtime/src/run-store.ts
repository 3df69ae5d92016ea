/**
 * Loading a run's state from the log and appending decisions to it.
 *
 * Guarantees:
 * - One message on `sf.evt.run.<runId>` carries one whole decision (`{ events: [...] }`), so a
 *   decision is appended atomically or not at all.
 * - Every append names the subject's last sequence it decided on
 *   (`Nats-Expected-Last-Subject-Sequence`); a concurrent decision makes it fail, and `execute`
 *   reloads and decides again, so the loser of a race finds the work done.
 * - The message id is derived from the subject, that sequence and the decision's content, so
 *   retrying an append whose outcome is unknown (timeout) can never store it twice, and a
 *   different decision on the same sequence is never mistaken for it.
 * - Events that change nothing in the state are not appended.
 * - A decision whose events nest deeper than MAX_BATCH_DEPTH is refused (InvalidCommand
 *   `input.too_deep`, not retryable) before anything recursive (JSON, proto validation) sees it.
 * - Every event is read through `eventsOf`, which checks signatures: a verdict or operator
 *   decision without a valid one is replaced by the `SignatureRefused` the fold records instead.
 *   Events this store appends are signed with this process's key for their role and folded
 *   into its cached state exactly as a reader folds them.
 */
import { createHash } from 'node:crypto';
import { evolve, initialRunState, InvalidCommand, MAX_INPUT_DEPTH, nestsDeeperThan, subjects, upcast, type RunEvent, type RunState } from '@stageflow/domain';
import { WrongExpectedSequenceError, type EventLog, type StoredMessage } from '@stageflow/eventlog';
import { EventSignatures } from './signing/event-signatures';
import { KeyRing } from './signing/keys';
import { runIdOf } from './subjects';

export interface RunEventBatch {
  readonly events: readonly RunEvent[];
}

export interface LoadedRun {
  readonly state: RunState;
  readonly events: readonly RunEvent[];
  readonly lastSubjectSequence: number;
}

/** Nesting a stored decision may have: caller and agent values (MAX_INPUT_DEPTH) inside the event's own structure. */
export const MAX_BATCH_DEPTH = MAX_INPUT_DEPTH * 4;

/** Runs whose folded state a process keeps, most recently used last. */
const RUN_CACHE_SIZE = 500;

export class RunStore {
  private readonly cache = new Map<string, LoadedRun>();

  constructor(
    readonly log: EventLog,
    readonly namespace = 'sf',
    /** Called with every event before it is appended (tests validate against proto/ here). */
    private readonly beforeAppend?: (event: RunEvent) => void,
    /** Signs what this process appends and checks what it reads; tests may omit it (keys of their own, in memory). */
    readonly signatures: EventSignatures = new EventSignatures(namespace, KeyRing.inMemory()),
  ) {}

  /** The events of one stored decision on a run subject, each upcast and admitted (see EventSignatures.admit). */
  eventsOf(message: StoredMessage): RunEvent[] {
    const data = message.data as Partial<RunEventBatch>;
    if (!Array.isArray(data?.events)) return [];
    const runId = runIdOf(message.subject);
    return data.events.map((event) => this.signatures.admit(runId, upcast(event)));
  }

  subject(runId: string): string {
    return subjects(this.namespace).run(runId);
  }

  /**
   * The run's state. Folded incrementally: a run loaded before is read only from its last known
   * sequence on (the log is append-only, so the fold is the same as folding from the start).
   */
  async load(runId: string): Promise<LoadedRun> {
    const cached = this.cache.get(runId);
    const read = await this.log.readSubject(this.subject(runId), cached?.lastSubjectSequence ?? 0);
    if (cached && read.messages.length === 0 && read.lastSubjectSequence === cached.lastSubjectSequence) return this.remember(runId, cached);
    let state = cached?.state ?? initialRunState();
    const events = cached ? [...cached.events] : [];
    for (const message of read.messages) {
      for (const event of this.eventsOf(message)) {
        state = evolve(state, event);
        events.push(event);
      }
    }
    return this.remember(runId, { state, events, lastSubjectSequence: read.lastSubjectSequence });
  }

  private remember(runId: string, loaded: LoadedRun): LoadedRun {
    this.cache.delete(runId);
    this.cache.set(runId, loaded);
    if (this.cache.size > RUN_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    return loaded;
  }

  /**
   * Decides on the current state and appends the result as one message. Returns the events
   * appended (empty when the decision was a no-op). Refusals thrown by `decide` propagate.
   */
  async execute(runId: string, decide: (state: RunState, loaded: LoadedRun) => readonly RunEvent[], maxConflicts = 20): Promise<{ events: readonly RunEvent[]; state: RunState }> {
    for (let conflict = 0; ; conflict++) {
      const loaded = await this.load(runId);
      const decided = decide(loaded.state, loaded);
      let state = loaded.state;
      const effective: RunEvent[] = [];
      for (const decidedEvent of decided) {
        const event = this.signatures.sign(runId, state, decidedEvent);
        // Folded as any reader will fold it: a key the readers do not trust makes it a refusal here too.
        const next = evolve(state, this.signatures.admit(runId, event));
        if (next !== state) effective.push(event);
        state = next;
      }
      if (effective.length === 0) return { events: [], state };
      if (nestsDeeperThan(effective, MAX_BATCH_DEPTH)) throw new InvalidCommand('input.too_deep', `a decision on run ${runId} nests deeper than ${MAX_BATCH_DEPTH} levels`);
      effective.forEach((e) => this.beforeAppend?.(e));
      const subject = this.subject(runId);
      const batch: RunEventBatch = { events: effective };
      const digest = createHash('sha256').update(JSON.stringify(batch)).digest('hex').slice(0, 16);
      try {
        const appended = await this.log.append(subject, batch, {
          expectedLastSubjectSequence: loaded.lastSubjectSequence,
          msgId: `${subject}@${loaded.lastSubjectSequence}:${digest}`,
        });
        // The expected sequence held, so this message directly follows what was loaded.
        if (!appended.duplicate) this.remember(runId, { state, events: [...loaded.events, ...effective], lastSubjectSequence: appended.seq });
        return { events: effective, state };
      } catch (err) {
        if (err instanceof WrongExpectedSequenceError && conflict < maxConflicts) continue;
        throw err;
      }
    }
  }
}

