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
import { bodyLimitsProvider } from './body-limits';
import { McpController } from './mcp/mcp.controller';
import { MetricsController, READ_MODELS } from './metrics.controller';
import { RunOperations } from './operations';

@Module({})
export class ApiModule {
  static register(readModels: ReadModels): DynamicModule {
    return {
      module: ApiModule,
      controllers: [RunsController, EventsController, PipelinesController, McpController, MetricsController],
      providers: [
        BearerAuthGuard,
        ApiErrorFilter,
        BusRequests,
        bodyLimitsProvider,
        { provide: READ_MODELS, useValue: readModels },
        { provide: RunOperations, useFactory: (infra: Infrastructure) => new RunOperations(infra), inject: [INFRASTRUCTURE] },
        { provide: RunList, useValue: new RunList(readModels) },
        { provide: PublishedPipelines, useFactory: (infra: Infrastructure) => new PublishedPipelines(infra.log, infra.config.namespace), inject: [INFRASTRUCTURE] },
        { provide: RunRequests, useFactory: (infra: Infrastructure, pipelines: PublishedPipelines) => new RunRequests(infra, pipelines), inject: [INFRASTRUCTURE, PublishedPipelines] },
      ],
    };
  }
}
