/**
 * A run's events for clients that follow it over HTTP (`sf run --server`):
 * `GET /api/runs/:runId/events?after=<seq>&wait_ms=<ms>`, a long poll.
 *
 * Guarantees: events come in log order, upcast to the current schema, with `last_seq` (the log
 * sequence of the last message returned, or `after` when none) to pass as the next `after`, so a
 * follower sees every event once. With `wait_ms` the call returns as soon as there is anything
 * after `after`, or empty when the wait ends. An unknown run is a 404.
 */
import { Controller, Get, Inject, Param, Query, UseFilters, UseGuards } from '@nestjs/common';
import { InvalidCommand, type RunEvent } from '@stageflow/domain';
import { INFRASTRUCTURE } from '@stageflow/messaging';
import type { Infrastructure } from '@stageflow/runtime';
import { BearerAuthGuard, RequiresScope } from './auth.guard';
import { ApiErrorFilter, NotFound } from './errors.filter';

const MAX_WAIT_MS = 30_000;
const POLL_MS = 100;
const RUN_ID = /^[A-Za-z0-9_-]+$/;

export interface RunEventsPage {
  readonly run_id: string;
  readonly last_seq: number;
  readonly events: readonly RunEvent[];
}

@Controller('api/runs')
@UseGuards(BearerAuthGuard)
@UseFilters(ApiErrorFilter)
export class EventsController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  @Get(':runId/events')
  @RequiresScope('read')
  async events(@Param('runId') runId: string, @Query('after') afterText?: string, @Query('wait_ms') waitText?: string): Promise<RunEventsPage> {
    const after = afterText === undefined ? 0 : Number(afterText);
    const wait = waitText === undefined ? 0 : Number(waitText);
    if (!Number.isInteger(after) || after < 0) throw new InvalidCommand('query.after', 'after must be a non-negative integer (a last_seq from a previous page)');
    if (!Number.isInteger(wait) || wait < 0 || wait > MAX_WAIT_MS) throw new InvalidCommand('query.wait_ms', `wait_ms must be an integer from 0 to ${MAX_WAIT_MS}`);
    if (!RUN_ID.test(runId)) throw new NotFound('run.not_found', `run ${runId} not found`);
    const subject = this.infra.runs.subject(runId);
    const deadline = Date.now() + wait;
    for (;;) {
      const read = await this.infra.log.readSubject(subject, after);
      if (read.lastSubjectSequence === 0) throw new NotFound('run.not_found', `run ${runId} not found`);
      if (read.messages.length > 0 || Date.now() >= deadline) {
        return { run_id: runId, last_seq: read.messages.at(-1)?.seq ?? after, events: read.messages.flatMap((m) => this.infra.runs.eventsOf(m)) };
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
    }
  }
}
