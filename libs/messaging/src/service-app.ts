/**
 * Boots one Stageflow service as a NestJS application: its controllers consume through the
 * Stageflow transport, and (when a port is given) an HTTP server answers /healthz and /readyz.
 * `close()` drains: consumers stop fetching and finish what they hold before the app ends.
 */
import { type DynamicModule, type INestApplication, type INestApplicationContext, Module, type Type } from "@nestjs/common";
import { NestFactory } from '@nestjs/core';
import type { NestMicroservice } from '@nestjs/microservices';
import { endRunOfDeadMessage, type Infrastructure, type Logger } from '@stageflow/runtime';
import { HealthController } from './health.controller';
import { PassThroughRpcFilter } from './pass-through.filter';
import { INFRASTRUCTURE, LOGGER } from './tokens';
import { StageflowTransport } from './transport';
import { TRANSPORT_STATE, type TransportState } from './transport-state';

export interface ServiceApp {
  readonly name: string;
  readonly app: INestApplication | INestApplicationContext;
  readonly transport: StageflowTransport;
  readonly url?: string;
  close(): Promise<void>;
}

export interface StartServiceOptions {
  readonly name: string;
  readonly module: DynamicModule | Type<unknown>;
  readonly infra: Infrastructure;
  readonly logger: Logger;
  /** HTTP port for health (and the API's routes); omitted → no HTTP server. 0 → any free port. */
  readonly port?: number;
  readonly host?: string;
  /** Extra providers for the root module (e.g. READINESS). */
  readonly providers?: DynamicModule['providers'];
}

export async function startService(options: StartServiceOptions): Promise<ServiceApp> {
  const transport = new StageflowTransport({
    log: options.infra.log,
    queues: options.infra.queues,
    namespace: options.infra.config.namespace,
    logger: options.logger.child({ component: 'transport' }),
    // A message about a run that no subscriber can process ends that run in `error`.
    onDeadEvent: (letter) => endRunOfDeadMessage(options.infra, letter),
  });
  @Module({})
  class RootModule {}
  const root: DynamicModule = {
    module: RootModule,
    global: true,
    imports: [options.module as DynamicModule],
    controllers: options.port !== undefined ? [HealthController] : [],
    providers: [
      { provide: INFRASTRUCTURE, useValue: options.infra },
      { provide: LOGGER, useValue: options.logger },
      { provide: TRANSPORT_STATE, useValue: { ready: () => transport.ready, denied: () => options.infra.deniedSubscriptions?.() ?? [] } satisfies TransportState },
      ...(options.providers ?? []),
    ],
    exports: [INFRASTRUCTURE, LOGGER, TRANSPORT_STATE],
  };
  const nestLogger = {
    log: (m: unknown) => options.logger.debug(String(m)),
    error: (m: unknown) => options.logger.error(String(m)),
    warn: (m: unknown) => options.logger.warn(String(m)),
  };
  let app: INestApplication | INestApplicationContext;
  let url: string | undefined;
  if (options.port !== undefined) {
    const http = await NestFactory.create(root, { logger: nestLogger, bodyParser: true });
    // Deferred so the filter is registered before the handlers are bound (bound handlers keep the
    // filters they were bound with); the HTTP application runs the shared lifecycle hooks once.
    const micro = http.connectMicroservice({ strategy: transport }, { inheritAppConfig: false, deferInitialization: true }) as NestMicroservice;
    micro.useGlobalFilters(new PassThroughRpcFilter());
    micro.setIsInitHookCalled(true);
    await http.startAllMicroservices();
    await http.listen(options.port, options.host ?? '127.0.0.1');
    const address = http.getHttpServer().address();
    url = typeof address === 'object' && address ? `http://${options.host ?? '127.0.0.1'}:${address.port}` : undefined;
    app = http;
  } else {
    const micro = await NestFactory.createMicroservice(root, { strategy: transport, logger: nestLogger });
    micro.useGlobalFilters(new PassThroughRpcFilter());
    await micro.listen();
    app = micro;
  }
  options.logger.info('service started', { service: options.name, ...(url ? { url } : {}) });
  const stopReportingDenials = reportDeniedSubscriptions(options.infra, options.logger);
  return {
    name: options.name,
    app,
    transport,
    url,
    close: async () => {
      stopReportingDenials();
      await transport.close();
      await app.close();
      options.logger.info('service stopped', { service: options.name });
    },
  };
}

/** How often refused subscriptions are looked for (the broker reports them after subscribe returned). */
const DENIAL_CHECK_MS = 2000;

/** Logs each subscription the broker refused once, as an error (a service without --port has no /readyz). */
function reportDeniedSubscriptions(infra: Infrastructure, logger: Logger): () => void {
  const reported = new Set<string>();
  const timer = setInterval(() => {
    for (const subject of infra.deniedSubscriptions?.() ?? []) {
      if (reported.has(subject)) continue;
      reported.add(subject);
      logger.error('the broker refused a subscription: not ready until the NATS permissions allow it', { subject });
    }
  }, DENIAL_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
