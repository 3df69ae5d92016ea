'use strict';
/**
 * CPU time and peak RSS of processes from /proc (Linux). CPU is utime+stime in clock ticks
 * (USER_HZ = 100 on Linux); peak RSS is VmHWM. `withReapedChildren` adds cutime+cstime, the CPU
 * of children the process already waited for (how Postgres backends that exited are counted).
 */
const fs = require('node:fs');

const TICKS_PER_SECOND = 100;

function statFields(pid) {
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at the last ')'.
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds used so far by `pid` (and, optionally, its reaped children); null when it is gone. */
function cpuSeconds(pid, withReapedChildren = false) {
  try {
    const f = statFields(pid);
    // After ')': state=0 ppid=1 ... utime=11 stime=12 cutime=13 cstime=14
    let ticks = Number(f[11]) + Number(f[12]);
    if (withReapedChildren) ticks += Number(f[13]) + Number(f[14]);
    return ticks / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Peak resident set size in MiB (VmHWM), or null when the process is gone. */
function peakRssMiB(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

function childrenOf(pid) {
  const out = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(statFields(entry)[1]) === pid) out.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function pidsByName(name) {
  const out = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) out.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * CPU seconds of a whole server: its main process (with reaped children) plus its live children.
 * Used for the shared Postgres (postmaster + backends) and nats-server.
 */
function serverCpuSeconds(mainPid) {
  let total = cpuSeconds(mainPid, true) ?? 0;
  for (const child of childrenOf(mainPid)) total += cpuSeconds(child) ?? 0;
  return total;
}

/** The oldest process with this name whose parent is not of the same name (the server's main process). */
function serverPid(name) {
  const pids = pidsByName(name);
  const main = pids.find((pid) => {
    try {
      return !pids.includes(Number(statFields(pid)[1]));
    } catch {
      return false;
    }
  });
  return main ?? null;
}

module.exports = { cpuSeconds, peakRssMiB, childrenOf, serverCpuSeconds, serverPid };
