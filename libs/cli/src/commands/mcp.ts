/**
 * `sf mcp`: the MCP tools over stdio, for an MCP client that spawns this command. Stdout carries
 * only MCP messages (logs go to stderr). In the embedded default with `--agent` the engine runs in
 * this process, so a decision (recover, answer, ...) continues the run while the server lives;
 * without `--agent` decisions are only recorded (`sf runs resume` continues the run). Against a
 * cluster (NATS_URL) only the log is opened and the cluster's services continue the run.
 * The server ends when the client closes stdin, or on SIGTERM/SIGINT.
 */
import type { Command } from 'commander';
import { parseAgentSpec } from '@stageflow/runtime';
import { loadConfig, type Infrastructure } from '@stageflow/runtime';
import type { Output } from '../output';
import { openLog, openSession } from '../session';

export function registerMcp(program: Command, _out: Output, setExit: (code: number) => void): void {
  program
    .command('mcp')
    .description('serve the MCP tools (get_run, get_stage_verification, recover_manual_stage, ...) over stdio')
    .option('--agent <spec>', 'embedded default: the agent backend that continues a run after a decision')
    .action(async (flags: { agent?: string }) => {
      const config = loadConfig();
      const session = config.mode === 'embedded' && !flags.agent ? await logOnly() : await openSession(config, flags.agent ? parseAgentSpec(flags.agent) : undefined);
      try {
        const { createMcpServer, RunOperations } = await import('@stageflow/api');
        const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
        const server = createMcpServer(new RunOperations(session.infra), { by: `mcp:${process.env.USER ?? 'unknown'}` });
        const ended = new Promise<void>((resolve) => {
          process.stdin.once('end', resolve);
          process.once('SIGTERM', resolve);
          process.once('SIGINT', resolve);
        });
        await server.connect(new StdioServerTransport());
        await ended;
        await server.close();
      } finally {
        await session.close();
      }
      setExit(0);
    });
}

async function logOnly(): Promise<{ infra: Infrastructure; close(): Promise<void> }> {
  const infra = await openLog();
  return { infra, close: () => infra.close() };
}
