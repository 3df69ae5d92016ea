'use strict';
/**
 * One round of Stageflow on NATS + Postgres with each service as its own process: scheduler,
 * recovery, agent-runner, `verifiers` verifier replicas and (unless `api: false`) the API, whose
 * projector writes the read models into Postgres. This process only submits runs through the
 * JetStream log, watches them finish, and measures.
 */
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { connect } = require('@nats-io/transport-node');
const { jetstreamManager } = require('@nats-io/jetstream');
const { loadConfig, openInfrastructure } = require('@stageflow/runtime');
const { loadPipeline } = require('@stageflow/catalog');
const { roundMain, waitFor } = require('../lib/round-main');
const { CpuSampler } = require('../lib/sampler');
const { roundFigures } = require('../lib/metrics');
const { cpuSeconds, peakRssMiB, serverCpuSeconds, serverPid } = require('../lib/proc');
const { logFigures, projectionLags } = require('./log-figures');
const { closedLoop } = require('./clients');
const { startService } = require('./services');

async function dropStreams(natsUrl, namespace) {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const info of jsm.streams.list()) {
      if (info.config.name.toLowerCase().includes(namespace)) await jsm.streams.delete(info.config.name);
    }
  } finally {
    await nc.close();
  }
}

roundMain(async (spec) => {
  const namespace = `bench${randomBytes(4).toString('hex')}`;
  const env = { ...process.env, NATS_URL: spec.natsUrl, DATABASE_URL: spec.databaseUrl, SF_NAMESPACE: namespace, SF_API_TOKENS: 'bench' };
  delete env.SF_LOG_LEVEL;
  const db = new Client({ connectionString: spec.databaseUrl });
  await db.connect();
  // The API keeps its tables and checkpoint in schema `stageflow` whatever the namespace: start empty.
  await db.query('drop schema if exists stageflow cascade');
  const services = [
    startService('scheduler', { env, dir: spec.dir }),
    startService('recovery', { env, dir: spec.dir }),
    startService('agent-runner', { env, dir: spec.dir, args: ['--agent', `script:${spec.agentScript}`] }),
    ...Array.from({ length: spec.verifiers }, (_, i) => startService('verifier', { env, dir: spec.dir, label: spec.verifiers > 1 ? `verifier-${i + 1}` : 'verifier' })),
    ...(spec.api === false ? [] : [startService('api', { env, dir: spec.dir })]),
  ];
  const infra = await openInfrastructure(loadConfig({ NATS_URL: spec.natsUrl, SF_NAMESPACE: namespace, STAGEFLOW_HOME: spec.dir }));
  try {
    await Promise.all(services.map((s) => s.started));
    const pipeline = loadPipeline(spec.pipeline).pipeline;
    const readCheckpoint = async () => {
      const r = await db.query("select last_seq from stageflow.projector_checkpoints where name = 'readmodels'").catch(() => ({ rows: [] }));
      return r.rows.length ? Number(r.rows[0].last_seq) : 0;
    };
    const checkpoints = [];
    let polling = spec.api !== false;
    const pollLoop = (async () => {
      while (polling) {
        checkpoints.push({ t: Date.now(), checkpoint: await readCheckpoint() });
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const pgPid = serverPid('postgres');
    const natsPid = serverPid('nats-server');
    const sources = Object.fromEntries(services.map((s) => [s.label, () => cpuSeconds(s.pid)]));
    if (natsPid) sources['nats-server (shared)'] = () => serverCpuSeconds(natsPid);
    if (pgPid) sources['postgres (shared, all backends)'] = () => serverCpuSeconds(pgPid);
    const sampler = new CpuSampler(sources);
    const { lastSubmitAt, outcomes } = await closedLoop({ infra, pipeline, runs: spec.runs, clients: spec.clients, timeoutMs: spec.timeoutMs });
    const samples = sampler.stop();
    if (spec.api !== false) {
      const last = await infra.log.lastSequence();
      await waitFor(async () => (await readCheckpoint()) >= last, 'the projector to catch up');
    }
    polling = false;
    await pollLoop;
    const messages = await infra.log.read(`${namespace}.evt.run.>`, 0);
    const { verifiedTimes, handoffMs } = logFigures(messages);
    const peak = Object.fromEntries(services.map((s) => [s.label, peakRssMiB(s.pid)]));
    return {
      outcomes,
      figures: roundFigures({ verifiedTimes, handoffMs, projectionLagMs: spec.api === false ? null : projectionLags(messages, checkpoints), samples, peakRssMiB: peak, lastSubmitAt }),
    };
  } finally {
    await Promise.all(services.map((s) => s.stop()));
    await infra.close();
    await db.query('drop schema if exists stageflow cascade').catch(() => undefined);
    await db.end();
    await dropStreams(spec.natsUrl, namespace).catch(() => undefined);
  }
});
