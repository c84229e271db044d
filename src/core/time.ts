// Waiting, for the paths that poll or retry (never the per-message path).

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves when `promise` settles or after `ms`, whichever comes first (no timer is left behind). */
export function within(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

/**
 * A clock that stands still while something is held: a consumer's resequencer reads it, so that
 * while the client is held for the handler (nothing read meanwhile), a held message's wait for
 * its predecessor does not run.
 */
export class HeldTime {
  /** Since when it is held (0: it is not), and for how long it was before (ms). */
  private since = 0;
  private total = 0;

  get holding(): boolean {
    return this.since > 0;
  }

  hold(): void {
    if (this.since === 0) this.since = Date.now();
  }

  release(): void {
    if (this.since === 0) return;
    this.total += Date.now() - this.since;
    this.since = 0;
  }

  now(): number {
    return (this.since > 0 ? this.since : Date.now()) - this.total;
  }
}
