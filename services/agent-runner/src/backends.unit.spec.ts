import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createBackend } from './backends';

describe('createBackend', () => {
  it('falls back to $SF_AGENT when no spec is given', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-backends-'));
    const file = path.join(dir, 'agent.script.yaml');
    fs.writeFileSync(file, 'stages:\n  s:\n    - - end_turn\n');
    try {
      await expect(createBackend(undefined, { SF_AGENT: `script:${file}` })).resolves.toMatchObject({ name: 'script' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prefers the given spec over $SF_AGENT', async () => {
    await expect(createBackend({ kind: 'openai' }, { SF_AGENT: 'anthropic' })).resolves.toMatchObject({ name: 'openai' });
  });

  it('SF_EXEC_STOP_HOOK=claude installs the Claude Code stop hook; another value is refused', async () => {
    const exec = { kind: 'exec', command: 'claude -p' } as const;
    await expect(createBackend(exec, { SF_EXEC_STOP_HOOK: 'claude' })).resolves.toMatchObject({ options: { stopHook: 'claude' } });
    await expect(createBackend(exec, {})).resolves.toMatchObject({ options: { command: ['claude', '-p'] } });
    await expect(createBackend(exec, { SF_EXEC_STOP_HOOK: 'cursor' })).rejects.toThrow(/only supported stop hook is claude/);
  });

  it('SF_EXEC_NETWORK=on gives the exec CLI a network; off by default; another value is refused', async () => {
    const exec = { kind: 'exec', command: 'claude -p' } as const;
    await expect(createBackend(exec, { SF_EXEC_NETWORK: 'on' })).resolves.toMatchObject({ options: { network: true } });
    await expect(createBackend(exec, {})).resolves.toMatchObject({ options: { network: false } });
    await expect(createBackend(exec, { SF_EXEC_NETWORK: 'yes' })).rejects.toThrow(/expected on or off/);
  });

  it('refuses to start without a spec or $SF_AGENT, naming both', async () => {
    await expect(createBackend(undefined, {})).rejects.toThrow(/pass --agent or set SF_AGENT/);
  });
});
