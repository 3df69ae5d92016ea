/**
 * The bubblewrap arguments of one sandbox: a root of read-only system directories, a fresh /proc
 * and /dev, the private tmp, the caller's binds, and empty mounts over every hidden path that lies
 * inside a bind. Nothing else of the host is visible (no /root, no home, no host /proc, no state dir).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Bind {
  /** Host path (directory, file or socket). */
  readonly src: string;
  /** Path inside the sandbox; default: the same as `src`. */
  readonly dest?: string;
  readonly writable?: boolean;
}

/** Top-level system directories: symlinks (merged /usr) are recreated, directories bound read-only. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** What a shell, git, node, TLS clients and the locale need from /etc; nothing else of it. */
const ETC_ENTRIES = [
  '/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/passwd', '/etc/group',
  '/etc/nsswitch.conf', '/etc/hosts', '/etc/host.conf', '/etc/gai.conf', '/etc/protocols', '/etc/services',
  '/etc/localtime', '/etc/timezone', '/etc/ssl', '/etc/ca-certificates', '/etc/ca-certificates.conf', '/etc/pki',
  '/etc/gitconfig', '/etc/mime.types', '/etc/inputrc', '/etc/bash.bashrc', '/etc/profile', '/etc/os-release',
  '/etc/debian_version', '/etc/locale.alias',
];

/**
 * A minimal /dev of bound host device nodes. Not bubblewrap's `--dev`: that makes it nest a second
 * user namespace, which user-mode networking could then not join.
 */
const DEVICES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom'];

function deviceArgs(): string[] {
  return [
    '--tmpfs', '/dev',
    ...DEVICES.flatMap((dev) => ['--dev-bind', dev, dev]),
    '--symlink', '/proc/self/fd', '/dev/fd',
    '--symlink', '/proc/self/fd/0', '/dev/stdin',
    '--symlink', '/proc/self/fd/1', '/dev/stdout',
    '--symlink', '/proc/self/fd/2', '/dev/stderr',
  ];
}

function systemRoot(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', entry, entry);
  return args;
}

/** The install prefix of this Node binary when it lives outside the system directories. */
function nodePrefix(): Bind[] {
  const prefix = path.dirname(path.dirname(fs.realpathSync(process.execPath)));
  return SYSTEM_DIRS.some((dir) => prefix === dir || prefix.startsWith(`${dir}/`)) ? [] : [{ src: prefix }];
}

function within(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith('/') ? parent : `${parent}/`);
}

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

/** The inside path of host path `hostPath`, through the deepest bind that contains it. */
export function insidePath(binds: readonly Bind[], hostPath: string): string | undefined {
  const holder = [...binds].filter((b) => within(hostPath, b.src)).sort((a, b) => depth(b.src) - depth(a.src))[0];
  if (!holder) return undefined;
  return path.join(holder.dest ?? holder.src, path.relative(holder.src, hostPath));
}

type Mount = { readonly dest: string; readonly args: readonly string[]; readonly hide: boolean };

export interface MountPlan {
  readonly binds: readonly Bind[];
  /** Host paths never visible inside (covered when inside a bind). */
  readonly hidden: readonly string[];
  readonly privateTmp: string;
  /** A resolv.conf for the sandbox's own network, bound read-only over /etc/resolv.conf. */
  readonly resolvConf?: string;
}

export function mountArgs(plan: MountPlan): string[] {
  const all = [...plan.binds, ...nodePrefix()];
  // A read-only bind inside a writable one would make part of it read-only: the writable one wins.
  const binds = all.filter((b) => b.writable || !all.some((w) => w.writable && within(b.src, w.src)));
  const mounts: Mount[] = binds.map((b) => ({ dest: b.dest ?? b.src, args: [b.writable ? '--bind' : '--ro-bind', b.src, b.dest ?? b.src], hide: false }));
  const hidden = new Set(plan.hidden.map((h) => path.resolve(h)));
  for (const b of binds) hidden.add(path.join(b.src, '.stageflow'));
  for (const h of hidden) {
    for (const b of binds) {
      if (!within(h, b.src)) continue;
      let stat: fs.Stats;
      try {
        stat = fs.lstatSync(h);
      } catch {
        continue;
      }
      const dest = path.join(b.dest ?? b.src, path.relative(b.src, h));
      mounts.push({ dest, args: stat.isDirectory() ? ['--tmpfs', dest] : ['--ro-bind', '/dev/null', dest], hide: true });
    }
  }
  // Shallower first; at equal depth a hide comes after the bind it covers.
  mounts.sort((a, b) => depth(a.dest) - depth(b.dest) || Number(a.hide) - Number(b.hide));
  return [
    ...systemRoot(),
    '--proc', '/proc',
    ...deviceArgs(),
    '--bind', plan.privateTmp, '/tmp',
    ...(plan.resolvConf ? ['--ro-bind', plan.resolvConf, '/etc/resolv.conf'] : []),
    ...mounts.flatMap((m) => m.args),
    // The root and /dev are tmpfs of bubblewrap's: read-only once everything is mounted.
    '--remount-ro', '/dev',
    '--remount-ro', '/',
  ];
}
