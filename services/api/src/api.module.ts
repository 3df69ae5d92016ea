import { type DynamicModule, Module } from '@nestjs/common';
import { INFRASTRUCTURE } from '@stageflow/messaging';
import type { Infrastructure } from '@stageflow/runtime';
import { BearerAuthGuard } from './auth.guard';
import { BusRequests } from './bus-requests';
import { ApiErrorFilter } from './errors.filter';
import type { ReadModels } from './read-models';
import { RunList } from './run-list';
import { RunRequests } from './run-requests';
import { RunsController } from './runs.controller';
import { EventsController } from './events.controller';
import { PipelinesController } from './pipelines.controller';
import { PublishedPipelines } from './pipelines';

@Module({})
export class ApiModule {
  static register(readModels: ReadModels): DynamicModule {
    return {
      module: ApiModule,
      controllers: [RunsController, EventsController, PipelinesController],
      providers: [
        BearerAuthGuard,
        ApiErrorFilter,
        BusRequests,
        { provide: RunList, useValue: new RunList(readModels) },
        { provide: PublishedPipelines, useFactory: (infra: Infrastructure) => new PublishedPipelines(infra.log, infra.config.namespace), inject: [INFRASTRUCTURE] },
        { provide: RunRequests, useFactory: (infra: Infrastructure, pipelines: PublishedPipelines) => new RunRequests(infra, pipelines), inject: [INFRASTRUCTURE, PublishedPipelines] },
      ],
    };
  }
}
