/**
 * Request size limits. A JSON body over its limit is refused with 413 before any route or guard
 * sees it: 4 MiB for `POST /api/runs` (an inline pipeline bundle is at most 2 MiB of files), 1 MiB
 * for everything else (decisions, answers, MCP messages).
 *
 * The parsers are installed while the module is instantiated, which is before the HTTP adapter
 * registers its default JSON parser; the adapter then skips its own (it adds a parser only when
 * none named `jsonParser` is installed), so these limits are the only ones in force. Right after
 * them an error handler answers their failures in the API's error shape (`{error, message}`):
 * 413 `request.too_large`, 400 `request.body_invalid` for a body that is not JSON. A parsed body
 * nesting deeper than MAX_BODY_DEPTH is refused with 400 `input.too_deep` before any route, so no
 * handler, guard or serializer ever walks it.
 */
import { HttpAdapterHost } from '@nestjs/core';
import type { Provider } from '@nestjs/common';
import { MAX_INPUT_DEPTH, nestsDeeperThan } from '@stageflow/domain';
import { bodyProblem } from './errors.filter';

export const RUN_REQUEST_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
export const BODY_LIMIT_BYTES = 1024 * 1024;
/** A run input (or an answer's value) nests MAX_INPUT_DEPTH levels below its field in the body. */
export const MAX_BODY_DEPTH = MAX_INPUT_DEPTH + 2;

interface RequestHead {
  readonly method?: string;
  readonly url?: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

interface ResponseOut {
  headersSent: boolean;
  status(code: number): { json(body: unknown): void };
}

interface BodyParserHost {
  useBodyParser?(type: 'json', rawBody: boolean, options: { limit: number; type: (req: RequestHead) => boolean }): unknown;
  use(handler: ((error: unknown, req: RequestHead, res: ResponseOut, next: (error?: unknown) => void) => void) | ((req: ParsedRequest, res: ResponseOut, next: () => void) => void)): unknown;
}

interface ParsedRequest extends RequestHead {
  readonly body?: unknown;
}

/** Express middleware: 400 `input.too_deep` for a parsed body past MAX_BODY_DEPTH. */
export function refuseDeepBody(req: ParsedRequest, res: ResponseOut, next: () => void): void {
  if (!nestsDeeperThan(req.body, MAX_BODY_DEPTH)) return next();
  res.status(400).json({ error: 'input.too_deep', message: `the request body nests deeper than ${MAX_BODY_DEPTH} levels` });
}

function answerBodyProblem(error: unknown, _req: RequestHead, res: ResponseOut, next: (error?: unknown) => void): void {
  const problem = bodyProblem(error);
  if (!problem || res.headersSent) return next(error);
  res.status(problem.status).json({ error: problem.error, message: problem.message });
}

const isJson = (req: RequestHead) => /^application\/(?:[\w.+-]+\+)?json(?:\s*;|\s*$)/i.test(String(req.headers['content-type'] ?? ''));
const isRunRequest = (req: RequestHead) => req.method === 'POST' && /^\/api\/runs\/?(?:\?|$)/.test(req.url ?? '');

export const BODY_LIMITS = Symbol('stageflow.api.body-limits');

export const bodyLimitsProvider: Provider = {
  provide: BODY_LIMITS,
  inject: [HttpAdapterHost],
  useFactory: (host: HttpAdapterHost) => {
    const adapter = host.httpAdapter as unknown as BodyParserHost | undefined;
    if (!adapter?.useBodyParser) throw new Error('the API needs an HTTP adapter that accepts body parsers (express)');
    adapter.useBodyParser('json', false, { limit: RUN_REQUEST_BODY_LIMIT_BYTES, type: (req) => isJson(req) && isRunRequest(req) });
    adapter.useBodyParser('json', false, { limit: BODY_LIMIT_BYTES, type: (req) => isJson(req) && !isRunRequest(req) });
    adapter.use(answerBodyProblem);
    adapter.use(refuseDeepBody);
    return { runRequest: RUN_REQUEST_BODY_LIMIT_BYTES, other: BODY_LIMIT_BYTES };
  },
};
