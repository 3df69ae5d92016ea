/**
 * `/metrics` in the Prometheus text format (0.0.4): the projector's lag (events in the log not
 * yet in the read models, measured at scrape time), its checkpoint and its counters. Like
 * /healthz and /readyz it needs no token (declared `@Public`): it names no run and no content.
 */
import { Controller, Get, Header, Inject, UseGuards } from '@nestjs/common';
import { BearerAuthGuard, Public } from './auth.guard';
import type { ReadModels } from './read-models';

export const READ_MODELS = Symbol('stageflow.api.read-models');

const metric = (name: string, type: 'gauge' | 'counter', help: string, value: number) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`;

@Controller('metrics')
@UseGuards(BearerAuthGuard)
@Public()
export class MetricsController {
  constructor(@Inject(READ_MODELS) private readonly readModels: ReadModels) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  async metrics(): Promise<string> {
    const lag = await this.readModels.projector.lag();
    const m = this.readModels.projector.metrics();
    return [
      metric('stageflow_projector_lag_events', 'gauge', 'Events in the log not yet projected into the read models.', lag),
      metric('stageflow_projector_checkpoint', 'gauge', 'Last log sequence projected into the read models.', m.checkpoint),
      metric('stageflow_projector_batches_total', 'counter', 'Batches the projector has applied.', m.batches),
      metric('stageflow_projector_events_total', 'counter', 'Events the projector has applied.', m.events),
      metric('stageflow_projector_errors_total', 'counter', 'Projector batches that failed and were retried.', m.errors),
    ].join('');
  }
}
