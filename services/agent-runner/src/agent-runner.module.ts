import { type DynamicModule, Inject, Module, type OnModuleInit } from '@nestjs/common';
import { INFRASTRUCTURE } from '@stageflow/messaging';
import type { AgentSpec, Infrastructure } from '@stageflow/runtime';
import { AgentRunnerController } from './agent-runner.controller';
import { createBackend } from './backends';
import { failAttemptsOfDeadJobs } from './dead-letters';
import { AGENT_BACKEND } from './tokens';

@Module({})
export class AgentRunnerModule implements OnModuleInit {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  onModuleInit(): void {
    failAttemptsOfDeadJobs(this.infra);
  }

  static register(options: { agent?: AgentSpec }): DynamicModule {
    const backend = createBackend(options.agent);
    // Configuration errors surface when the first job needs the backend, not as an unhandled rejection.
    backend.catch(() => undefined);
    return {
      module: AgentRunnerModule,
      controllers: [AgentRunnerController],
      providers: [{ provide: AGENT_BACKEND, useValue: backend }],
    };
  }
}
