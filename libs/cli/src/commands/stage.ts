import type { Command } from 'commander';
import type { StageVerb } from '@stageflow/agents';
import type { Output } from '../output';

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The stage tools for an external agent CLI (the `exec` backend): each verb calls the
 * agent-runner's tool server on the Unix socket named by SF_TOOL_SOCKET (token SF_TOOL_TOKEN). Exit 0 ok, 1 refused, 2 parked.
 */
export function registerStage(program: Command, out: Output, setExit: (code: number) => void): void {
  const stage = program.command('stage').description('stage tools for an external agent running inside an attempt');
  const verbs: Record<StageVerb, string> = {
    emit: 'emit the stage envelope (JSON argument or stdin)',
    artifact: 'write a stage artifact: {"path", "content"}',
    ask: 'ask the operator: {"kind", "question", ...}',
    check: 'check the required outputs of this attempt (exit 0 when all are present, fresh and valid)',
  };
  for (const verb of Object.keys(verbs) as StageVerb[]) {
    stage
      .command(verb)
      .description(verbs[verb])
      .argument('[json]', 'the tool arguments as JSON (default: stdin, or {} for check)')
      .action(async (json?: string) => {
        const args = json ?? (verb === 'check' ? '{}' : await readStdin());
        const { stageToolCommand } = await import('@stageflow/agents');
        const result = await stageToolCommand(verb, args || '{}');
        if (result.output) (result.exitCode === 1 ? out.err : out.out)(result.output);
        setExit(result.exitCode);
      });
  }
  stage
    .command('stop-hook')
    .description('a Stop hook for agent CLIs: blocks at most once per turn, fails open, decides nothing')
    .action(async () => {
      const { stopHook } = await import('@stageflow/agents');
      const decision = await stopHook(await readStdin());
      if (decision) out.out(decision);
      setExit(0);
    });
}
