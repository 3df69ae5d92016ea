/**
 * REST for operators and services (DESIGN.md §3). Reads fold the log; decisions go through the
 * deciders via RunOperations (shared with MCP). Every decision route takes an `Idempotency-Key`
 * header: the same key makes one decision and returns the same response.
 */
import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, UseFilters, UseGuards } from '@nestjs/common';
import { InvalidCommand, type OperatorCommand, type RunRequestCommand } from '@stageflow/domain';
import { BearerAuthGuard, callerOf } from './auth.guard';
import { answerCommand, cancelCommand, feedbackCommand, fields, recoverCommand, retryCommand, stopCommand, type Origin } from './decision-input';
import { ApiErrorFilter } from './errors.filter';
import { RunOperations } from './operations';
import { RunRequests } from './run-requests';
import { RunList } from './run-list';

type Headers_ = Record<string, string | undefined>;

const origin = (headers: Headers_): Origin => ({ by: callerOf(headers), now: new Date().toISOString() });

@Controller('api/runs')
@UseGuards(BearerAuthGuard)
@UseFilters(ApiErrorFilter)
export class RunsController {
  constructor(
    @Inject(RunOperations) private readonly ops: RunOperations,
    @Inject(RunRequests) private readonly requests: RunRequests,
    @Inject(RunList) private readonly list: RunList,
  ) {}

  @Get()
  async listRuns(@Query() query: Record<string, string | undefined>) {
    const limit = query.limit === undefined ? 50 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new InvalidCommand('query.limit', 'limit must be an integer from 1 to 500');
    if (query.since !== undefined && Number.isNaN(Date.parse(query.since))) throw new InvalidCommand('query.since', 'since must be an ISO-8601 time');
    return this.list.list({ status: query.status, pipeline: query.pipeline, since: query.since, cursor: query.cursor, limit });
  }

  @Post()
  @HttpCode(202)
  async requestRun(@Body() body: RunRequestCommand, @Headers() headers: Headers_) {
    const reply = await this.requests.accept(body, headers['idempotency-key'] ?? headers['nats-msg-id'], callerOf(headers));
    if (!reply.accepted) throw new InvalidCommand(reply.code, reply.message);
    return reply;
  }

  @Get(':runId')
  async getRun(@Param('runId') runId: string) {
    return this.ops.run(runId);
  }

  @Get(':runId/stages/:stageId/verification')
  async verification(@Param('runId') runId: string, @Param('stageId') stageId: string) {
    return this.ops.verification(runId, stageId);
  }

  @Get(':runId/stages/:stageId/envelope')
  async envelope(@Param('runId') runId: string, @Param('stageId') stageId: string) {
    return this.ops.envelope(runId, stageId);
  }

  @Post(':runId/stages/:stageId/recovery')
  @HttpCode(200)
  async recover(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_) {
    return this.decide(runId, recoverCommand(stageId, fields(body, ['guidance'], 'recovery'), origin(headers)), headers);
  }

  @Post(':runId/stages/:stageId/recovery/stop')
  @HttpCode(200)
  async stopRecovery(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_) {
    fields(body, [], 'recovery/stop');
    return this.decide(runId, stopCommand(stageId, origin(headers)), headers);
  }

  @Post(':runId/stages/:stageId/answer')
  @HttpCode(200)
  async answer(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_) {
    return this.decide(runId, answerCommand(stageId, fields(body, ['decision', 'text', 'answers'], 'answer'), origin(headers)), headers);
  }

  @Post(':runId/stages/:stageId/feedback-decision')
  @HttpCode(200)
  async feedbackDecision(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_) {
    return this.decide(runId, feedbackCommand(stageId, fields(body, ['decision', 'loop_id', 'reason'], 'feedback-decision'), origin(headers)), headers);
  }

  @Post(':runId/stages/:stageId/retry')
  @HttpCode(200)
  async retry(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_) {
    fields(body, [], 'retry');
    return this.decide(runId, retryCommand(stageId, origin(headers)), headers);
  }

  @Post(':runId/cancel')
  @HttpCode(200)
  async cancel(@Param('runId') runId: string, @Body() body: unknown, @Headers() headers: Headers_) {
    return this.decide(runId, cancelCommand(fields(body, ['reason'], 'cancel'), origin(headers)), headers);
  }

  private decide(runId: string, command: OperatorCommand, headers: Headers_) {
    return this.ops.decide(runId, command, headers['idempotency-key']);
  }
}
