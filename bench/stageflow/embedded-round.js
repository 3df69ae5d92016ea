'use strict';
/**
 * One round of Stageflow's embedded default: every service in this one process (startEngine, as
 * `sf run` does) on the embedded log, with its read models: a projector into the embedded PGlite
 * (its own child process, at low priority), opened here exactly as the engine's background read
 * models open it, so that the projector's committed checkpoint can be observed. Clients submit runs
 * from this process too.
 */
const path = require('node:path');
const { loadConfig } = require('@stageflow/runtime');
const { startEngine } = require('@stageflow/cli');
const { parseAgentSpec } = require('@stageflow/agent-runner');
const { openReadModelDb, Projector } = require('@stageflow/readmodels');
const { loadPipeline } = require('@stageflow/catalog');
const { roundMain, waitFor } = require('../lib/round-main');
const { CpuSampler } = require('../lib/sampler');
const { roundFigures } = require('../lib/metrics');
const { childrenOf, cpuSeconds, peakRssMiB } = require('../lib/proc');
const { logFigures, projectionLags } = require('./log-figures');
const { closedLoop } = require('./clients');

roundMain(async (spec) => {
  const config = loadConfig({ STAGEFLOW_HOME: spec.dir, PATH: process.env.PATH });
  const engine = await startEngine({ config, agent: parseAgentSpec(`script:${spec.agentScript}`), readModels: { enabled: false } });
  const before = new Set(childrenOf(process.pid));
  const opened = await openReadModelDb({ embeddedDir: path.join(config.home, 'postgres'), embedded: { niceness: 10 } });
  const projector = new Projector(opened.db, engine.infra.log, { filter: `${config.namespace}.evt.run.>`, signatures: engine.infra.runs.signatures }).start();
  const readModels = { projector, close: async () => (await projector.stop(), await opened.close()) };
  const pglitePid = childrenOf(process.pid).find((pid) => !before.has(pid));
  const pipeline = loadPipeline(spec.pipeline).pipeline;

  const checkpoints = [];
  const poll = setInterval(() => checkpoints.push({ t: Date.now(), checkpoint: readModels.projector.metrics().checkpoint }), 5);
  const sampler = new CpuSampler({
    'sf (all services)': () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1e6;
    },
    'pglite (read models)': () => (pglitePid ? cpuSeconds(pglitePid) : null),
  });
  const { lastSubmitAt, outcomes } = await closedLoop({ infra: engine.infra, pipeline, runs: spec.runs, clients: spec.clients, timeoutMs: spec.timeoutMs });
  const samples = sampler.stop();
  const last = await engine.infra.log.lastSequence();
  await waitFor(() => readModels.projector.metrics().checkpoint >= last, 'the projector to catch up');
  clearInterval(poll);
  const messages = await engine.infra.log.read('sf.evt.run.>', 0);
  const { verifiedTimes, handoffMs } = logFigures(messages);
  const peak = { 'sf (all services)': process.resourceUsage().maxRSS / 1024, 'pglite (read models)': pglitePid ? peakRssMiB(pglitePid) : null };
  await readModels.close();
  await engine.stop();
  const figures = roundFigures({ verifiedTimes, handoffMs, projectionLagMs: projectionLags(messages, checkpoints), samples, peakRssMiB: peak, lastSubmitAt });
  return { phases: { [spec.phase]: { outcomes, figures } } };
});
