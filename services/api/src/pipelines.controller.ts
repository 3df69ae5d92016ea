/** REST for published pipelines: `POST /api/pipelines` (a bundle), `GET /api/pipelines`, `GET /api/pipelines/:id`. */
import { Body, Controller, Get, Inject, Param, Post, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import { InvalidCommand, type InlinePipelineBundle } from '@stageflow/domain';
import { ApiOperator, BearerAuthGuard, RequiresScope, type Operator } from './auth.guard';
import { ApiErrorFilter, NotFound } from './errors.filter';
import { PublishedPipelines } from './pipelines';

@Controller('api/pipelines')
@UseGuards(BearerAuthGuard)
@UseFilters(ApiErrorFilter)
export class PipelinesController {
  constructor(@Inject(PublishedPipelines) private readonly pipelines: PublishedPipelines) {}

  /** 201 when this content is new, 200 when it was already published (same version). */
  @Post()
  @RequiresScope('publish')
  async publish(@Body() body: InlinePipelineBundle, @ApiOperator() operator: Operator, @Res({ passthrough: true }) response: { status(code: number): unknown }) {
    const result = await this.pipelines.publish(body, operator.by);
    response.status(result.created ? 201 : 200);
    return result;
  }

  @Get()
  @RequiresScope('read')
  async list() {
    return { pipelines: await this.pipelines.list() };
  }

  @Get(':id')
  @RequiresScope('read')
  async show(@Param('id') id: string, @Query('version') version?: string) {
    try {
      return await this.pipelines.show({ id, ...(version !== undefined ? { version } : {}) });
    } catch (err) {
      if (err instanceof InvalidCommand && err.code === 'pipeline.unknown') throw new NotFound(err.code, err.message);
      throw err;
    }
  }
}
