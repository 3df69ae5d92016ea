'use strict';
/**
 * One round of Stageflow on NATS + Postgres with each service as its own process: scheduler,
 * recovery, agent-runner, the API (whose projector writes the read models into Postgres) and
 * verifier replicas. This process only submits runs through the
 * JetStream log, watches them finish, and measures.
 */
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { connect } = require('@nats-io/transport-node');
const { jetstreamManager } = require('@nats-io/jetstream');
const { loadConfig, openInfrastructure } = require('@stageflow/runtime');
const { setupJetStream } = require('@stageflow/eventlog');
const { loadPipeline } = require('@stageflow/catalog');
const { readModelSchema } = require('@stageflow/api');
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

/**
 * Runs the phases one after the other on one deployment; before each phase, verifier replicas are
 * added up to the phase's count. Each phase's figures come only from the runs it submitted.
 */
roundMain(async (spec) => {
  const namespace = `bench${randomBytes(4).toString('hex')}`;
  const env = { ...process.env, NATS_URL: spec.natsUrl, DATABASE_URL: spec.databaseUrl, SF_NAMESPACE: namespace, SF_API_TOKENS: 'bench', SF_KEYS_DIR: path.join(spec.dir, 'keys') };
  delete env.SF_LOG_LEVEL;
  const db = new Client({ connectionString: spec.databaseUrl });
  await db.connect();
  // The API projects each namespace into its own schema (see readModelSchema in services/api).
  const schema = readModelSchema(namespace);
  // Services bind to the namespace's streams and consumers: `sf setup`'s work, done here first.
  await setupJetStream({ servers: spec.natsUrl, namespace });
  const services = [
    startService('scheduler', { env, dir: spec.dir }),
    startService('recovery', { env, dir: spec.dir }),
    startService('agent-runner', { env, dir: spec.dir, args: ['--agent', `script:${spec.agentScript}`] }),
    startService('api', { env, dir: spec.dir }),
  ];
  const verifiers = [];
  // The clients' watcher is the harness's own durable consumer: not in the topology, so created here.
  const infra = await openInfrastructure(loadConfig({ NATS_URL: spec.natsUrl, SF_NAMESPACE: namespace, STAGEFLOW_HOME: spec.dir }), { provision: true });
  const readCheckpoint = async () => {
    const r = await db.query(`select last_seq from "${schema}".projector_checkpoints where name = 'readmodels'`).catch(() => ({ rows: [] }));
    return r.rows.length ? Number(r.rows[0].last_seq) : 0;
  };
  const pgPid = serverPid('postgres');
  const natsPid = serverPid('nats-server');
  const phases = {};
  try {
    await Promise.all(services.map((s) => s.started));
    for (const phase of spec.phases) {
      while (verifiers.length < phase.verifiers) {
        verifiers.push(startService('verifier', { env, dir: spec.dir, label: `verifier-${verifiers.length + 1}` }));
        await verifiers[verifiers.length - 1].started;
      }
      const all = [...services, ...verifiers];
      const firstSeq = await infra.log.lastSequence();
      const checkpoints = [];
      let polling = true;
      const pollLoop = (async () => {
        while (polling) {
          checkpoints.push({ t: Date.now(), checkpoint: await readCheckpoint() });
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      const sources = Object.fromEntries(all.map((s) => [s.label, () => cpuSeconds(s.pid)]));
      if (natsPid) sources['nats-server (shared)'] = () => serverCpuSeconds(natsPid);
      if (pgPid) sources['postgres (shared, all backends)'] = () => serverCpuSeconds(pgPid);
      const sampler = new CpuSampler(sources);
      const pipeline = loadPipeline(phase.pipeline).pipeline;
      const { lastSubmitAt, outcomes } = await closedLoop({ infra, pipeline, runs: phase.runs, clients: phase.clients, timeoutMs: spec.timeoutMs });
      const samples = sampler.stop();
      const last = await infra.log.lastSequence();
      await waitFor(async () => (await readCheckpoint()) >= last, 'the projector to catch up');
      polling = false;
      await pollLoop;
      const messages = await infra.log.read(`${namespace}.evt.run.>`, firstSeq);
      const { verifiedTimes, handoffMs } = logFigures(messages);
      const peak = Object.fromEntries(all.map((s) => [s.label, peakRssMiB(s.pid)]));
      phases[phase.name] = {
        outcomes,
        figures: roundFigures({ verifiedTimes, handoffMs, projectionLagMs: projectionLags(messages, checkpoints), samples, peakRssMiB: peak, lastSubmitAt }),
      };
    }
    return { phases };
  } finally {
    await Promise.all([...services, ...verifiers].map((s) => s.stop()));
    await infra.close();
    await db.query(`drop schema if exists "${schema}" cascade`).catch(() => undefined);
    await db.end();
    await dropStreams(spec.natsUrl, namespace).catch(() => undefined);
  }
});
