import type { SandboxProbe } from './probe';
import { embeddedStartup, serviceStartup } from './startup';

const missing: SandboxProbe = {
  mode: 'auto',
  available: false,
  properties: [
    { name: 'bwrap_present', ok: false, required: true, detail: '/usr/bin/bwrap not found' },
    { name: 'slirp4netns_present', ok: false, required: false, detail: 'not found' },
  ],
};

describe('startup decision', () => {
  it('a service with a sandbox starts sandboxed', () => {
    expect(serviceStartup({ ...missing, available: true })).toEqual({ kind: 'sandboxed' });
  });

  it('a service without one refuses, naming the missing required property and the way out', () => {
    const decision = serviceStartup(missing);
    expect(decision).toMatchObject({ kind: 'refused', reason: expect.stringContaining('bwrap_present (/usr/bin/bwrap not found)') });
    expect(decision).toMatchObject({ reason: expect.stringContaining('SF_SANDBOX=off') });
    expect(decision).not.toMatchObject({ reason: expect.stringContaining('slirp4netns') });
  });

  it('SF_SANDBOX=off lets a service start unsandboxed, with the reason to log', () => {
    expect(serviceStartup({ ...missing, mode: 'off' })).toMatchObject({ kind: 'unsandboxed', reason: expect.stringMatching(/^SF_SANDBOX=off/) });
  });

  it('the embedded default runs without one and says why', () => {
    expect(embeddedStartup(missing)).toMatchObject({ kind: 'unsandboxed', reason: expect.stringContaining('bwrap_present') });
    expect(embeddedStartup({ ...missing, available: true })).toEqual({ kind: 'sandboxed' });
  });
});
