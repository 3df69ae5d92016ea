/**
 * `sf doctor`: what this host offers Stageflow, section by section. Each section is one probe
 * (DOCTOR_SECTIONS); a new one (NATS, Postgres, configuration) is a function added to that list.
 * Exit 0 when every required check holds, 1 otherwise. `--json` prints {ok, sections}.
 */
import type { Command } from 'commander';
import type { Output } from '../output';

export interface DoctorCheck {
  readonly name: string;
  readonly ok: boolean;
  /** A failed required check makes `sf doctor` exit 1. */
  readonly required: boolean;
  readonly detail: string;
}

export interface DoctorSection {
  readonly name: string;
  readonly checks: readonly DoctorCheck[];
}

export type DoctorProbe = (env: NodeJS.ProcessEnv) => Promise<DoctorSection>;

/** The sandbox for agent-influenced code: each property bubblewrap needs, and whether it is switched off. */
export async function sandboxSection(env: NodeJS.ProcessEnv): Promise<DoctorSection> {
  const { Sandbox } = await import('@stageflow/sandbox');
  const probe = await Sandbox.fromEnv(env).probe();
  const enabled: DoctorCheck = {
    name: 'sandbox_enabled',
    ok: probe.mode === 'auto',
    required: true,
    detail: probe.mode === 'auto' ? 'SF_SANDBOX=auto' : 'SF_SANDBOX=off: agent code runs without a sandbox',
  };
  return { name: 'sandbox', checks: [enabled, ...probe.properties] };
}

export const DOCTOR_SECTIONS: readonly DoctorProbe[] = [sandboxSection];

export async function doctorReport(env: NodeJS.ProcessEnv = process.env, sections: readonly DoctorProbe[] = DOCTOR_SECTIONS): Promise<{ ok: boolean; sections: DoctorSection[] }> {
  const results = await Promise.all(sections.map((probe) => probe(env)));
  return { ok: results.every((section) => section.checks.every((check) => check.ok || !check.required)), sections: results };
}

export function formatDoctor(report: { ok: boolean; sections: readonly DoctorSection[] }): string {
  const lines = report.sections.flatMap((section) =>
    section.checks.map((check) => `${section.name}: ${check.ok ? 'ok     ' : check.required ? 'MISSING' : 'missing'} ${check.name}: ${check.detail}`),
  );
  return [...lines, report.ok ? 'doctor: everything required is here' : 'doctor: something required is missing'].join('\n');
}

export function registerDoctor(program: Command, out: Output, setExit: (code: number) => void): void {
  program
    .command('doctor')
    .description('check what this host offers Stageflow (the sandbox for agent code, ...); exit 1 when something required is missing')
    .option('--json', 'print {"ok", "sections": [{"name", "checks": [{"name", "ok", "required", "detail"}]}]}')
    .action(async (flags: { json?: boolean }) => {
      const report = await doctorReport();
      out.out(flags.json ? JSON.stringify(report, null, 2) : formatDoctor(report));
      setExit(report.ok ? 0 : 1);
    });
}
