/** REST for operators and services (DESIGN.md §3). Reads fold the log; decisions go through the deciders. */
import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, UseFilters, UseGuards } from '@nestjs/common';
import { decideOperator, InvalidCommand, summarizeRun, type OperatorAnswer, type OperatorCommand, type RunRequestCommand, type RunState } from '@stageflow/domain';
import { INFRASTRUCTURE } from '@stageflow/messaging';
import { verificationReport, type Infrastructure } from '@stageflow/runtime';
import { BearerAuthGuard, callerOf } from './auth.guard';
import { ApiErrorFilter, NotFound } from './errors.filter';
import { RunRequests } from './run-requests';
import { RunList } from './run-list';

type Headers_ = Record<string, string | undefined>;

@Controller('api/runs')
@UseGuards(BearerAuthGuard)
@UseFilters(ApiErrorFilter)
export class RunsController {
  constructor(
    @Inject(INFRASTRUCTURE) private readonly infra: Infrastructure,
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
    return summarizeRun(await this.existing(runId));
  }

  @Get(':runId/stages/:stageId/verification')
  async verification(@Param('runId') runId: string, @Param('stageId') stageId: string) {
    return verificationReport(await this.existing(runId), stageId, this.infra.blobs);
  }

  @Get(':runId/stages/:stageId/envelope')
  async envelope(@Param('runId') runId: string, @Param('stageId') stageId: string) {
    const state = await this.existing(runId);
    const stage = state.stages[stageId];
    if (!stage) throw new NotFound('stage.not_found', `run ${runId} has no stage ${stageId}`);
    const last = [...stage.attempts].reverse().find((a) => a.envelope);
    const envelope = stage.envelope ?? last?.envelope;
    if (!envelope) throw new NotFound('envelope.not_found', `stage ${stageId} has no envelope yet`);
    return { run_id: runId, stage_id: stageId, accepted: stage.status === 'succeeded', attempt: last?.n ?? null, envelope };
  }

  @Post(':runId/stages/:stageId/recovery')
  async recover(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: { guidance?: unknown }, @Headers() headers: Headers_) {
    if (typeof body?.guidance !== 'string' || !body.guidance.trim()) throw new InvalidCommand('recovery.guidance_required', 'body must be {"guidance": "<instructions>"}');
    return this.decide(runId, { type: 'RecoverWithGuidance', stageId, guidance: body.guidance, by: callerOf(headers), now: new Date().toISOString() });
  }

  @Post(':runId/stages/:stageId/recovery/stop')
  async stopRecovery(@Param('runId') runId: string, @Param('stageId') stageId: string, @Headers() headers: Headers_) {
    return this.decide(runId, { type: 'StopManualRecovery', stageId, by: callerOf(headers), now: new Date().toISOString() });
  }

  @Post(':runId/stages/:stageId/answer')
  async answer(@Param('runId') runId: string, @Param('stageId') stageId: string, @Body() body: OperatorAnswer, @Headers() headers: Headers_) {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new InvalidCommand('answer.invalid', 'body must be {"decision"?, "text"?, "answers"?}');
    return this.decide(runId, { type: 'AnswerOperator', stageId, answer: body, by: callerOf(headers), now: new Date().toISOString() });
  }

  @Post(':runId/stages/:stageId/retry')
  async retry(@Param('runId') runId: string, @Param('stageId') stageId: string, @Headers() headers: Headers_) {
    return this.decide(runId, { type: 'RetryStage', stageId, by: callerOf(headers), now: new Date().toISOString() });
  }

  @Post(':runId/cancel')
  async cancel(@Param('runId') runId: string, @Body() body: { reason?: string }, @Headers() headers: Headers_) {
    return this.decide(runId, { type: 'CancelRun', by: callerOf(headers), ...(typeof body?.reason === 'string' ? { reason: body.reason } : {}), now: new Date().toISOString() });
  }

  private async existing(runId: string): Promise<RunState> {
    const { state } = await this.infra.runs.load(runId);
    if (!state.exists) throw new NotFound('run.not_found', `run ${runId} not found`);
    return state;
  }

  private async decide(runId: string, command: OperatorCommand) {
    await this.existing(runId);
    const { state } = await this.infra.runs.execute(runId, (current) => decideOperator(command, current));
    return summarizeRun(state);
  }
}
