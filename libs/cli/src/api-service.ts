import { ApiModule, openReadModels } from '@stageflow/api';
import { READINESS, type StartServiceOptions } from '@stageflow/messaging';
import type { Infrastructure, Logger } from '@stageflow/runtime';

/** The API service's module and providers: read models, projector, readiness with projector lag. */
export async function apiServiceOptions(infra: Infrastructure, logger: Logger, port: number): Promise<Pick<StartServiceOptions, 'module' | 'port' | 'providers'> & { closeReadModels(): Promise<void> }> {
  const readModels = await openReadModels(infra);
  if (infra.config.apiTokens.length === 0) logger.warn('SF_API_TOKENS is empty: every API request will be refused with 401');
  return {
    module: ApiModule.register(readModels),
    port,
    providers: [
      {
        provide: READINESS,
        useValue: async () => {
          const lag = await readModels.projector.lag();
          return { ready: true, projector_lag: lag };
        },
      },
    ],
    closeReadModels: () => readModels.close(),
  };
}
