'use strict';
/** Percentiles (nearest rank) and the median/min/max summary every figure is reported with. */

function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Median with min and max over rounds; null entries (not measured) are left out. */
function overRounds(values) {
  const present = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  if (present.length === 0) return null;
  return { median: percentile(present, 50), min: Math.min(...present), max: Math.max(...present), n: present.length };
}

module.exports = { percentile, overRounds };
