// The Dispatcher's (dispatch.ts) handler calls under way per topic-partition, and the waits for
// some partitions to have none: a consumer lets the calls of partitions that leave end before it
// commits them (Dispatcher.callsOver()).

export class PartitionCalls {
  /**
   * Calls under way per topic-partition. An entry stays at 0 rather than going: deleting and
   * setting a key again on every call fills the Map with deleted entries that cost rehashes.
   */
  private readonly running = new Map<string, number>();
  /** Called whenever the last call of a partition ends (idle() waits with them). */
  private readonly watchers = new Set<() => void>();

  /** A call of `tp` starts. */
  begin(tp: string): void {
    this.running.set(tp, (this.running.get(tp) ?? 0) + 1);
  }

  /** A call of `tp` ends. */
  end(tp: string): void {
    const n = Math.max(0, (this.running.get(tp) ?? 1) - 1);
    this.running.set(tp, n);
    if (n === 0 && this.watchers.size > 0) for (const watch of this.watchers) watch();
  }

  /** Whether a call of one of `tps` is under way. */
  busy(tps: readonly string[]): boolean {
    return tps.some((tp) => (this.running.get(tp) ?? 0) > 0);
  }

  /** Resolves once no call of `tps` is under way, or after `timeoutMs`. */
  idle(tps: readonly string[], timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const watch = (): void => {
        if (this.busy(tps)) return;
        clearTimeout(timer);
        this.watchers.delete(watch);
        resolve();
      };
      const timer = setTimeout(() => {
        this.watchers.delete(watch);
        resolve();
      }, timeoutMs);
      this.watchers.add(watch);
    });
  }
}
