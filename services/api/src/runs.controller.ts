/**
 * REST for operators and services (DESIGN.md §3). Reads fold the log; decisions go through the
 * deciders via RunOperations (shared with MCP). Every decision route takes an `Idempotency-Key`
 * header: the same key makes one decision and returns the same response.
 */
import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, UseFilters, UseGuards } from '@nestjs/common';
import { InvalidCommand, type OperatorCommand, type RunRequestCommand } from '@stageflow/domain';
import { ApiOperator, BearerAuthGuard, RequiresScope, type Operator } from './auth.guard';
import { answerCommand, cancelCommand, feedbackCommand, fields, recoverCommand, retryCommand, stopCommand, type Origin } from './decision-input';
import { ApiErrorFilter } from './errors.filter';
import { RunOperations } from './operations';
import { RunRequests, type Requester } from './run-requests';
import { RunList } from './run-list';

type Headers_ = Record<string, string | undefined>;

const origin = (operator: Operator): Origin => ({ ...operator, now: new Date().toISOString() });
const MAX_CLAIM_CHARS = 200;

/** Over REST the token's name is who requested the run; a `requested_by` in the body is only a display note. */
function requesterOf(body: RunRequestCommand, operator: Operator): Requester {
  const named = (body as { requested_by?: unknown } | null)?.requested_by;
  const claim = typeof named === 'string' && named.trim() ? named.trim().slice(0, MAX_CLAIM_CHARS) : operator.claimedBy;
  return { by: operator.by, ...(claim ? { claimedBy: claim } : {}) };
}

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
  @RequiresScope('read')
  async listRuns(@Query() query: Record<string, string | undefined>) {
    const limit = query.limit === undefined ? 50 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new InvalidCommand('query.limit', 'limit must be an integer from 1 to 500');
    if (query.since !== undefined && Number.isNaN(Date.parse(query.since))) throw new InvalidCommand('query.since', 'since must be an ISO-8601 time');
    return this.list.list({ status: query.status, pipeline: query.pipeline, since: query.since, cursor: query.cursor, limit });
  }

  @Post()
  @HttpCode(202)
  @RequiresScope('publish')
  async requestRun(@Body() body: RunRequestCommand, @Headers() headers: Headers_, @ApiOperator() operator: Operator) {
    const reply = await this.requests.accept(body, headers['idempotency-key'] ?? headers['nats-msg-id'], requesterOf(body, operator));
    if (!reply.accepted) throw new InvalidCommand(reply.code, reply.message);
    return reply;
  }

  @Get(':runId')
  @RequiresScope('read')
  async getRun(@Param('runId') runId: string) {
    return this.ops.run(runId);
  }

  @Get(':runId/stages/:stageId/verification')
  @RequiresScope('read')
  async verification(@Param('runId') runId: string, @Param('stageId') stageId: string) {
    return this.ops.verification(runId, stageId);
  }

  @Get(':runId/stages/:stageId/envelope')
  @RequiresScope('read')
  async envelope(@Param('runId') runId: string, @Param('stageId') stageId: string) {
    return this.ops.envelope(runId, stageId);
  }

  @Post(':runId/stages/:stageId/recovery')
  @HttpCode(200)
  @RequiresScope('operate')
  async recover(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_, @ApiOperator() operator: Operator) {
    return this.decide(runId, recoverCommand(stageId, fields(body, ['guidance'], 'recovery'), origin(operator)), headers);
  }

  @Post(':runId/stages/:stageId/recovery/stop')
  @HttpCode(200)
  @RequiresScope('operate')
  async stopRecovery(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_, @ApiOperator() operator: Operator) {
    fields(body, [], 'recovery/stop');
    return this.decide(runId, stopCommand(stageId, origin(operator)), headers);
  }

  @Post(':runId/stages/:stageId/answer')
  @HttpCode(200)
  @RequiresScope('operate')
  async answer(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_, @ApiOperator() operator: Operator) {
    return this.decide(runId, answerCommand(stageId, fields(body, ['decision', 'text', 'answers'], 'answer'), origin(operator)), headers);
  }

  @Post(':runId/stages/:stageId/feedback-decision')
  @HttpCode(200)
  @RequiresScope('operate')
  async feedbackDecision(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_, @ApiOperator() operator: Operator) {
    return this.decide(runId, feedbackCommand(stageId, fields(body, ['decision', 'loop_id', 'reason'], 'feedback-decision'), origin(operator)), headers);
  }

  @Post(':runId/stages/:stageId/retry')
  @HttpCode(200)
  @RequiresScope('operate')
  async retry(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: unknown, @Headers() headers: Headers_, @ApiOperator() operator: Operator) {
    fields(body, [], 'retry');
    return this.decide(runId, retryCommand(stageId, origin(operator)), headers);
  }

  @Post(':runId/cancel')
  @HttpCode(200)
  @RequiresScope('operate')
  async cancel(@Param('runId') runId: string, @Body() body: unknown, @Headers() headers: Headers_, @ApiOperator() operator: Operator) {
    return this.decide(runId, cancelCommand(fields(body, ['reason'], 'cancel'), origin(operator)), headers);
  }

  private decide(runId: string, command: OperatorCommand, headers: Headers_) {
    return this.ops.decide(runId, command, headers['idempotency-key']);
  }
}
