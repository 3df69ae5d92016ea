/**
 * Installs `sf stage stop-hook` (stop-hook.ts) as the Stop hook of an agent CLI that supports one.
 * Guarantees: the settings file is written next to the turn's prompt file, never in the checkout;
 * the hook command runs this installation's `bin/sf.js` (or `SF_BIN`) with this Node binary.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

export type StopHookCli = 'claude';

/** bin/sf.js of this repository: the same depth from src/exec and dist/exec. */
export function defaultSfBin(env: NodeJS.ProcessEnv = process.env): string {
  return env.SF_BIN || path.resolve(__dirname, '../../../../bin/sf.js');
}

export function stopHookCommand(sfBin: string): string {
  return `${shellQuote(process.execPath)} ${shellQuote(sfBin)} stage stop-hook`;
}

/** Claude Code settings registering the Stop hook. */
export function claudeStopHookSettings(sfBin: string): object {
  return { hooks: { Stop: [{ hooks: [{ type: 'command', command: stopHookCommand(sfBin) }] }] } };
}

/** Writes the turn's settings file in `dir`; returns the argv to append to the CLI's command. */
export async function installStopHook(cli: StopHookCli, dir: string, turn: number, sfBin: string): Promise<string[]> {
  switch (cli) {
    case 'claude': {
      const file = path.join(dir, `turn-${turn}.claude-settings.json`);
      await fs.writeFile(file, `${JSON.stringify(claudeStopHookSettings(sfBin), null, 2)}\n`, 'utf8');
      return ['--settings', file];
    }
    default: {
      const unreachable: never = cli;
      throw new Error(`no stop hook for ${String(unreachable)}`);
    }
  }
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
