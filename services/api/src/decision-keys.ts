/**
 * Idempotency keys of operator decisions (the `Idempotency-Key` header, the MCP tools'
 * `idempotency_key`), recorded durably in the log on `<ns>.evt.idem.<sha256("decision", run, key)>`
 * — not in a broker's dedupe window.
 *
 * Guarantees:
 * - The first request with a key claims it (append at expected sequence 0); only the claimer
 *   decides, and it records the outcome once (append at the claim's sequence).
 * - Every later request with that key gets the recorded outcome: the same summary for a decision
 *   (rebuilt from the log, exactly as it was right after the decision), the same refusal for a
 *   refused one. No second decision is made.
 * - The same key with a different request is refused (`idempotency.key_reused`).
 * - A concurrent request with a claimed key waits for the outcome; a claim whose request died
 *   before recording an outcome is taken over after CLAIM_STALE_MS (the decider refuses a decision
 *   already made, so a takeover never decides twice what is decided once).
 */
import { createHash } from 'node:crypto';
import { CommandRefused, InvalidCommand, subjects } from '@stageflow/domain';
import { WrongExpectedSequenceError, type EventLog, type StoredMessage } from '@stageflow/eventlog';

/** Where a recorded decision sits in the run's log: the subject sequence it was decided on. */
export interface DecidedOutcome {
  readonly based_on: number;
  /** False when the decision changed nothing (nothing was appended after `based_on`). */
  readonly appended: boolean;
}

interface Claim {
  readonly kind: 'decision_claim';
  readonly key: string;
  readonly run_id: string;
  readonly request: string;
  readonly at: string;
}

type Outcome =
  | ({ readonly kind: 'decision_outcome'; readonly status: 'decided' } & DecidedOutcome)
  | { readonly kind: 'decision_outcome'; readonly status: 'refused' | 'invalid'; readonly code: string; readonly message: string };

const MAX_KEY_LENGTH = 255;
export const CLAIM_STALE_MS = 30_000;
const WAIT_FOR_OUTCOME_MS = 10_000;
const POLL_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class DecisionKeys {
  constructor(
    private readonly log: EventLog,
    private readonly namespace: string,
  ) {}

  async once<T>(
    runId: string,
    key: string,
    request: string,
    decide: () => Promise<{ summary: T; outcome: DecidedOutcome }>,
    replay: (outcome: DecidedOutcome) => Promise<T>,
  ): Promise<T> {
    if (!key || key.length > MAX_KEY_LENGTH || /[^\x21-\x7e]/.test(key)) {
      throw new InvalidCommand('idempotency.key_invalid', `an idempotency key is 1..${MAX_KEY_LENGTH} printable ASCII characters without spaces`);
    }
    const subject = subjects(this.namespace).idempotency(createHash('sha256').update(`decision\n${runId}\n${key}`).digest('hex'));
    const deadline = Date.now() + WAIT_FOR_OUTCOME_MS;
    for (;;) {
      const read = await this.log.readSubject<Claim | Outcome>(subject);
      const [claim, outcome] = read.messages as [StoredMessage<Claim> | undefined, StoredMessage<Outcome> | undefined];
      if (claim && claim.data.request !== request) {
        throw new InvalidCommand('idempotency.key_reused', `idempotency key ${key} was already used for a different request on run ${runId}`);
      }
      if (outcome) return this.answer(outcome.data, replay);
      let claimSeq: number;
      if (!claim) {
        try {
          const record: Claim = { kind: 'decision_claim', key, run_id: runId, request, at: new Date().toISOString() };
          claimSeq = (await this.log.append(subject, record, { expectedLastSubjectSequence: 0 })).seq;
        } catch (err) {
          if (err instanceof WrongExpectedSequenceError) continue;
          throw err;
        }
      } else if (Date.now() - Date.parse(claim.data.at) < CLAIM_STALE_MS) {
        if (Date.now() > deadline) throw new CommandRefused('idempotency.in_progress', `a request with idempotency key ${key} is still being decided; send it again later`);
        await sleep(POLL_MS);
        continue;
      } else claimSeq = claim.seq;
      return this.decideAndRecord(subject, claimSeq, decide, replay);
    }
  }

  private async decideAndRecord<T>(
    subject: string,
    claimSeq: number,
    decide: () => Promise<{ summary: T; outcome: DecidedOutcome }>,
    replay: (outcome: DecidedOutcome) => Promise<T>,
  ): Promise<T> {
    let result: { summary: T; outcome: DecidedOutcome } | undefined;
    let record: Outcome;
    try {
      result = await decide();
      record = { kind: 'decision_outcome', status: 'decided', ...result.outcome };
    } catch (err) {
      if (err instanceof CommandRefused) record = { kind: 'decision_outcome', status: 'refused', code: err.code, message: err.message };
      else if (err instanceof InvalidCommand) record = { kind: 'decision_outcome', status: 'invalid', code: err.code, message: err.message };
      else throw err;
    }
    try {
      await this.log.append(subject, record, { expectedLastSubjectSequence: claimSeq });
    } catch (err) {
      if (!(err instanceof WrongExpectedSequenceError)) throw err;
      // A takeover recorded first: its outcome is the answer for this key.
      const read = await this.log.readSubject<Outcome>(subject);
      const winner = read.messages[1];
      if (winner) return this.answer(winner.data, replay);
      throw err;
    }
    return result ? result.summary : this.answer(record, replay);
  }

  private async answer<T>(outcome: Outcome, replay: (outcome: DecidedOutcome) => Promise<T>): Promise<T> {
    switch (outcome.status) {
      case 'decided':
        return replay(outcome);
      case 'refused':
        throw new CommandRefused(outcome.code, outcome.message);
      case 'invalid':
        throw new InvalidCommand(outcome.code, outcome.message);
      default: {
        const unreachable: never = outcome;
        throw new Error(`unknown idempotency outcome ${JSON.stringify(unreachable)}`);
      }
    }
  }
}
