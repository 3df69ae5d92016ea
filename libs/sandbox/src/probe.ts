/**
 * What this host offers the sandbox, property by property, for `sf doctor` and for the services'
 * start-up decision. A property is `required` when the sandbox cannot be made without it.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { SandboxConfig } from './config';
import { runInSandbox } from './run';

export interface SandboxProperty {
  readonly name: 'bwrap_present' | 'namespaces_usable' | 'non_root_uid' | 'slirp4netns_present';
  readonly ok: boolean;
  readonly required: boolean;
  readonly detail: string;
}

export interface SandboxProbe {
  readonly mode: SandboxConfig['mode'];
  /** True when commands run under bubblewrap. */
  readonly available: boolean;
  readonly properties: readonly SandboxProperty[];
}

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

export async function probeSandbox(config: SandboxConfig): Promise<SandboxProbe> {
  const bwrap = await executable(config.bwrapPath);
  const slirp = await executable(config.slirp4netnsPath);
  const root = process.getuid?.() === 0;
  let namespaces: SandboxProperty = { name: 'namespaces_usable', ok: false, required: true, detail: 'not tried: bubblewrap is missing' };
  if (bwrap) {
    const trial = await runInSandbox(config, 'bwrap', { argv: ['true'], cwd: '/usr', env: {}, writable: [], binds: [{ src: '/usr' }], timeoutMs: 10_000, outputCapBytes: 4096 });
    const ok = trial.exit_code === 0;
    namespaces = {
      name: 'namespaces_usable',
      ok,
      required: true,
      detail: ok ? 'user, pid, net, ipc, uts and mount namespaces with a fresh /proc' : `bubblewrap failed: ${(trial.start_error ?? trial.stderr).trim() || `exit ${trial.exit_code}`}`,
    };
  }
  const properties: SandboxProperty[] = [
    { name: 'bwrap_present', ok: bwrap, required: true, detail: bwrap ? config.bwrapPath : `${config.bwrapPath} not found (install bubblewrap)` },
    namespaces,
    {
      name: 'non_root_uid',
      ok: !root || config.uid !== 0,
      required: true,
      detail: root ? `sandboxed code runs as uid ${config.uid}, gid ${config.gid} (SF_SANDBOX_UID/SF_SANDBOX_GID)` : `sandboxed code runs as this uid ${process.getuid?.()}`,
    },
    { name: 'slirp4netns_present', ok: slirp, required: false, detail: slirp ? `${config.slirp4netnsPath} (for network: true)` : `${config.slirp4netnsPath} not found: stages and checks with network: true fail` },
  ];
  return { mode: config.mode, available: config.mode === 'auto' && properties.every((p) => p.ok || !p.required), properties };
}
