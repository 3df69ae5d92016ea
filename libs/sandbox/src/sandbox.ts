/**
 * The one way Stageflow runs agent-influenced code (tools, script `run` steps, the exec backend's
 * agent CLI, `command` checks). Bubblewrap when the probe found it usable and SF_SANDBOX is not
 * `off`; otherwise the unsandboxed fallback (run.ts lists what it still guarantees).
 */
import { sandboxConfigFromEnv, type SandboxConfig } from './config';
import { probeSandbox, type SandboxProbe } from './probe';
import { runInSandbox, type Isolation, type SandboxCommand, type SandboxOutcome } from './run';

export class Sandbox {
  private probed?: Promise<SandboxProbe>;

  constructor(readonly config: SandboxConfig) {}

  static fromEnv(env: NodeJS.ProcessEnv = process.env): Sandbox {
    return new Sandbox(sandboxConfigFromEnv(env));
  }

  /** Probed once per instance. */
  probe(): Promise<SandboxProbe> {
    this.probed ??= probeSandbox(this.config);
    return this.probed;
  }

  /** How commands run here: `bwrap`, or `none` (the fallback, where binds' `dest` paths do not exist). */
  async isolation(): Promise<Isolation> {
    return (await this.probe()).available ? 'bwrap' : 'none';
  }

  async run(command: SandboxCommand): Promise<SandboxOutcome> {
    return runInSandbox(this.config, await this.isolation(), command);
  }
}

let shared: Sandbox | undefined;

/** The process-wide sandbox, configured from process.env on first use. */
export function defaultSandbox(): Sandbox {
  shared ??= Sandbox.fromEnv();
  return shared;
}
