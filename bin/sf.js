#!/usr/bin/env node
'use strict';
require('reflect-metadata');
require('@stageflow/cli/dist/main').main(process.argv).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`sf: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
