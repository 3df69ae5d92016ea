'use strict';
/** A Graphile Worker runner for some of the peer's tasks, quiet, without signal handlers. */
const { run, Logger } = require('graphile-worker');
const { makeTasks } = require('./tasks');

const quiet = new Logger(() => (level, message) => {
  if (level === 'error') process.stderr.write(`graphile-worker: ${message}\n`);
});

async function startRunner({ connectionString, schema, runsDir, tasks, concurrency }) {
  const all = makeTasks({ runsDir, schema });
  const taskList = Object.fromEntries(tasks.map((name) => [name, all[name]]));
  return run({ connectionString, schema, concurrency, taskList, noHandleSignals: true, logger: quiet, pollInterval: 2000 });
}

module.exports = { startRunner };
