'use strict';
/**
 * A closed loop of concurrent clients: each submits a run (a RunRequested decision appended
 * through the run store, as `sf run` does), waits until the log says it finished, and submits the
 * next, until `runs` runs were submitted.
 */
const { randomBytes } = require('node:crypto');
const { decideRequest } = require('@stageflow/domain');

const FINISHED = new Set(['RunSucceeded', 'RunFailed', 'RunCancelled', 'RunErrored']);

/** Watches run events on one durable subscription and resolves waiters when their run finishes. */
async function watchRuns(infra, durable) {
  const waiters = new Map();
  const finished = new Map();
  const subscription = await infra.log.subscribe(durable, `${infra.config.namespace}.evt.run.>`, async (message) => {
    for (const event of message.data?.events ?? []) {
      if (!FINISHED.has(event.type)) continue;
      finished.set(event.runId, event.type);
      waiters.get(event.runId)?.(event.type);
      waiters.delete(event.runId);
    }
  });
  return {
    finished: (runId) =>
      new Promise((resolve) => {
        if (finished.has(runId)) resolve(finished.get(runId));
        else waiters.set(runId, resolve);
      }),
    stop: () => subscription.stop(),
  };
}

async function closedLoop({ infra, pipeline, runs, clients, timeoutMs }) {
  const watcher = await watchRuns(infra, `bench-watch-${randomBytes(3).toString('hex')}`);
  let submitted = 0;
  let lastSubmitAt = Date.now();
  const outcomes = {};
  const deadline = Date.now() + timeoutMs;
  const client = async () => {
    while (submitted < runs) {
      submitted++;
      const runId = `run_${Date.now().toString(36).padStart(9, '0')}${randomBytes(4).toString('hex')}`;
      const now = new Date().toISOString();
      await infra.runs.execute(runId, (state) =>
        decideRequest({ type: 'RequestRun', runId, pipeline, input: {}, checkout: { kind: 'fresh' }, labels: { bench: '1' }, requestedBy: 'bench', now }, state),
      );
      lastSubmitAt = Date.now();
      const outcome = await Promise.race([watcher.finished(runId), new Promise((r) => setTimeout(() => r('Timeout'), Math.max(0, deadline - Date.now())).unref())]);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      if (outcome === 'Timeout') throw new Error(`run ${runId} did not finish before the round's deadline`);
    }
  };
  try {
    await Promise.all(Array.from({ length: clients }, client));
  } finally {
    await watcher.stop();
  }
  return { lastSubmitAt, outcomes };
}

module.exports = { closedLoop };
