'use strict';
/**
 * Every round runs in its own process so that its CPU and peak RSS are its own: the harness
 * passes the round's spec as JSON in argv[2]; the round writes its result as JSON to argv[3].
 */
const fs = require('node:fs');

function roundMain(runRound) {
  const spec = JSON.parse(process.argv[2]);
  const out = process.argv[3];
  runRound(spec)
    .then((result) => {
      fs.writeFileSync(out, JSON.stringify({ ok: true, ...result }));
      process.exit(0);
    })
    .catch((err) => {
      fs.writeFileSync(out, JSON.stringify({ ok: false, error: err && err.stack ? err.stack : String(err) }));
      process.exit(1);
    });
}

/** Polls `read` every `periodMs` until it returns true, or throws after `timeoutMs`. */
async function waitFor(read, what, timeoutMs = 60_000, periodMs = 20) {
  const deadline = Date.now() + timeoutMs;
  while (!(await read())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, periodMs));
  }
}

module.exports = { roundMain, waitFor };
