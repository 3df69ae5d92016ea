'use strict';
/**
 * Reading a round's results off the event log: every figure comes from the times the log stored
 * the messages (`StoredMessage.time`), never from the services' own clocks or logs.
 */

const STAGES = ['plan', 'build', 'ship'];

/** @param messages StoredMessage[] of `<ns>.evt.run.>`, in sequence order */
function logFigures(messages) {
  const verifiedTimes = [];
  const succeededAt = new Map(); // `${runId}/${stageId}` → ms
  const startedAt = new Map();
  for (const message of messages) {
    const t = Date.parse(message.time);
    for (const event of message.data?.events ?? []) {
      if (event.type === 'AttemptVerified' && event.disposition === 'passed') verifiedTimes.push(t);
      if (event.type === 'StageSucceeded') succeededAt.set(`${event.runId}/${event.stageId}`, t);
      if (event.type === 'StageAttemptStarted' && event.attempt === 1) startedAt.set(`${event.runId}/${event.stageId}`, t);
    }
  }
  const handoffMs = [];
  for (const [key, t] of succeededAt) {
    const [runId, stageId] = key.split('/');
    const next = STAGES[STAGES.indexOf(stageId) + 1];
    if (!next) continue;
    const started = startedAt.get(`${runId}/${next}`);
    if (started !== undefined) handoffMs.push(started - t);
  }
  return { verifiedTimes, handoffMs };
}

/**
 * Append → visible lags: for each message, the first checkpoint sample at or past its sequence,
 * minus the time the log stored it. Resolution is the sampling period.
 * @param samples [{ t, checkpoint }] in time order
 */
function projectionLags(messages, samples) {
  const lags = [];
  let i = 0;
  for (const message of messages) {
    while (i < samples.length && samples[i].checkpoint < message.seq) i++;
    if (i === samples.length) break;
    lags.push(Math.max(0, samples[i].t - Date.parse(message.time)));
  }
  return lags;
}

module.exports = { logFigures, projectionLags, STAGES };
