/**
 * Accepting run requests (REST `POST /api/runs` and the bus `sf.cmd.run.request`).
 *
 * Guarantees:
 * - The idempotency key is recorded durably in the log (`<ns>.evt.idem.<sha256(key)>`, first
 *   writer wins by expected sequence 0), not only in a broker's dedupe window: the same key a
 *   week later returns the same run id.
 * - An invalid request is answered with a typed rejection and recorded on
 *   `<ns>.evt.request.rejected`; it is never dropped silently. An input over the depth or size
 *   bound (`input.too_deep`, `input.too_large`) is refused before anything walks it.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  decideRequest,
  inputLimitProblem,
  InvalidCommand,
  subjects,
  type Checkout,
  type PipelineDefinition,
  type RunRequestCommand,
  type RunRequestRejected,
  type RunRequestReply,
} from '@stageflow/domain';
import { WrongExpectedSequenceError } from '@stageflow/eventlog';
import { validateStageInput, type Infrastructure } from '@stageflow/runtime';
import { loadBundle } from './pipeline-bundle';

export interface PipelineResolver {
  resolve(ref: { id: string; version?: string }): Promise<PipelineDefinition>;
}

export interface Requester {
  readonly by: string;
  /** Who the caller says it requested for: a display note, not verified. */
  readonly claimedBy?: string;
}

interface IdempotencyRecord {
  readonly key: string;
  readonly run_id: string;
}

export class RunRequests {
  constructor(
    private readonly infra: Infrastructure,
    private readonly pipelines?: PipelineResolver,
  ) {}

  /** The run is recorded as requested by `requester.by`, with its `claimedBy` note; the caller decides both. */
  async accept(command: RunRequestCommand, idempotencyKey: string | undefined, requester: Requester): Promise<RunRequestReply> {
    const ns = this.infra.config.namespace;
    const idemSubject = idempotencyKey ? subjects(ns).idempotency(createHash('sha256').update(idempotencyKey).digest('hex')) : undefined;
    const existing = idemSubject ? await this.recorded(idemSubject) : undefined;
    if (existing && (await this.infra.runs.load(existing)).state.exists) return { accepted: true, run_id: existing, duplicate: true };
    let pipeline: PipelineDefinition;
    let checkout: Checkout;
    let input: Record<string, unknown>;
    try {
      ({ pipeline, checkout, input } = await this.validate(command));
    } catch (err) {
      if (!(err instanceof InvalidCommand)) throw err;
      await this.reject(err.code, err.message, idempotencyKey);
      return { accepted: false, code: err.code, message: err.message };
    }
    // A key recorded by a request that died before its run was appended is completed here.
    let runId = existing ?? `run_${Date.now().toString(36).padStart(9, '0')}${randomBytes(4).toString('hex')}`;
    if (idemSubject && !existing) {
      try {
        await this.infra.log.append(idemSubject, { key: idempotencyKey as string, run_id: runId } satisfies IdempotencyRecord, { expectedLastSubjectSequence: 0 });
      } catch (err) {
        if (!(err instanceof WrongExpectedSequenceError)) throw err;
        const winner = await this.recorded(idemSubject);
        if (!winner) throw err;
        if ((await this.infra.runs.load(winner)).state.exists) return { accepted: true, run_id: winner, duplicate: true };
        runId = winner;
      }
    }
    const appended = await this.infra.runs.execute(runId, (state) =>
      decideRequest(
        { type: 'RequestRun', runId, pipeline, input, checkout, labels: command.labels ?? {}, ...(idempotencyKey ? { idempotencyKey } : {}), requestedBy: requester.by, ...(requester.claimedBy ? { claimedBy: requester.claimedBy } : {}), now: new Date().toISOString() },
        state,
      ),
    );
    return { accepted: true, run_id: runId, duplicate: appended.events.length === 0 };
  }

  private async recorded(subject: string): Promise<string | undefined> {
    const read = await this.infra.log.readSubject<IdempotencyRecord>(subject);
    return read.messages[0]?.data.run_id;
  }

  /** Records a refusal and returns the reply that names it. */
  async refuse(code: string, message: string, idempotencyKey?: string): Promise<RunRequestReply> {
    await this.reject(code, message, idempotencyKey);
    return { accepted: false, code, message };
  }

  private async reject(code: string, message: string, idempotencyKey?: string): Promise<void> {
    const event: RunRequestRejected = { v: 1, type: 'RunRequestRejected', at: new Date().toISOString(), code, message, ...(idempotencyKey ? { idempotencyKey } : {}) };
    await this.infra.log.append(subjects(this.infra.config.namespace).runRejections, event);
  }

  private async validate(command: RunRequestCommand): Promise<{ pipeline: PipelineDefinition; checkout: Checkout; input: Record<string, unknown> }> {
    if (command === null || typeof command !== 'object' || Array.isArray(command)) throw new InvalidCommand('request.invalid', 'a run request is a JSON object');
    const ref = command.pipeline;
    let pipeline: PipelineDefinition;
    if (ref && typeof ref === 'object' && 'inline' in ref) pipeline = loadBundle(ref.inline);
    else if (ref && typeof ref === 'object' && 'ref' in ref) {
      if (!this.pipelines) throw new InvalidCommand('pipeline.unknown', `no published pipelines here; send the pipeline inline`);
      pipeline = await this.pipelines.resolve(ref.ref);
    } else throw new InvalidCommand('request.invalid', 'pipeline must be {"inline": {entry, files}} or {"ref": {id, version?}}');
    const input = command.input ?? {};
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidCommand('request.invalid', 'input must be a JSON object');
    const tooBig = inputLimitProblem(input);
    if (tooBig) throw new InvalidCommand(tooBig.code, tooBig.message);
    for (const stage of pipeline.stages.filter((s) => s.entry)) {
      const problem = validateStageInput(stage, input);
      if (problem) throw new InvalidCommand('request.input_invalid', `input does not match io.input.schema of entry stage ${stage.id}: ${problem}`);
    }
    return { pipeline, checkout: this.checkout(command.checkout), input: input as Record<string, unknown> };
  }

  private checkout(requested: RunRequestCommand['checkout']): Checkout {
    if (requested === undefined || requested === null) return { kind: 'fresh' };
    if ('git' in requested && typeof requested.git === 'string') return { kind: 'git', url: requested.git, ref: requested.ref ?? 'HEAD' };
    if ('path' in requested && typeof requested.path === 'string') {
      if (this.infra.config.mode === 'cluster') {
        throw new InvalidCommand('request.checkout_path_refused', 'a {path} checkout works only in the embedded default: no pod sees the caller\'s files; use {git, ref}');
      }
      return { kind: 'path', path: requested.path };
    }
    throw new InvalidCommand('request.invalid', 'checkout must be {"git": url, "ref"?: ref}, {"path": dir} (embedded only), or null');
  }
}
