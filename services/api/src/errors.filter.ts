/**
 * Maps domain errors to HTTP: a refused decision → 409 with the reason, bad input → 400 with the
 * rule broken, an unknown run or stage → 404. Anything else is a 500 without internals.
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

@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<{ status(code: number): { json(body: unknown): void } }>();
    if (error instanceof HttpException) {
      const body = error.getResponse();
      response.status(error.getStatus()).json(typeof body === 'string' ? { error: body } : body);
      return;
    }
    if (error instanceof NotFound || (error instanceof CommandRefused && error.code.endsWith('.not_found'))) {
      response.status(404).json({ error: (error as NotFound).code, message: error.message });
      return;
    }
    if (error instanceof CommandRefused) {
      response.status(409).json({ error: error.code, message: error.message });
      return;
    }
    if (error instanceof InvalidCommand) {
      response.status(400).json({ error: error.code, message: error.message });
      return;
    }
    this.logger.error('request failed', { error: error instanceof Error ? error.stack : String(error) });
    response.status(500).json({ error: 'internal', message: 'the request could not be completed' });
  }
}
