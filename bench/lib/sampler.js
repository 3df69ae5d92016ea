'use strict';
/**
 * Samples cumulative CPU seconds of named processes at a fixed period, with timestamps, so the
 * CPU spent inside a window fixed only after the round (the steady state) can be read back.
 */
class CpuSampler {
  /** @param sources {Record<string, () => number | null>} cumulative CPU seconds per process name */
  constructor(sources, periodMs = 200) {
    this.sources = sources;
    this.samples = [];
    this.take();
    this.timer = setInterval(() => this.take(), periodMs);
  }

  take() {
    const cpu = {};
    for (const [name, read] of Object.entries(this.sources)) cpu[name] = read();
    this.samples.push({ t: Date.now(), cpu });
  }

  stop() {
    clearInterval(this.timer);
    this.take();
    return this.samples;
  }
}

module.exports = { CpuSampler };
