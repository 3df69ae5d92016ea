/** Where a worker loop takes its next item from. */
export interface Source<D> {
  /** The next item, or undefined when none came within the source's wait (the loop asks again). */
  next(): Promise<D | undefined>;
  /** Makes pending and future next() calls resolve undefined promptly (the loops are stopping). */
  interrupt(): void;
}

export interface Loops {
  /** Stops asking for items and resolves once every item being processed is done. */
  stop(): Promise<void>;
}

const RETRY_AFTER_ERROR_MS = 250;

/**
 * Runs `concurrency` loops that each take one item and process it before taking the next, so at
 * most `concurrency` items are in flight. A failing next() (e.g. a lost connection) is retried.
 */
export function runLoops<D>(concurrency: number, source: Source<D>, process: (item: D) => Promise<void>): Loops {
  let stopping = false;
  const loop = async (): Promise<void> => {
    while (!stopping) {
      let item: D | undefined;
      try {
        item = await source.next();
      } catch {
        if (!stopping) await sleep(RETRY_AFTER_ERROR_MS);
        continue;
      }
      if (item !== undefined) await process(item);
    }
  };
  const running = Array.from({ length: Math.max(1, concurrency) }, loop);
  return {
    async stop() {
      stopping = true;
      source.interrupt();
      await Promise.all(running);
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
