// The clocks of the core that count time: that of time horizons (options horizon /
// loadHorizon as { ms }: counts fade with time rather than per message, so the core's weights
// grow by the time passed, every few milliseconds) and the run clock of split keys' timed
// runs (splitRunMs: assembly/choice.ts), both ticked off the per-message path.

import type { Core } from '../core/wasm';
import type { Horizon } from '../core/options';
import { RUN_TICKS } from '../core/abi';

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

/**
 * Starts the run clock: RUN_TICKS ticks per `splitRunMs`, so a split key's run lasts between
 * (RUN_TICKS - 1) / RUN_TICKS of it and all of it; unref'd. A burst the clock cannot follow
 * (a synchronous loop) ends runs by their message bound instead.
 */
export function startRunClock(core: Core, splitRunMs: number): NodeJS.Timeout {
  const timer = setInterval(() => core.exports.runTick(), Math.max(1, splitRunMs / RUN_TICKS));
  timer.unref();
  return timer;
}
