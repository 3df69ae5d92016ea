'use strict';
/** Stageflow services as their own OS processes (`node bin/sf.js serve <name>`), as in production. */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('../lib/machine');

const SF = path.join(ROOT, 'bin', 'sf.js');

/**
 * Starts a service and waits for its "service started" line. A process that exits before that is
 * started again (up to `retries` times): other engineers rebuild dist/ on this shared machine, and a
 * process that starts mid-rebuild dies on a missing module.
 */
function startService(name, options, retries = 3) {
  const first = spawnService(name, options);
  const attempt = (service, left) =>
    service.started.then(
      () => service,
      (err) => {
        if (left === 0 || !service.exited()) throw err;
        return new Promise((r) => setTimeout(r, 3000)).then(() => attempt(spawnService(name, options), left - 1));
      },
    );
  const started = attempt(first, retries);
  const handle = { label: first.label, pid: first.pid, started: started.then(() => undefined), stop: () => started.then((s) => s.stop(), () => first.stop()) };
  started.then((s) => (handle.pid = s.pid), () => undefined);
  return handle;
}

function spawnService(name, { env, dir, args = [], label = name }) {
  const home = path.join(dir, label);
  fs.mkdirSync(home, { recursive: true });
  const child = spawn(process.execPath, [SF, 'serve', name, '--port', '0', ...args], {
    cwd: home,
    env: { ...env, STAGEFLOW_HOME: home },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start within 60 s:\n${tail}`)), 60_000);
    child.stderr.on('data', (chunk) => {
      tail = (tail + chunk.toString()).slice(-4000);
      if (tail.includes('"msg":"service started"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}:\n${tail}`));
    });
  });
  return {
    label,
    pid: child.pid,
    started,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

module.exports = { startService };
