/** Signals for a whole process group (the command's `detached` leader and everything it forked). */

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while any member of the group exists (zombies not yet reaped included). */
export function groupExists(pgid: number): boolean {
  return signalGroup(pgid, 0);
}

/**
 * SIGTERM to the group, then SIGKILL once `graceMs` has passed with any member left.
 * Resolves when the group is gone or SIGKILL has been sent.
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(25, graceMs)));
    if (!groupExists(pgid)) return;
  }
  signalGroup(pgid, 'SIGKILL');
}
