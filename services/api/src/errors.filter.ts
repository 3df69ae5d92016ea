/**
 * Maps domain errors to HTTP: a refused decision → 409 with the reason, bad input → 400 with the
 * rule broken, an unknown run or stage → 404. Anything else is a 500 without internals. MCP tools
 * report the same problems (`problemOf`); body-parser failures (413, malformed JSON) are answered
 * in the same shape before any route (body-limits.ts).
 */
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import { CommandRefused, InvalidCommand } from '@stageflow/domain';
import { LOGGER } from '@stageflow/messaging';
import type { Logger } from '@stageflow/runtime';

export class NotFound extends Error {
  readonly retryable = false;
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

export interface Problem {
  readonly status: number;
  readonly error: string;
  readonly message: string;
}

/** A body-parser failure: the body is too large, not JSON, or in an unsupported encoding. */
export function bodyProblem(error: unknown): Problem | undefined {
  const e = error as { type?: unknown; status?: unknown; message?: unknown };
  if (typeof e?.type !== 'string' || typeof e.status !== 'number' || typeof e.message !== 'string') return undefined;
  if (e.type === 'entity.too.large') return { status: 413, error: 'request.too_large', message: `the request body is over the limit: ${e.message}` };
  if (e.type.startsWith('entity.') || e.type.endsWith('.unsupported')) return { status: e.status, error: 'request.body_invalid', message: e.message };
  return undefined;
}

/** The HTTP status and typed body of a known error; undefined for anything unexpected. */
export function problemOf(error: unknown): Problem | undefined {
  if (error instanceof NotFound || (error instanceof CommandRefused && error.code.endsWith('.not_found'))) {
    return { status: 404, error: (error as NotFound).code, message: error.message };
  }
  if (error instanceof CommandRefused) return { status: 409, error: error.code, message: error.message };
  if (error instanceof InvalidCommand) return { status: error.code === 'input.too_large' ? 413 : 400, error: error.code, message: error.message };
  return undefined;
}

@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<{ headersSent?: boolean; status(code: number): { json(body: unknown): void } }>();
    if (response.headersSent) {
      this.logger.error('request failed after its response started', { error: error instanceof Error ? error.stack : String(error) });
      return;
    }
    if (error instanceof HttpException) {
      const body = error.getResponse();
      response.status(error.getStatus()).json(typeof body === 'string' ? { error: body } : body);
      return;
    }
    const problem = problemOf(error);
    if (problem) {
      response.status(problem.status).json({ error: problem.error, message: problem.message });
      return;
    }
    this.logger.error('request failed', { error: error instanceof Error ? error.stack : String(error) });
    response.status(500).json({ error: 'internal', message: 'the request could not be completed' });
  }
}
