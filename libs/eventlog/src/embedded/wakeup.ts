/** Wakes waiting delivery loops of this process at once when something was appended or enqueued. */
export class Wakeup {
  private readonly waiters = new Set<() => void>();

  notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves on the next notify() or after `ms`, whichever comes first. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}
