/**
 * `sf runs show|verify|answer|recover|retry|cancel --server <api-url>`: the same commands against a
 * cluster through its REST API, from any machine (no pipeline file, no checkout, no log access).
 * A decision is recorded by the API (same deciders, same refusals) and the run is then followed
 * with the embedded default's output and exit codes, unless `--no-wait`.
 */
import { runStatus, summarizeRun, type OperatorCommand } from '@stageflow/domain';
import { formatVerification } from '@stageflow/runtime';
import { exitCodeFor } from '../exit-codes';
import type { Output } from '../output';
import { board } from '../progress';
import { ApiClient } from './client';
import { followRemote, loadRemote } from './follow';

export async function showOnServer(server: string, runId: string, out: Output, options: { json: boolean; includeStages: boolean }): Promise<number> {
  const client = ApiClient.fromEnv(server);
  const run = await loadRemote(client, runId);
  const summary = summarizeRun(run.state, { includeEnvelopes: options.includeStages });
  out.out(options.json ? JSON.stringify(summary, null, 2) : board(summary));
  return exitCodeFor(runStatus(run.state));
}

/** `sf runs list --server`: the API's read models, filtered and paginated there. */
export async function listOnServer(server: string, query: { status?: string; pipeline?: string; limit: string }, out: Output, json: boolean): Promise<number> {
  const page = await ApiClient.fromEnv(server).runs<{ runs: { run_id: string; pipeline: string; status: string; started_at: string }[]; next_cursor?: string }>(query);
  if (json) out.out(JSON.stringify(page, null, 2));
  else out.out(page.runs.length ? page.runs.map((r) => `${r.run_id}  ${r.pipeline}  ${r.status}  ${r.started_at}`).join('\n') : 'no runs');
  return 0;
}

export async function verifyOnServer(server: string, runId: string, stageId: string, out: Output, json: boolean): Promise<number> {
  const report = await ApiClient.fromEnv(server).verification(runId, stageId);
  out.out(json ? JSON.stringify(report, null, 2) : formatVerification(report));
  return 0;
}

export async function decideOnServer(server: string, runId: string, command: OperatorCommand, out: Output, options: { json: boolean; wait: boolean; idempotencyKey?: string }): Promise<number> {
  const plain = ApiClient.fromEnv(server);
  const client = options.idempotencyKey ? plain.withIdempotencyKey(options.idempotencyKey) : plain;
  const before = options.wait ? await loadRemote(client, runId) : undefined;
  await send(client, runId, command);
  if (!before) {
    out.out(options.json ? JSON.stringify({ run_id: runId, recorded: true }) : `recorded for run ${runId}`);
    return 0;
  }
  return followRemote(client, runId, out, { json: options.json, includeStages: false, from: before });
}

function send(client: ApiClient, runId: string, command: OperatorCommand): Promise<unknown> {
  switch (command.type) {
    case 'AnswerOperator':
      return client.answer(runId, command.stageId, command.answer);
    case 'RecoverWithGuidance':
      return client.recover(runId, command.stageId, command.guidance);
    case 'StopManualRecovery':
      return client.stopRecovery(runId, command.stageId);
    case 'RetryStage':
      return client.retry(runId, command.stageId);
    case 'CancelRun':
      return client.cancel(runId, command.reason);
    case 'DecideFeedbackLoop':
      return client.feedbackDecision(runId, command.stageId, {
        decision: command.decision,
        ...(command.loopId ? { loop_id: command.loopId } : {}),
        ...(command.reason ? { reason: command.reason } : {}),
      });
    default: {
      const unreachable: never = command;
      throw new Error(`unknown operator command ${JSON.stringify(unreachable)}`);
    }
  }
}
