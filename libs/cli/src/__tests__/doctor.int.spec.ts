/** `sf doctor` against this host's real sandbox (bubblewrap). */
import { doctorReport, formatDoctor, type DoctorProbe } from '../commands/doctor';
import { main } from '../main';
import type { Output } from '../output';

function capture(): Output & { stdout: string[] } {
  const stdout: string[] = [];
  return { stdout, out: (text) => void stdout.push(text), err: () => undefined, isTTY: false };
}

describe('sf doctor', () => {
  it('reports every sandbox property of this host and exits 0 when all required ones hold', async () => {
    const out = capture();
    expect(await main(['node', 'sf', 'doctor', '--json'], out)).toBe(0);
    const report = JSON.parse(out.stdout.join('\n'));
    expect(report.ok).toBe(true);
    expect(report.sections[0].name).toBe('sandbox');
    expect(report.sections[0].checks.map((c: { name: string }) => c.name)).toEqual(['sandbox_enabled', 'bwrap_present', 'namespaces_usable', 'non_root_uid', 'slirp4netns_present']);
  });

  it('names SF_SANDBOX=off as a missing required property (exit 1)', async () => {
    const report = await doctorReport({ SF_SANDBOX: 'off' });
    expect(report.ok).toBe(false);
    expect(formatDoctor(report)).toMatch(/sandbox: MISSING sandbox_enabled: SF_SANDBOX=off/);
  });

  it('takes more sections; a failed optional check does not fail the report', async () => {
    const optional: DoctorProbe = async () => ({ name: 'extra', checks: [{ name: 'nice_to_have', ok: false, required: false, detail: 'absent' }] });
    const report = await doctorReport({}, [optional]);
    expect(report).toEqual({ ok: true, sections: [{ name: 'extra', checks: [expect.objectContaining({ ok: false })] }] });
    expect(formatDoctor(report)).toContain('extra: missing nice_to_have: absent');
  });
});
