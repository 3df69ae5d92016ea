'use strict';
/** A peer verifier replica as its own process: a runner of the `verify` task only, concurrency 1. */
const { startRunner } = require('./runner');

const spec = JSON.parse(process.argv[2]);
startRunner({ ...spec, tasks: ['verify'], concurrency: 1 })
  .then((runner) => {
    process.stdout.write('ready\n');
    process.once('SIGTERM', () => runner.stop().then(() => process.exit(0)));
  })
  .catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
