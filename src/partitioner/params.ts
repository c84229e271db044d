// The options as the WebAssembly core reads them: configure() (assembly/configure.ts) reads
// one f64 per option from its parameter region (P_* in assembly/abi.ts), written here once,
// before the first decision.

import type { ResolvedOptions, Horizon } from '../core/options';
import {
  P_SKETCH_WIDTH, P_SKETCH_DEPTH, P_ENTRIES, P_TOPICS, P_PARTITIONS, P_GROWTH, P_LOAD_GROWTH, P_HOT, P_COOL,
  P_ADMIT, P_MIN_HOT, P_WARMUP, P_SPREAD_FACTOR, P_MAX_SPREAD, P_SPREAD, P_STICKY_RUN, P_WIDEN_ABOVE, P_RELIEF,
  P_SAMPLING, P_HOT_RUN, P_RELOCATE, P_ASK_ON_HOT, P_SPLIT_RUN,
} from '../core/abi';

/** Admission to exact tracking happens at this fraction of the lowest hot line. */
const ADMIT_OF_HOT = 0.5;

/** The growth of a count's weight per message: 2^(1 / messages), or 1 for a time horizon (the clock grows it: clock.ts). */
function perMessage(h: Horizon): number {
  return 'messages' in h ? Math.pow(2, 1 / h.messages) : 1;
}

/** Writes options `o` into `params`, the core's f64 parameter region (paramsPtr(), PARAMS_SIZE bytes). */
export function writeParams(params: Float64Array, o: ResolvedOptions): void {
  const set = (at: number, value: number): void => {
    params[at >> 3] = value;
  };
  set(P_SKETCH_WIDTH, o.sketch.width);
  set(P_SKETCH_DEPTH, o.sketch.depth);
  set(P_ENTRIES, o.maxTrackedKeys);
  set(P_TOPICS, o.maxTopics);
  set(P_PARTITIONS, o.maxPartitions);
  set(P_GROWTH, perMessage(o.horizon));
  set(P_LOAD_GROWTH, perMessage(o.loadHorizon));
  set(P_HOT, o.hotThreshold);
  set(P_COOL, o.coolThreshold);
  set(P_ADMIT, ADMIT_OF_HOT * Math.min(o.hotThreshold, o.reliefThreshold || Infinity));
  set(P_MIN_HOT, o.minHotMessages);
  set(P_WARMUP, o.warmupMessages);
  set(P_SPREAD_FACTOR, o.spreadFactor);
  set(P_MAX_SPREAD, o.maxSpread);
  set(P_SPREAD, o.spread ? 1 : 0);
  set(P_STICKY_RUN, o.stickyRun);
  set(P_WIDEN_ABOVE, 1 + o.balanceTolerance);
  set(P_RELIEF, o.reliefThreshold);
  set(P_SAMPLING, o.sketch.sampling);
  set(P_HOT_RUN, o.hotRun);
  set(P_RELOCATE, o.relocate ? 1 : 0);
  set(P_ASK_ON_HOT, o.spreadable ? 1 : 0);
  set(P_SPLIT_RUN, o.splitRunMs > 0 ? 1 : 0);
}
