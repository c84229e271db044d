// The clock of time horizons (options horizon / loadHorizon as { ms }): counts fade with time
// rather than per message, so the core's weights grow by the time passed, every few
// milliseconds, off the per-message path.

import type { Core } from '../core/wasm';
import type { Horizon } from '../core/options';

/** The half-life of a horizon in ms: Infinity for one counted in messages (the clock leaves it alone). */
function halfLife(h: Horizon): number {
  return 'ms' in h ? h.ms : Infinity;
}

/**
 * Starts growing `core`'s key and load weights by 2^(elapsed / half-life) every 1/32 of the
 * shorter half-life (between 1 ms and 1 s); unref'd, so it keeps no process alive.
 */
export function startClock(core: Core, keys: Horizon, loads: Horizon): NodeJS.Timeout {
  const keyHalfLife = halfLife(keys);
  const loadHalfLife = halfLife(loads);
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    core.exports.tick(Math.pow(2, (now - last) / keyHalfLife), Math.pow(2, (now - last) / loadHalfLife));
    last = now;
  }, Math.max(1, Math.min(1000, Math.min(keyHalfLife, loadHalfLife) / 32)));
  timer.unref();
  return timer;
}
