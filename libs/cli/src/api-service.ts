import { ApiModule, openReadModels } from '@stageflow/api';
import { READINESS, type StartServiceOptions } from '@stageflow/messaging';
import type { Infrastructure, Logger } from '@stageflow/runtime';

/** The API service's module and providers: read models, projector, readiness with projector lag. */
export async function apiServiceOptions(infra: Infrastructure, logger: Logger, port: number): Promise<Pick<StartServiceOptions, 'module' | 'port' | 'providers'> & { closeReadModels(): Promise<void> }> {
  const readModels = await openReadModels(infra);
  const tokens = infra.config.apiTokens;
  if (tokens.length === 0) logger.warn('no API token is configured (SF_API_TOKENS_FILE, SF_API_TOKENS): every API request will be refused with 401');
  const legacy = tokens.filter((t) => /^legacy-\d+$/.test(t.name)).map((t) => t.name);
  if (legacy.length) logger.warn('bare tokens in SF_API_TOKENS have every scope; name and scope them (name:scope+scope:token)', { tokens: legacy });
  logger.info('API tokens', { tokens: tokens.map((t) => ({ name: t.name, scopes: t.scopes })) });
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
