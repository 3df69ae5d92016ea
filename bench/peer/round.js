'use strict';
/**
 * One round of the peer, Graphile Worker on the same Postgres (schema `bench_peer_gw`, results in
 * `bench_peer`). The `stage` runner (concurrency 4, as Stageflow's agent-runner) runs in this
 * process; `verify` runs in this process too (concurrency 1, as one Stageflow verifier) or, in the
 * scaling phases, in `verifiers` processes of its own. Clients submit runs from this process.
 */
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { Client } = require('pg');
const { makeWorkerUtils } = require('graphile-worker');
const { roundMain } = require('../lib/round-main');
const { CpuSampler } = require('../lib/sampler');
const { roundFigures } = require('../lib/metrics');
const { cpuSeconds, peakRssMiB, serverCpuSeconds, serverPid } = require('../lib/proc');
const { startRunner } = require('./runner');
const { STAGES } = require('./tasks');

const SCHEMA = 'bench_peer_gw';

function startVerifyWorker(options, label) {
  const child = spawn(process.execPath, [path.join(__dirname, 'verify-worker.js'), JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code}`)));
  });
  return {
    label,
    pid: child.pid,
    ready,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function closedLoop({ utils, listener, runs, clients, command, timeoutMs }) {
  const waiters = new Map();
  listener.on('notification', (n) => {
    waiters.get(n.payload)?.();
    waiters.delete(n.payload);
  });
  let submitted = 0;
  let lastSubmitAt = Date.now();
  const ids = [];
  const deadline = Date.now() + timeoutMs;
  const client = async () => {
    while (submitted < runs) {
      submitted++;
      const runId = `run_${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
      ids.push(runId);
      const done = new Promise((resolve) => waiters.set(runId, resolve));
      await utils.addJob('stage', { runId, stage: STAGES[0], command });
      lastSubmitAt = Date.now();
      const timedOut = await Promise.race([done.then(() => false), new Promise((r) => setTimeout(() => r(true), Math.max(0, deadline - Date.now())).unref())]);
      if (timedOut) throw new Error(`peer run ${runId} did not finish before the round's deadline`);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  listener.removeAllListeners('notification');
  return { lastSubmitAt, ids };
}

async function figuresOf(db, ids) {
  const rows = (await db.query('select run_id, stage, extract(epoch from started_at) * 1000 as s, extract(epoch from verified_at) * 1000 as v from bench_peer.verifications where run_id = any($1)', [ids])).rows;
  const byKey = new Map(rows.map((r) => [`${r.run_id}/${r.stage}`, { started: Number(r.s), verified: Number(r.v) }]));
  const handoffMs = [];
  for (const r of rows) {
    const next = STAGES[STAGES.indexOf(r.stage) + 1];
    const successor = next && byKey.get(`${r.run_id}/${next}`);
    if (successor) handoffMs.push(successor.started - Number(r.v));
  }
  return { verifiedTimes: rows.map((r) => Number(r.v)), handoffMs };
}

roundMain(async (spec) => {
  const db = new Client({ connectionString: spec.databaseUrl });
  await db.connect();
  await db.query(`drop schema if exists ${SCHEMA} cascade; drop schema if exists bench_peer cascade; create schema bench_peer;
    create table bench_peer.verifications (run_id text not null, stage text not null, started_at timestamptz not null, verified_at timestamptz not null, checks jsonb not null, primary key (run_id, stage))`);
  const options = { connectionString: spec.databaseUrl, schema: SCHEMA, runsDir: path.join(spec.dir, 'runs') };
  const stageRunner = await startRunner({ ...options, tasks: ['stage'], concurrency: 4 });
  const utils = await makeWorkerUtils({ connectionString: spec.databaseUrl, schema: SCHEMA });
  const listener = new Client({ connectionString: spec.databaseUrl });
  await listener.connect();
  await listener.query('listen bench_peer_done');
  const pgPid = serverPid('postgres');
  const workers = [];
  let verifyRunner;
  const phases = {};
  try {
    for (const phase of spec.phases) {
      if (phase.verifiers === 0 && !verifyRunner) verifyRunner = await startRunner({ ...options, tasks: ['verify'], concurrency: 1 });
      if (phase.verifiers > 0 && verifyRunner) {
        await verifyRunner.stop();
        verifyRunner = undefined;
      }
      while (workers.length < phase.verifiers) {
        workers.push(startVerifyWorker(options, `verify-worker-${workers.length + 1}`));
        await workers[workers.length - 1].ready;
      }
      const sources = {
        'peer (stage runner, clients)': () => {
          const u = process.cpuUsage();
          return (u.user + u.system) / 1e6;
        },
        ...Object.fromEntries(workers.map((w) => [w.label, () => cpuSeconds(w.pid)])),
      };
      if (phase.verifiers === 0) sources['peer (all tasks, clients)'] = sources['peer (stage runner, clients)'];
      if (phase.verifiers === 0) delete sources['peer (stage runner, clients)'];
      if (pgPid) sources['postgres (shared, all backends)'] = () => serverCpuSeconds(pgPid);
      const sampler = new CpuSampler(sources);
      const { lastSubmitAt, ids } = await closedLoop({ utils, listener, runs: phase.runs, clients: phase.clients, command: phase.command, timeoutMs: spec.timeoutMs });
      const samples = sampler.stop();
      const { verifiedTimes, handoffMs } = await figuresOf(db, ids);
      const peak = { [phase.verifiers === 0 ? 'peer (all tasks, clients)' : 'peer (stage runner, clients)']: process.resourceUsage().maxRSS / 1024 };
      for (const w of workers) peak[w.label] = peakRssMiB(w.pid);
      phases[phase.name] = { outcomes: { RunSucceeded: ids.length }, figures: roundFigures({ verifiedTimes, handoffMs, projectionLagMs: null, samples, peakRssMiB: peak, lastSubmitAt }) };
    }
    return { phases };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await verifyRunner?.stop();
    await stageRunner.stop();
    await utils.release();
    await listener.end();
    await db.query(`drop schema if exists ${SCHEMA} cascade; drop schema if exists bench_peer cascade`).catch(() => undefined);
    await db.end();
  }
});
