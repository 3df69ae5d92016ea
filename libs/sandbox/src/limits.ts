/**
 * Which resource limit stopped a command, when the outcome tells: SIGXFSZ (or a shell's 128+25
 * status) is the file-size limit; the C library's messages for EAGAIN on fork, ENOMEM and EMFILE
 * in stderr name the process, memory and open-file limits. Only a command that failed is named.
 * The messages come from sandboxed code, so the name is evidence for a reader, never a verdict.
 */
import type { SandboxLimits } from './config';

export type LimitName = 'processes' | 'open_files' | 'file_size' | 'memory';

const SIGXFSZ_STATUS = 128 + 25;

const PATTERNS: readonly (readonly [LimitName, RegExp])[] = [
  ['processes', /fork: (retry: )?Resource temporarily unavailable|Cannot fork|EAGAIN.*(spawn|fork)|(spawn|fork).*EAGAIN/i],
  ['memory', /Cannot allocate memory|memory exhausted|out of memory|allocation failed|ENOMEM|bad_alloc|MemoryError/i],
  ['open_files', /Too many open files|EMFILE/],
];

export function stoppingLimit(exitCode: number | null, signal: string | null, stderr: string): LimitName | null {
  if (signal === 'SIGXFSZ' || exitCode === SIGXFSZ_STATUS || /File size limit exceeded/.test(stderr)) return 'file_size';
  if (exitCode === 0) return null;
  for (const [name, pattern] of PATTERNS) if (pattern.test(stderr)) return name;
  return null;
}

/**
 * The shell prologue that applies `limits` to itself, then execs the command given as its
 * arguments ("$@"): the command is never spliced into shell text.
 */
export function limitedArgv(limits: SandboxLimits, argv: readonly string[]): string[] {
  const kib = (bytes: number) => Math.max(1, Math.floor(bytes / 1024));
  const prologue = [
    `ulimit -u ${limits.processes}`,
    `ulimit -n ${limits.openFiles}`,
    `ulimit -f ${kib(limits.fileSizeBytes)}`,
    `ulimit -v ${kib(limits.memoryBytes)}`,
    'exec "$@"',
  ].join(' && ');
  return ['/bin/bash', '-c', prologue, 'sf-sandbox', ...argv];
}
