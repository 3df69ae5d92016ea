/**
 * `sf run --server <api-url>`: the local pipeline goes inline (bundled), the request through
 * `POST /api/runs`, and the run is followed over HTTP with the embedded default's output and exit
 * codes. A `{path}` checkout is refused here: no pod sees this machine's files.
 */
import type { Checkout, RunRequestCommand } from '@stageflow/domain';
import { UsageError, type Output } from '../output';
import { resolveInput } from '../run-request';
import { bundlePipeline } from './bundle';
import { ApiClient } from './client';
import { followRemote } from './follow';

export interface RemoteRunFlags {
  readonly server: string;
  readonly pipeline: string;
  readonly input?: string;
  readonly task?: string;
  readonly checkout: Checkout;
  readonly labels: Record<string, string>;
  readonly json: boolean;
  readonly includeStages: boolean;
  readonly detach: boolean;
}

export async function runOnServer(flags: RemoteRunFlags, out: Output): Promise<number> {
  if (flags.checkout.kind === 'path') throw new UsageError('--checkout <dir> works only in the embedded default: a cluster cannot see this machine\'s files; use --git <url> [--ref <ref>]');
  const client = ApiClient.fromEnv(flags.server);
  const { pipeline, bundle } = bundlePipeline(flags.pipeline);
  const input = resolveInput(pipeline, flags);
  const command: RunRequestCommand = {
    pipeline: { inline: bundle },
    input,
    checkout: flags.checkout.kind === 'git' ? { git: flags.checkout.url, ...(flags.checkout.ref ? { ref: flags.checkout.ref } : {}) } : null,
    labels: flags.labels,
    requested_by: `cli:${process.env.USER ?? 'unknown'}`,
  };
  const { run_id: runId } = await client.requestRun(command);
  if (flags.detach) {
    out.out(flags.json ? JSON.stringify({ run_id: runId }) : runId);
    return 0;
  }
  return followRemote(client, runId, out, { json: flags.json, includeStages: flags.includeStages });
}
