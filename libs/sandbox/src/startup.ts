/**
 * What a process that runs agent code does with a probe's answer. A cluster service (agent-runner,
 * verifier) refuses to start without a sandbox unless the operator set SF_SANDBOX=off, which it
 * then logs as a warning at every start; the embedded default runs and says so once per run.
 */
import type { SandboxProbe } from './probe';

export type StartupDecision =
  | { readonly kind: 'sandboxed' }
  | { readonly kind: 'unsandboxed'; readonly reason: string }
  | { readonly kind: 'refused'; readonly reason: string };

/** The required properties the host lacks, with their details. */
export function missingProperties(probe: SandboxProbe): string[] {
  return probe.properties.filter((p) => p.required && !p.ok).map((p) => `${p.name} (${p.detail})`);
}

function unsandboxedReason(probe: SandboxProbe): string {
  if (probe.mode === 'off') return 'SF_SANDBOX=off: agent commands, the exec agent CLI and command checks run WITHOUT a sandbox (scratch environment, limits and process-group kill only)';
  return `no sandbox can be made here (missing: ${missingProperties(probe).join('; ')}): agent commands, the exec agent CLI and command checks run WITHOUT a sandbox; see sf doctor`;
}

export function serviceStartup(probe: SandboxProbe): StartupDecision {
  if (probe.available) return { kind: 'sandboxed' };
  if (probe.mode === 'off') return { kind: 'unsandboxed', reason: unsandboxedReason(probe) };
  return { kind: 'refused', reason: `refusing to start: no sandbox can be made here (missing: ${missingProperties(probe).join('; ')}); fix it (see sf doctor) or set SF_SANDBOX=off to run agent code unsandboxed` };
}

export function embeddedStartup(probe: SandboxProbe): StartupDecision {
  return probe.available ? { kind: 'sandboxed' } : { kind: 'unsandboxed', reason: unsandboxedReason(probe) };
}
