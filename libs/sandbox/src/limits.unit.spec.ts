import { limitedArgv, stoppingLimit } from './limits';

const limits = { processes: 64, openFiles: 128, fileSizeBytes: 1024 * 1024, memoryBytes: 2 * 1024 * 1024 * 1024 };

describe('limitedArgv', () => {
  it('puts the limits in front of a bash -c script, run by that same shell', () => {
    expect(limitedArgv(limits, ['bash', '-c', 'echo "$1"'])).toEqual([
      '/bin/bash',
      '-c',
      'ulimit -u 64 && ulimit -n 128 && ulimit -f 1024 && ulimit -v 2097152 || exit 126\necho "$1"',
    ]);
  });

  it('runs any other argv through a prologue that execs it, never as shell text', () => {
    const argv = limitedArgv(limits, ['node', '-e', '$(touch /tmp/x)']);
    expect(argv.slice(0, 2)).toEqual(['/bin/bash', '-c']);
    expect(argv[2]).toMatch(/&& exec "\$@"$/);
    expect(argv.slice(3)).toEqual(['sf-sandbox', 'node', '-e', '$(touch /tmp/x)']);
  });

  it('a bash -c with positional arguments keeps them through the prologue', () => {
    expect(limitedArgv(limits, ['bash', '-c', 'echo "$0"', 'zero']).slice(3)).toEqual(['sf-sandbox', 'bash', '-c', 'echo "$0"', 'zero']);
  });
});

describe('stoppingLimit', () => {
  it('names the limit a failed command reports, and none for a success', () => {
    expect(stoppingLimit(153, null, '')).toBe('file_size');
    expect(stoppingLimit(null, 'SIGXFSZ', '')).toBe('file_size');
    expect(stoppingLimit(254, null, 'bash: fork: retry: Resource temporarily unavailable')).toBe('processes');
    expect(stoppingLimit(1, null, 'Cannot allocate memory')).toBe('memory');
    expect(stoppingLimit(1, null, 'Too many open files')).toBe('open_files');
    expect(stoppingLimit(0, null, 'Cannot allocate memory')).toBeNull();
    expect(stoppingLimit(1, null, 'plain failure')).toBeNull();
  });
});
