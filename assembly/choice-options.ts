// The options of the choice of a partition for hot keys and runs of null keys, read from the
// parameters (params.ts) once by choiceConfigure() and used by choice.ts, spread.ts,
// relocate.ts, relief.ts and order.ts.

import { param, intParam } from "./params";
import { P_SPREAD_FACTOR, P_MAX_SPREAD, P_STICKY_RUN, P_WIDEN_ABOVE, P_HOT_RUN, P_RELOCATE, P_SPLIT_RUN } from "./abi";

export let spreadFactor: f64; // a hot key starts with ceil(spreadFactor * share * n) partitions
export let widenAbove: f64;   // and gets one more while its best is above this many means: 1 + balanceTolerance
export let maxSpread: i32;    // at most this many (0: all)
export let stickyRun: i32;    // messages per sticky run of undecided (null) keys
export let hotRun: i32;       // messages of a hot key sent to one choice before choosing again
export let splitRunOn: bool; // a split key's runs are timed (splitRunMs, choice.ts), not hotRun's
export let relocateOn: bool;  // a hot key that fits whole in one partition moves there whole instead of splitting (relocate)
export let homeAbove: f64;    // a key away from its own partition goes back once that is within this many means with it,
                              // and a split key widens above it: 1 + balanceTolerance / 2

/** Sets the options from the parameters (params.ts). */
export function choiceConfigure(): void {
  spreadFactor = param(P_SPREAD_FACTOR); widenAbove = param(P_WIDEN_ABOVE); maxSpread = intParam(P_MAX_SPREAD);
  stickyRun = intParam(P_STICKY_RUN); hotRun = intParam(P_HOT_RUN); relocateOn = intParam(P_RELOCATE) != 0;
  splitRunOn = intParam(P_SPLIT_RUN) != 0;
  homeAbove = 1 + (widenAbove - 1) * 0.5;
}
