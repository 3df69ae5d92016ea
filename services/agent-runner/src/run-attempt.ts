/**
 * Runs one stage attempt's agent session on this replica and records what it led to.
 *
 * Guarantees:
 * - The checkout baseline is recorded once, before the agent first acts; a resumed attempt keeps
 *   it (and its deadline, its operator exchanges, the checkout and the artifacts as left).
 * - Every outcome is appended through the attempt decider: a capture (with sealed snapshots of
 *   the checkout and the artifact directory), a failure, or a park on an operator question
 *   (with the session's resume state and sealed snapshots of its checkout and artifacts, so any
 *   replica can continue it from what it left).
 * - Snapshots never hold the state or work directories, and hold what the attempt added or
 *   changed only within the configured size limits. Files a seal refuses (a hard link, a device,
 *   a FIFO, a socket, a file or attempt over its limit) fail the attempt on this delivery with the
 *   seal's reason (an agent failure; a runner error when the checkout is refused before the agent
 *   acted): the files would be refused again, so nothing is retried.
 * - Emit rejections and reminders are recorded as they happen.
 * - Every turn's transcript (its input, the tool calls made through the host, its result), with
 *   secrets redacted, is stored as a blob and recorded (AgentTurnRecorded) before the outcome.
 */
import { randomUUID } from 'node:crypto';
import { buildPrompt, runSession, ToolHost, TranscriptRecorder, type AgentBackend, type ResumeState, type SessionOutcome, type TurnInput, type TurnResult } from '@stageflow/agents';
import { checkRequiredOutputs, formatSelfCheck, readManifest, sealDirectory, SnapshotBudget, SnapshotRefusedError, type SealOptions, type SealedSnapshot, type SnapshotManifest } from '@stageflow/checks';
import { decideAttempt, loopAllowsSendBack, stageDefinition, type AttemptCommand, type RunEvent, type RunState } from '@stageflow/domain';
import type { Infrastructure } from '@stageflow/runtime';
import { validatePayload } from '@stageflow/runtime';
import { parkedWorkspace, prepareWorkspace, writeMarker, type AttemptWorkspace, type ParkedWorkspace } from './run-workspace';

/** An attempt command without the fields this module fills in (distributes over the union). */
type AttemptAction = AttemptCommand extends infer C ? (C extends AttemptCommand ? Omit<C, 'stageId' | 'attempt' | 'now'> : never) : never;
type Record_ = (action: AttemptAction) => Promise<unknown>;

export interface RunAttemptInput {
  readonly infra: Infrastructure;
  readonly backend: AgentBackend;
  readonly state: RunState;
  readonly events: readonly RunEvent[];
  readonly stageId: string;
  readonly attempt: number;
  /** Where this replica keeps run directories and checkouts. */
  readonly root: string;
  /** Fires on cancel or shutdown. */
  readonly signal: AbortSignal;
}

export async function runAttempt(input: RunAttemptInput): Promise<SessionOutcome> {
  const { infra, state, stageId } = input;
  const stage = stageDefinition(state, stageId)!;
  const stageState = state.stages[stageId];
  const attempt = stageState.attempts.find((a) => a.n === input.attempt)!;
  const record: Record_ = (action) =>
    infra.runs.execute(state.runId, (current) => decideAttempt({ ...action, stageId, attempt: attempt.n, now: new Date().toISOString() } as AttemptCommand, current));

  const attemptExchanges = stageState.exchanges.filter((x) => x.attempt === attempt.n);
  const lastExchange = attemptExchanges[attemptExchanges.length - 1];
  const resume = lastExchange?.answer ? { state: lastExchange.resume as unknown as ResumeState, exchange: lastExchange } : undefined;
  const parked = resume ? parkedWorkspace(lastExchange?.resume) : undefined;
  const workspace = await prepareWorkspace({
    root: input.root,
    runId: state.runId,
    stageId,
    attempt: attempt.n,
    checkout: state.checkout,
    events: input.events,
    blobs: infra.blobs,
    ...(parked ? { parked } : {}),
  });
  const seal = (dir: string, options: SealOptions) => sealDirectory(dir, infra.blobs, { ...options, exclude: [infra.config.home, infra.config.workDir] });
  let baselineDigest = attempt.baseline;
  if (!baselineDigest) {
    // A refusal here is thrown (not retryable): the job is dead-lettered at once and the attempt fails as a runner error.
    baselineDigest = (await seal(workspace.checkoutDir, { label: 'checkout before the agent acted' })).digest;
    await record({ type: 'RecordBaseline', manifest: baselineDigest });
  }

  const transcripts = new TranscriptRecorder();
  const host = new ToolHost({
    runId: state.runId,
    runDir: workspace.runDir,
    stage,
    attempt: attempt.n,
    checkout: workspace.checkoutDir,
    validatePayload: (schema, value) => validatePayload(schema, value),
    exchanges: attemptExchanges,
    ...(stage.loop ? { loopAllowsSendBack: loopAllowsSendBack(state, stageId) } : {}),
    selfCheck: async () => {
      const result = await checkRequiredOutputs({ items: stage.verify, artifactsDir: workspace.artifactsDir, attemptStartedAt: new Date(attempt.startedAt) });
      return { ok: result.ok, report: formatSelfCheck(result) };
    },
    onRejected: async (reason) => {
      await record({ type: 'RejectEnvelope', reason });
    },
    newExchangeId: () => `x-${randomUUID()}`,
    onToolCall: transcripts.onToolCall,
  });
  const recordTurn = async (turn: number, turnInput: TurnInput, result: TurnResult) => {
    const transcript = transcripts.takeTurn(turn, turnInput, result);
    const digest = await infra.blobs.put(Buffer.from(JSON.stringify(transcript), 'utf8'));
    await record({ type: 'RecordTurn', turn, transcript: digest, toolCalls: transcript.toolCalls.length, result: result.kind });
  };
  const prompt = buildPrompt({
    stage,
    input: attempt.input,
    upstream: attempt.upstream,
    ...(attempt.capsule ? { capsule: attempt.capsule } : {}),
    ...(attempt.guidance ? { guidance: attempt.guidance } : {}),
    ...(attempt.loopContext ? { loopContext: attempt.loopContext as unknown as Record<string, unknown> } : {}),
    answeredExchanges: stageState.exchanges.filter((x) => x.answer),
    tools: host.tools().map((t) => t.name),
  });
  const outcome = await runSession({
    backend: input.backend,
    host,
    stage,
    runId: state.runId,
    attempt: attempt.n,
    prompt,
    signal: input.signal,
    deadlineAt: attempt.deadlineAt,
    recorder: {
      onReminder: async (n, lastRejection) => void (await record({ type: 'SendReminder', reminder: n, ...(lastRejection ? { lastRejection } : {}) })),
      onTurn: recordTurn,
    },
    ...(resume ? { resume } : {}),
  });
  const baselineDigestOfRecord = baselineDigest;
  let baseline: Promise<SnapshotManifest> | undefined;
  const budget = new SnapshotBudget(infra.config.snapshotLimits);
  const sealCounted: Seal = async (dir, options) => {
    const before = dir === workspace.checkoutDir ? await (baseline ??= readManifest(baselineDigestOfRecord, infra.blobs)) : { files: [] };
    return seal(dir, { ...options, baseline: before, budget });
  };
  try {
    await recordOutcome(outcome, workspace, sealCounted, record);
  } catch (error) {
    if (!(error instanceof SnapshotRefusedError)) throw error;
    await record({ type: 'FailAttempt', kind: 'agent_failure', reason: error.message });
    return { kind: 'failed', failureKind: 'agent_failure', reason: error.message };
  }
  return outcome;
}

type Seal = (dir: string, options: Pick<SealOptions, 'ignoreGit' | 'label'>) => Promise<SealedSnapshot>;

async function recordOutcome(outcome: SessionOutcome, workspace: AttemptWorkspace, seal: Seal, record: Record_): Promise<void> {
  switch (outcome.kind) {
    case 'emitted': {
      const checkout = await seal(workspace.checkoutDir, { label: 'checkout' });
      const artifacts = await seal(workspace.artifactsDir, { ignoreGit: true, label: 'artifact directory' });
      await record({ type: 'CaptureEnvelope', envelope: outcome.envelope, checkoutSnapshot: checkout.digest, artifactsSnapshot: artifacts.digest });
      if (!workspace.inPlace) await writeMarker(workspace.checkoutDir, checkout.digest);
      return;
    }
    case 'failed':
      await record({ type: 'FailAttempt', kind: outcome.failureKind, reason: outcome.reason, ...(outcome.envelope ? { envelope: outcome.envelope } : {}) });
      return;
    case 'parked': {
      // Sealed so that any replica, sharing no disk with this one, resumes from what the session left.
      const artifacts = await seal(workspace.artifactsDir, { ignoreGit: true, label: 'artifact directory' });
      const checkout = workspace.inPlace ? undefined : await seal(workspace.checkoutDir, { label: 'checkout' });
      const parked: ParkedWorkspace = { artifacts: artifacts.digest, ...(checkout ? { checkout: checkout.digest } : {}) };
      await record({ type: 'AskOperator', exchangeId: outcome.exchangeId, question: outcome.question, resume: { ...(outcome.resume as unknown as Record<string, unknown>), workspace: parked } });
      if (checkout) await writeMarker(workspace.checkoutDir, checkout.digest);
      return;
    }
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown session outcome ${String(unreachable)}`);
    }
  }
}
