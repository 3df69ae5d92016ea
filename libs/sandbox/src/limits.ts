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
 * The argv that applies `limits` (soft and hard: the command cannot raise them) before the command
 * runs. A `bash -c <script>` command gets them as the first line of its own script, run by that same
 * shell (one exec fewer; the script is shell text either way and runs after the limits are set).
 * Any other command is run by a prologue shell that execs it with its arguments ("$@"): an argv is
 * never spliced into shell text.
 */
export function limitedArgv(limits: SandboxLimits, argv: readonly string[]): string[] {
  const kib = (bytes: number) => Math.max(1, Math.floor(bytes / 1024));
  const setLimits = [
    `ulimit -u ${limits.processes}`,
    `ulimit -n ${limits.openFiles}`,
    `ulimit -f ${kib(limits.fileSizeBytes)}`,
    `ulimit -v ${kib(limits.memoryBytes)}`,
  ].join(' && ');
  const [program, flag, script, ...rest] = argv;
  if ((program === 'bash' || program === '/bin/bash') && flag === '-c' && script !== undefined && rest.length === 0) {
    return ['/bin/bash', '-c', `${setLimits} || exit 126\n${script}`];
  }
  return ['/bin/bash', '-c', `${setLimits} && exec "$@"`, 'sf-sandbox', ...argv];
}
