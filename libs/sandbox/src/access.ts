/**
 * Host-side permissions that let a dedicated sandbox uid use exactly the directories bound for it
 * (only when this process is root and sandboxed code runs as another uid).
 *
 * Guarantees: owners are never changed (git's ownership check keeps passing for the service);
 * a writable tree gets the sandbox group with group read/write (directories also setgid, so files
 * the service adds later keep the group); ancestors of a bound path get search permission for the
 * sandbox identity (never read), which bubblewrap needs to resolve the bind source; hidden paths,
 * symlinks, device nodes and other file systems than the tree's own are never touched.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

const DIR_GROUP_BITS = 0o2070;
const FILE_GROUP_BITS = 0o060;

function within(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
}

/**
 * Gives `uid`/`gid` search permission on every ancestor of `target` that lacks it: the execute bit
 * of the class that applies to them (owner, group, or others), never read.
 */
export async function ensureTraversable(target: string, uid: number, gid: number): Promise<void> {
  const ancestors: string[] = [];
  for (let dir = path.dirname(path.resolve(target)); ; dir = path.dirname(dir)) {
    ancestors.push(dir);
    if (dir === path.dirname(dir)) break;
  }
  for (const dir of ancestors.reverse()) {
    const stat = await fs.stat(dir);
    const bit = stat.uid === uid ? 0o100 : stat.gid === gid ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0) await fs.chmod(dir, (stat.mode & 0o7777) | bit);
  }
}

/** Gives group `gid` read/write on `root` and everything below it except the `hidden` subtrees inside it. */
export async function grantGroupWrite(root: string, gid: number, hidden: readonly string[]): Promise<void> {
  const top = path.resolve(root);
  const skipped = hidden.map((h) => path.resolve(h)).filter((h) => within(h, top));
  const pending = [top];
  let device: number | undefined;
  while (pending.length) {
    const current = pending.pop()!;
    if (skipped.some((h) => within(current, h))) continue;
    const stat = await fs.lstat(current).catch(() => undefined);
    if (!stat || stat.isSymbolicLink()) continue;
    if (device === undefined) device = stat.dev;
    else if (stat.dev !== device) continue;
    const isDir = stat.isDirectory();
    if (!isDir && !stat.isFile() && !stat.isSocket()) continue;
    if (stat.gid !== gid) await fs.lchown(current, stat.uid, gid);
    const ownerExec = (stat.mode & 0o100) !== 0 ? 0o010 : 0;
    const wanted = (stat.mode & 0o7777) | (isDir ? DIR_GROUP_BITS : FILE_GROUP_BITS | ownerExec);
    // chown clears setgid/setuid bits; re-read nothing: `wanted` is computed from the old mode.
    if (wanted !== (stat.mode & 0o7777) || stat.gid !== gid) await fs.chmod(current, wanted & (isDir ? 0o7777 : 0o1777));
    if (isDir) for (const name of await fs.readdir(current)) pending.push(path.join(current, name));
  }
}
