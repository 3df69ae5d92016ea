/**
 * What operators read and decide, shared by REST and MCP so both answer alike.
 *
 * Guarantees:
 * - Reads fold the run's log (the truth), never a cache; an unknown run or stage is NotFound.
 * - A decision goes through `decideOperator` and is appended atomically; a refusal carries the
 *   decider's code and reason.
 * - With an idempotency key, the same request makes one decision and every repeat gets the same
 *   answer (see DecisionKeys); the response to a decision is the run summary right after it.
 */
import { decideOperator, foldRun, summarizeRun, type OperatorCommand, type RunState, type RunSummary } from '@stageflow/domain';
import { verificationReport, type Infrastructure, type VerificationReport } from '@stageflow/runtime';
import { DecisionKeys, type DecidedOutcome } from './decision-keys';
import { NotFound } from './errors.filter';

export interface EnvelopeView {
  readonly run_id: string;
  readonly stage_id: string;
  readonly accepted: boolean;
  readonly attempt: number | null;
  readonly envelope: unknown;
}

export class RunOperations {
  private readonly keys: DecisionKeys;

  constructor(private readonly infra: Infrastructure) {
    this.keys = new DecisionKeys(infra.log, infra.config.namespace);
  }

  async run(runId: string): Promise<RunSummary> {
    return summarizeRun(await this.existing(runId));
  }

  async verification(runId: string, stageId: string): Promise<VerificationReport> {
    const state = await this.existing(runId);
    requireStage(state, stageId);
    return verificationReport(state, stageId, this.infra.blobs);
  }

  async envelope(runId: string, stageId: string): Promise<EnvelopeView> {
    const state = await this.existing(runId);
    const stage = requireStage(state, stageId);
    const last = [...stage.attempts].reverse().find((a) => a.envelope);
    const envelope = stage.envelope ?? last?.envelope;
    if (!envelope) throw new NotFound('envelope.not_found', `stage ${stageId} has no envelope yet`);
    return { run_id: runId, stage_id: stageId, accepted: stage.status === 'succeeded', attempt: last?.n ?? null, envelope };
  }

  /** Makes one operator decision; with a key, at most once for that key. */
  async decide(runId: string, command: OperatorCommand, idempotencyKey?: string): Promise<RunSummary> {
    const state = await this.existing(runId);
    if ('stageId' in command) requireStage(state, command.stageId);
    if (idempotencyKey === undefined) return (await this.apply(runId, command)).summary;
    return this.keys.once(runId, idempotencyKey, fingerprint(command), () => this.apply(runId, command), (outcome) => this.replay(runId, outcome));
  }

  private async apply(runId: string, command: OperatorCommand): Promise<{ summary: RunSummary; outcome: DecidedOutcome }> {
    let basedOn = 0;
    const { state, events } = await this.infra.runs.execute(runId, (current, loaded) => {
      basedOn = loaded.lastSubjectSequence;
      return decideOperator(command, current);
    });
    return { summary: summarizeRun(state), outcome: { based_on: basedOn, appended: events.length > 0 } };
  }

  /** The summary right after a recorded decision: the log up to the state it was decided on, plus the decision. */
  private async replay(runId: string, outcome: DecidedOutcome): Promise<RunSummary> {
    const read = await this.infra.log.readSubject(this.infra.runs.subject(runId));
    const upTo = read.messages.filter((m) => m.seq <= outcome.based_on);
    const decision = outcome.appended ? read.messages.find((m) => m.seq > outcome.based_on) : undefined;
    return summarizeRun(foldRun([...upTo, ...(decision ? [decision] : [])].flatMap((m) => this.infra.runs.eventsOf(m))));
  }

  private async existing(runId: string): Promise<RunState> {
    const { state } = await this.infra.runs.load(runId);
    if (!state.exists) throw new NotFound('run.not_found', `run ${runId} not found`);
    return state;
  }
}

function requireStage(state: RunState, stageId: string) {
  const stage = state.stages[stageId];
  if (!stage) throw new NotFound('stage.not_found', `run ${state.runId} has no stage ${stageId}`);
  return stage;
}

/** What makes two requests "the same": everything but who sent it and when. */
function fingerprint(command: OperatorCommand): string {
  return canonical(Object.fromEntries(Object.entries(command).filter(([key]) => key !== 'by' && key !== 'now')));
}

/** JSON with object keys sorted at every depth, so equal requests compare equal as text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
