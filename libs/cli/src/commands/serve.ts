import type { Command } from 'commander';
import { parseAgentSpec } from '@stageflow/runtime';
import { createLogger, loadConfig, openInfrastructure, type Logger } from '@stageflow/runtime';
import { SERVICE_NAMES, type ServiceName } from '../service-names';
import { UsageError, type Output } from '../output';

/** Services that run agent-influenced code (agent tools, the exec CLI, command checks). */
const RUNS_AGENT_CODE: readonly ServiceName[] = ['agent-runner', 'verifier'];

/** Refuses to start without a sandbox unless SF_SANDBOX=off, which is then logged at every start. */
async function requireSandbox(logger: Logger): Promise<void> {
  const { defaultSandbox, serviceStartup } = await import('@stageflow/sandbox');
  const decision = serviceStartup(await defaultSandbox().probe());
  switch (decision.kind) {
    case 'sandboxed':
      logger.info('agent code runs in the bubblewrap sandbox');
      return;
    case 'unsandboxed':
      logger.warn(decision.reason, { sandbox: 'off' });
      return;
    case 'refused':
      throw new UsageError(decision.reason);
    default: {
      const unreachable: never = decision;
      throw new Error(`unknown sandbox decision ${JSON.stringify(unreachable)}`);
    }
  }
}

export function registerServe(program: Command, _out: Output, setExit: (code: number) => void): void {
  program
    .command('serve')
    .description(`run one service in this process until SIGTERM: ${SERVICE_NAMES.join(', ')}`)
    .argument('<service>', 'the service to run')
    .option('--port <n>', 'HTTP port for /healthz, /readyz (and the API)', (v) => Number(v))
    .option('--host <addr>', 'HTTP bind address', '127.0.0.1')
    .option('--agent <spec>', 'agent-runner: the agent backend (default: $SF_AGENT)')
    .action(async (name: string, flags: { port?: number; host: string; agent?: string }) => {
      if (!SERVICE_NAMES.includes(name as ServiceName)) throw new UsageError(`unknown service ${name}; one of ${SERVICE_NAMES.join(', ')}`);
      const [{ startService }, { serviceModule }, { apiServiceOptions }] = await Promise.all([import('@stageflow/messaging'), import('../engine'), import('../api-service')]);
      const config = loadConfig();
      const logger = createLogger({ service: name, pid: process.pid });
      if (RUNS_AGENT_CODE.includes(name as ServiceName)) await requireSandbox(logger);
      const infra = await openInfrastructure(config);
      const agentSpec = flags.agent ?? process.env.SF_AGENT;
      const api = name === 'api' ? await apiServiceOptions(infra, logger, flags.port ?? 8080) : undefined;
      const service = api
          ? await startService({ name, infra, logger, host: flags.host, module: api.module, port: api.port, providers: api.providers })
          : await startService({
              name,
              infra,
              logger,
              host: flags.host,
              port: flags.port,
              module: serviceModule(name as Exclude<ServiceName, 'api'>, agentSpec ? parseAgentSpec(agentSpec) : undefined),
            });
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          logger.info('draining', { signal });
          resolve();
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
      await service.close();
      await api?.closeReadModels();
      await infra.close();
      setExit(0);
    });
}
