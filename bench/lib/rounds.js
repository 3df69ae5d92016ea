'use strict';
/** Starting one round in its own process and reading back its result. */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function runRound(script, spec) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-bench-'));
  const out = path.join(dir, 'result.json');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, JSON.stringify({ ...spec, dir: path.join(dir, 'work') }), out], { stdio: ['ignore', 'inherit', 'inherit'] });
    const kill = setTimeout(() => child.kill('SIGKILL'), spec.timeoutMs + 120_000);
    child.once('exit', (code, signal) => {
      clearTimeout(kill);
      let result;
      try {
        result = JSON.parse(fs.readFileSync(out, 'utf8'));
      } catch {
        result = { ok: false, error: `round exited with ${code ?? signal} and wrote no result` };
      }
      fs.rmSync(dir, { recursive: true, force: true });
      resolve(result);
    });
  });
}

module.exports = { runRound };
