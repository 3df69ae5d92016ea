/**
 * Verifies one captured attempt against its sealed snapshots: materializes what the attempt left
 * (checkout and artifacts) into scratch space of this process, runs the after-phase checks there,
 * and returns their results. Nothing the agent does after capture can change what is checked.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { materializeSnapshot, readManifest, runAfterChecks, type OperatorExchange } from '@stageflow/checks';
import { stageDefinition, type CheckResult, type RunState } from '@stageflow/domain';
import type { BlobStore } from '@stageflow/eventlog';
import { CheckCannotRunError } from '@stageflow/checks';
import { catalogPayloadValidator } from './payload-validator';

export interface VerifyAttemptInput {
  readonly state: RunState;
  readonly stageId: string;
  readonly attempt: number;
  readonly blobs: BlobStore;
  readonly scratchRoot: string;
  readonly onProgress: () => void;
  /** How often a running check reports progress; below the job's ack wait so it is never redelivered meanwhile. */
  readonly progressIntervalMs: number;
}

export async function verifyAttempt(input: VerifyAttemptInput): Promise<CheckResult[]> {
  const { state, stageId } = input;
  const definition = stageDefinition(state, stageId);
  const stage = state.stages[stageId];
  const attempt = stage?.attempts.find((a) => a.n === input.attempt);
  if (!definition || !attempt?.envelope || !attempt.checkoutSnapshot || !attempt.artifactsSnapshot) {
    throw new CheckCannotRunError(`attempt ${input.attempt} of ${stageId} has no captured candidate`);
  }
  await fs.mkdir(input.scratchRoot, { recursive: true });
  const scratch = await fs.mkdtemp(path.join(input.scratchRoot, `${stageId}-${input.attempt}-`));
  try {
    const checkoutDir = path.join(scratch, 'checkout');
    const artifactsDir = path.join(scratch, 'run', 'stages', stageId, 'attempts', String(attempt.n), 'artifacts');
    const afterManifest = await materializeSnapshot(attempt.checkoutSnapshot, input.blobs, checkoutDir);
    await materializeSnapshot(attempt.artifactsSnapshot, input.blobs, artifactsDir);
    const baselineManifest = attempt.baseline ? await readManifest(attempt.baseline, input.blobs) : undefined;
    const operatorExchanges: OperatorExchange[] = stage.exchanges.map((x) => ({
      kind: x.question.kind,
      decision: x.answer?.decision,
      answered: x.answer !== undefined,
      attempt: x.attempt,
    }));
    return await runAfterChecks(definition.verify, {
      checkoutDir,
      artifactsDir,
      envelope: attempt.envelope,
      outputSchema: definition.io.output.schema,
      validatePayload: catalogPayloadValidator,
      operatorExchanges,
      baselineManifest,
      afterManifest,
      env: {
        set: {
          SF_RUN_ID: state.runId,
          SF_STAGE_ID: stageId,
          SF_ATTEMPT: String(attempt.n),
          SF_RUN_DIR: path.join(scratch, 'run'),
          SF_ARTIFACTS_DIR: artifactsDir,
          SF_CHECKOUT: checkoutDir,
        },
      },
      onProgress: input.onProgress,
      progressIntervalMs: input.progressIntervalMs,
    });
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

export const defaultScratchRoot = () => path.join(os.tmpdir(), 'stageflow-verify');
