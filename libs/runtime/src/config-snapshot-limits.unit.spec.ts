import { loadConfig } from './config';

describe('loadConfig snapshot limits', () => {
  it('defaults to 100 MiB per file and 1 GiB per attempt', () => {
    expect(loadConfig({}).snapshotLimits).toEqual({ maxFileBytes: 100 * 1024 * 1024, maxAttemptBytes: 1024 * 1024 * 1024 });
  });

  it('reads SF_MAX_FILE_BYTES and SF_MAX_ATTEMPT_BYTES', () => {
    expect(loadConfig({ SF_MAX_FILE_BYTES: '4096', SF_MAX_ATTEMPT_BYTES: '65536' }).snapshotLimits).toEqual({ maxFileBytes: 4096, maxAttemptBytes: 65536 });
  });

  it('keeps the default for an empty value', () => {
    expect(loadConfig({ SF_MAX_ATTEMPT_BYTES: ' ' }).snapshotLimits.maxAttemptBytes).toBe(1024 * 1024 * 1024);
  });

  it.each([['0'], ['-5'], ['1.5'], ['10MB'], ['1e3'], ['99999999999999999999']])('refuses %j, naming the variable', (value) => {
    expect(() => loadConfig({ SF_MAX_FILE_BYTES: value })).toThrow(`SF_MAX_FILE_BYTES must be a positive whole number of bytes, not ${JSON.stringify(value)}`);
  });
});
