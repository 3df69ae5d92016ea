/**
 * The embedded default: every service in this process, on the embedded log under
 * STAGEFLOW_HOME (and, with read models, an embedded Postgres). The same modules as
 * `sf serve <service>`; only the wiring differs.
 */
import type { DynamicModule, Type } from '@nestjs/common';
import { AgentRunnerModule, type AgentSpec } from '@stageflow/agent-runner';
import { startService, type ServiceApp } from '@stageflow/messaging';
import { RecoveryModule } from '@stageflow/recovery';
import { createLogger, openInfrastructure, type Infrastructure, type Logger, type StageflowConfig } from '@stageflow/runtime';
import { SchedulerModule } from '@stageflow/scheduler';
import { VerifierModule } from '@stageflow/verifier';
import { startBackgroundReadModels, type BackgroundReadModelOptions, type BackgroundReadModels } from './background-read-models';

import type { ServiceName } from './service-names';

export interface Engine {
  readonly infra: Infrastructure;
  readonly services: readonly ServiceApp[];
  /** Read models projected in the background (see background-read-models.ts). */
  readonly readModels: BackgroundReadModels;
  stop(): Promise<void>;
}

export interface EngineOptions {
  readonly config: StageflowConfig;
  readonly agent?: AgentSpec;
  readonly logger?: Logger;
  readonly readModels?: BackgroundReadModelOptions;
}

export function serviceModule(name: Exclude<ServiceName, 'api'>, agent?: AgentSpec): DynamicModule | Type<unknown> {
  switch (name) {
    case 'scheduler':
      return SchedulerModule;
    case 'recovery':
      return RecoveryModule;
    case 'verifier':
      return VerifierModule;
    case 'agent-runner':
      return AgentRunnerModule.register({ agent });
    default: {
      const unreachable: never = name;
      throw new Error(`unknown service ${String(unreachable)}`);
    }
  }
}

/** Starts the services that move runs (not the API) in this process. */
export async function startEngine(options: EngineOptions): Promise<Engine> {
  const logger = options.logger ?? createLogger({ process: 'sf' }, (process.env.SF_LOG_LEVEL as 'info') || 'warn');
  const infra = await openInfrastructure(options.config, {
    queueOverrides: { agent: { ackWaitMs: 10_000, maxDeliver: 5 }, verify: { ackWaitMs: 10_000, maxDeliver: 5 } },
  });
  const readModels = startBackgroundReadModels(infra, logger.child({ service: 'read-models' }), options.readModels);
  const services: ServiceApp[] = [];
  try {
    for (const name of ['scheduler', 'recovery', 'verifier', 'agent-runner'] as const) {
      services.push(await startService({ name, module: serviceModule(name, options.agent), infra, logger: logger.child({ service: name }) }));
    }
  } catch (err) {
    await Promise.allSettled(services.map((s) => s.close()));
    await readModels.stop();
    await infra.close();
    throw err;
  }
  return {
    infra,
    services,
    readModels,
    stop: async () => {
      await Promise.allSettled(services.map((s) => s.close()));
      await readModels.stop();
      await infra.close();
    },
  };
}
