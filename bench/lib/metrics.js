'use strict';
/**
 * One round's figures from what it recorded, computed the same way for Stageflow and the peer.
 *
 * Steady state: the window starts at the first CPU sample after the first WARMUP_FRACTION of
 * verified attempts and ends at the last sample before the last run was submitted (after that the
 * closed loop drains and concurrency falls). Throughput and CPU are both taken over that window.
 * A phase too short for that window (a --quick run) uses the whole phase and says so (`steady`).
 */
const { percentile } = require('./stats');

const WARMUP_FRACTION = 0.1;

function round(value, digits = 2) {
  return value === null || value === undefined ? null : Math.round(value * 10 ** digits) / 10 ** digits;
}

function steadyWindow(verifiedTimes, samples, lastSubmitAt) {
  const sorted = [...verifiedTimes].sort((a, b) => a - b);
  const warm = sorted[Math.max(0, Math.ceil(sorted.length * WARMUP_FRACTION) - 1)];
  const start = samples.find((s) => s.t >= warm);
  const end = [...samples].reverse().find((s) => s.t <= lastSubmitAt);
  if (start && end && end.t - start.t >= 1000) return { start, end, steady: true };
  // Too few runs for a steady state (a --quick run): the whole phase, flagged.
  const first = samples[0];
  const lastSample = samples[samples.length - 1];
  return lastSample.t > first.t ? { start: first, end: lastSample, steady: false } : null;
}

/**
 * @param input.verifiedTimes ms timestamps of verified (passed) attempts
 * @param input.handoffMs latencies from a stage's verified success to its successor's start
 * @param input.projectionLagMs lags from append to visible in Postgres, or null (not measured)
 * @param input.samples CpuSampler samples
 * @param input.peakRssMiB peak RSS per process
 * @param input.lastSubmitAt ms timestamp of the last run submitted
 */
function roundFigures(input) {
  const window = steadyWindow(input.verifiedTimes, input.samples, input.lastSubmitAt);
  const inWindow = window ? input.verifiedTimes.filter((t) => (window.steady ? t > window.start.t : t >= window.start.t) && t <= window.end.t).length : 0;
  const seconds = window ? (window.end.t - window.start.t) / 1000 : null;
  const cpuPer1000 = {};
  if (window && inWindow > 0) {
    for (const name of Object.keys(window.end.cpu)) {
      const a = window.start.cpu[name];
      const b = window.end.cpu[name];
      cpuPer1000[name] = a === null || b === null || a === undefined ? null : round(((b - a) / inWindow) * 1000, 2);
    }
  }
  const lags = input.projectionLagMs;
  return {
    verified_attempts: input.verifiedTimes.length,
    steady_window_s: round(seconds, 2),
    steady: window ? window.steady : false,
    steady_attempts: inWindow,
    attempts_per_s: seconds ? round(inWindow / seconds, 2) : null,
    handoff_p50_ms: round(percentile(input.handoffMs, 50), 1),
    handoff_p99_ms: round(percentile(input.handoffMs, 99), 1),
    handoffs: input.handoffMs.length,
    projection_lag_p50_ms: lags ? round(percentile(lags, 50), 1) : null,
    projection_lag_p99_ms: lags ? round(percentile(lags, 99), 1) : null,
    cpu_s_per_1000_attempts: cpuPer1000,
    peak_rss_mib: Object.fromEntries(Object.entries(input.peakRssMiB).map(([k, v]) => [k, round(v, 1)])),
  };
}

module.exports = { roundFigures };
