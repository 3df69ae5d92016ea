'use strict';
/** The machine and the versions a result was measured with. */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');

const ROOT = path.resolve(__dirname, '..', '..');

function tryExec(cmd, args) {
  try {
    return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function memTotalGiB() {
  const m = /MemTotal:\s+(\d+) kB/.exec(fs.readFileSync('/proc/meminfo', 'utf8'));
  return m ? Math.round((Number(m[1]) / 1024 / 1024) * 10) / 10 : os.totalmem() / 2 ** 30;
}

async function postgresVersion(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('show server_version')).rows[0].server_version;
  } finally {
    await client.end();
  }
}

async function describeMachine(databaseUrl) {
  const dirty = tryExec('git', ['status', '--porcelain', '--untracked-files=no']);
  return {
    cores: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memory_gib: memTotalGiB(),
    kernel: os.release(),
    load_average_at_start: os.loadavg().map((l) => Math.round(l * 100) / 100),
    versions: {
      node: process.version,
      nats_server: (tryExec('nats-server', ['--version']) ?? 'unknown').replace(/^nats-server:\s*/, ''),
      postgres: await postgresVersion(databaseUrl),
      graphile_worker: require('graphile-worker/package.json').version,
      stageflow_commit: `${tryExec('git', ['rev-parse', '--short', 'HEAD']) ?? 'unknown'}${dirty ? ' (with uncommitted changes)' : ''}`,
    },
  };
}

module.exports = { describeMachine, ROOT };
