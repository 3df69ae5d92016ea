/** The `sf` command. Exit codes: 0 ok / run succeeded, 1 failed or invalid, 2 waiting on an operator. */
import { Command, CommanderError } from 'commander';
import { registerDoctor } from './commands/doctor';
import { registerEnvelope } from './commands/envelope';
import { registerKeys } from './commands/keys';
import { registerMcp } from './commands/mcp';
import { registerPipelines } from './commands/pipelines';
import { registerRun } from './commands/run';
import { registerRuns } from './commands/runs';
import { registerServe } from './commands/serve';
import { registerSetup } from './commands/setup';
import { registerStage } from './commands/stage';
import { registerValidate } from './commands/validate';
import { processOutput, UsageError, type Output } from './output';

export async function main(argv: readonly string[], out: Output = processOutput): Promise<number> {
  let exitCode = 0;
  const setExit = (code: number) => {
    exitCode = code;
  };
  const program = new Command('sf')
    .description('Stageflow: LLM-agent pipelines whose every stage is verified by the system, not taken on the agent\'s word')
    .exitOverride()
    .configureOutput({ writeOut: (s) => out.out(s.trimEnd()), writeErr: (s) => out.err(s.trimEnd()) });
  registerValidate(program, out, setExit);
  registerRun(program, out, setExit);
  registerRuns(program, out, setExit);
  registerEnvelope(program, out, setExit);
  (await import('./commands/projections')).registerProjections(program, out, setExit);
  registerServe(program, out, setExit);
  registerSetup(program, out, setExit);
  registerStage(program, out, setExit);
  registerMcp(program, out, setExit);
  registerPipelines(program, out, setExit);
  registerDoctor(program, out, setExit);
  registerKeys(program, out, setExit);
  try {
    await program.parseAsync(argv as string[]);
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 1;
    if (err instanceof UsageError) {
      out.err(`sf: ${err.message}`);
      return err.exitCode;
    }
    const refused = err as { retryable?: boolean; code?: string; message?: string };
    if (refused?.retryable === false && refused.message) {
      out.err(`sf: ${refused.message}`);
      return 1;
    }
    throw err;
  }
}
