/**
 * `sf run` against a cluster asks the API to start the run over `<ns>.cmd.run.request`, the one
 * thing the `runs-client` NATS user may send: the pipeline goes inline (bundled) and the API
 * validates and records the request. The request's msg id is its idempotency key.
 */
import { randomUUID } from 'node:crypto';
import { subjects, type Checkout, type RunRequestCommand, type RunRequestReply } from '@stageflow/domain';
import type { Infrastructure } from '@stageflow/runtime';
import { UsageError } from './output';
import { bundlePipeline } from './remote/bundle';

const REQUEST_TIMEOUT_MS = 30_000;

/** The run id the API started, or undefined when no API serves run requests. */
export async function requestRunOverBus(
  infra: Infrastructure,
  request: { readonly pipeline: string; readonly input: Record<string, unknown>; readonly checkout: Checkout; readonly labels: Record<string, string> },
): Promise<string | undefined> {
  if (!infra.bus) return undefined;
  const command: RunRequestCommand = {
    pipeline: { inline: bundlePipeline(request.pipeline).bundle },
    input: request.input,
    checkout: request.checkout.kind === 'git' ? { git: request.checkout.url, ...(request.checkout.ref ? { ref: request.checkout.ref } : {}) } : null,
    labels: request.labels,
    requested_by: `cli:${process.env.USER ?? 'unknown'}`,
  };
  const answer = await infra.bus.request(subjects(infra.config.namespace).runRequests, command, { msgId: `cli:${randomUUID()}`, timeoutMs: REQUEST_TIMEOUT_MS });
  if (!answer.served) return undefined;
  const reply = answer.reply as RunRequestReply;
  if (!reply.accepted) throw new UsageError(`run request refused (${reply.code}): ${reply.message}`);
  return reply.run_id;
}
