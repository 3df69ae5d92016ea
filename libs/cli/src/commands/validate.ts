import type { Command } from 'commander';
import { validateCommand } from '@stageflow/catalog';
import type { Output } from '../output';

export function registerValidate(program: Command, out: Output, setExit: (code: number) => void): void {
  program
    .command('validate')
    .description('validate a pipeline with its stage files and schemas; exit 0 valid, 1 invalid')
    .argument('<pipeline>', 'the *.pipeline.yaml')
    .option('--json', 'print {"ok", "errors", "warnings"}')
    .option('--strict', 'treat warnings as errors, as the reference defines it')
    .action((file: string, flags: { json?: boolean; strict?: boolean }) => {
      const result = validateCommand(file, { json: Boolean(flags.json), strict: Boolean(flags.strict) });
      if (result.stdout) out.out(result.stdout);
      setExit(result.exitCode);
    });
}
