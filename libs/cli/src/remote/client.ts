/**
 * The HTTP client of a cluster's API (`--server <api-url>`), with the bearer token from
 * `SF_API_TOKEN`. A refusal by the API (4xx with `{error, message}`) becomes a UsageError naming
 * the API's code, so it prints as `sf: …` and exits 1 like the same refusal in the embedded default.
 */
import type { InlinePipelineBundle, OperatorAnswer, RunEvent, RunRequestCommand, RunSummary } from '@stageflow/domain';
import type { VerificationReport } from '@stageflow/runtime';
import { UsageError } from '../output';

export interface RunEventsPage {
  readonly run_id: string;
  readonly last_seq: number;
  readonly events: readonly RunEvent[];
}

export interface PublishReply {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  readonly created: boolean;
}

export class ApiClient {
  private readonly base: string;

  constructor(
    server: string,
    private readonly token: string,
    private readonly operator = process.env.USER ?? 'unknown',
  ) {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new UsageError(`--server ${server} is not a URL (e.g. http://stageflow-api:8080)`);
    }
    this.base = url.toString().replace(/\/+$/, '');
  }

  static fromEnv(server: string, env: NodeJS.ProcessEnv = process.env): ApiClient {
    const token = env.SF_API_TOKEN?.trim();
    if (!token) throw new UsageError('--server needs an API token: set SF_API_TOKEN');
    return new ApiClient(server, token);
  }

  requestRun(command: RunRequestCommand, idempotencyKey?: string): Promise<{ run_id: string; duplicate: boolean }> {
    return this.call('POST', '/api/runs', command, idempotencyKey ? { 'idempotency-key': idempotencyKey } : {});
  }

  run(runId: string): Promise<RunSummary> {
    return this.call('GET', `/api/runs/${enc(runId)}`);
  }

  events(runId: string, after: number, waitMs: number): Promise<RunEventsPage> {
    return this.call('GET', `/api/runs/${enc(runId)}/events?after=${after}&wait_ms=${waitMs}`);
  }

  verification(runId: string, stageId: string): Promise<VerificationReport> {
    return this.call('GET', `/api/runs/${enc(runId)}/stages/${enc(stageId)}/verification`);
  }

  answer(runId: string, stageId: string, answer: OperatorAnswer): Promise<RunSummary> {
    return this.call('POST', `/api/runs/${enc(runId)}/stages/${enc(stageId)}/answer`, answer);
  }

  recover(runId: string, stageId: string, guidance: string): Promise<RunSummary> {
    return this.call('POST', `/api/runs/${enc(runId)}/stages/${enc(stageId)}/recovery`, { guidance });
  }

  stopRecovery(runId: string, stageId: string): Promise<RunSummary> {
    return this.call('POST', `/api/runs/${enc(runId)}/stages/${enc(stageId)}/recovery/stop`);
  }

  retry(runId: string, stageId: string): Promise<RunSummary> {
    return this.call('POST', `/api/runs/${enc(runId)}/stages/${enc(stageId)}/retry`);
  }

  feedbackDecision(runId: string, stageId: string, body: { decision: string; loop_id?: string; reason?: string }): Promise<RunSummary> {
    return this.call('POST', `/api/runs/${enc(runId)}/stages/${enc(stageId)}/feedback-decision`, body);
  }

  runs<T>(query: Record<string, string | undefined>): Promise<T> {
    const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    return this.call('GET', `/api/runs${params.size ? `?${params}` : ''}`);
  }

  cancel(runId: string, reason?: string): Promise<RunSummary> {
    return this.call('POST', `/api/runs/${enc(runId)}/cancel`, reason !== undefined ? { reason } : {});
  }

  publishPipeline(bundle: InlinePipelineBundle): Promise<PublishReply> {
    return this.call('POST', '/api/pipelines', bundle);
  }

  pipelines<T>(): Promise<T> {
    return this.call('GET', '/api/pipelines');
  }

  pipeline<T>(id: string, version?: string): Promise<T> {
    return this.call('GET', `/api/pipelines/${enc(id)}${version !== undefined ? `?version=${enc(version)}` : ''}`);
  }

  /** This client, sending `Idempotency-Key: key` with every POST: the API makes each decision once per key. */
  withIdempotencyKey(key: string): ApiClient {
    const keyed = Object.create(this) as ApiClient;
    keyed.decisionKey = key;
    return keyed;
  }

  private decisionKey?: string;

  private async call<T>(method: 'GET' | 'POST', route: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          'x-stageflow-operator': `cli:${this.operator}`,
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          ...(method === 'POST' && this.decisionKey ? { 'idempotency-key': this.decisionKey } : {}),
          ...headers,
        },
        ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
      });
    } catch (err) {
      throw new UsageError(`cannot reach ${this.base}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (response.ok) return parsed as T;
    const problem = (parsed ?? {}) as { error?: unknown; message?: unknown };
    const code = typeof problem.error === 'string' ? problem.error : `http ${response.status}`;
    const message = typeof problem.message === 'string' ? problem.message : text.slice(0, 200);
    throw new UsageError(`${message} (${code})`);
  }
}

const enc = encodeURIComponent;
