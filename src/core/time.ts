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
