import { type DynamicModule, Module } from '@nestjs/common';
import type { AgentSpec } from '@stageflow/runtime';
import { AgentRunnerController } from './agent-runner.controller';
import { createBackend } from './backends';
import { AGENT_BACKEND } from './tokens';

@Module({})
export class AgentRunnerModule {
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
