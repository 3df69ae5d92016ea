import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempRun, type TempRun } from '../testing/fixtures';
import { defaultSfBin, installStopHook } from './stop-hook-settings';

let run: TempRun;
beforeEach(() => {
  run = tempRun();
});
afterEach(() => run.cleanup());

describe('Claude Code stop hook settings', () => {
  it('writes a settings file registering `sf stage stop-hook` as the Stop hook and returns --settings <file>', async () => {
    const args = await installStopHook('claude', run.runDir, 3, '/opt/sf/bin/sf.js');
    const file = path.join(run.runDir, 'turn-3.claude-settings.json');
    expect(args).toEqual(['--settings', file]);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      hooks: { Stop: [{ hooks: [{ type: 'command', command: `${process.execPath} /opt/sf/bin/sf.js stage stop-hook` }] }] },
    });
  });

  it('quotes a path the shell would split', async () => {
    const [, file] = await installStopHook('claude', run.runDir, 1, "/opt/my sf/it's/sf.js");
    const settings = JSON.parse(fs.readFileSync(file!, 'utf8')) as { hooks: { Stop: { hooks: { command: string }[] }[] } };
    expect(settings.hooks.Stop[0]!.hooks[0]!.command).toBe(`${process.execPath} '/opt/my sf/it'\\''s/sf.js' stage stop-hook`);
  });

  it("runs this repository's bin/sf.js unless SF_BIN names another", () => {
    expect(defaultSfBin({})).toBe(path.resolve(__dirname, '../../../../bin/sf.js'));
    expect(fs.existsSync(defaultSfBin({}))).toBe(true);
    expect(defaultSfBin({ SF_BIN: '/x/sf.js' })).toBe('/x/sf.js');
  });
});
