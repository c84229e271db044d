// Where a hot key's message goes, and where a run of null keys goes: everything about the
// choice of a partition other than Kafka's. A hot key's messages go in runs (hotPartition),
// each run where relocation puts it (relocate.ts: whole on one partition with room for it),
// or, with relocate: false or where none has room, split over the least loaded of its allowed
// partitions (spread.ts); whether a key leaves an overloaded partition is relief.ts, its order
// markers order.ts, the options choice-options.ts. See docs/design.md, "Relocating before
// splitting", "Which keys leave" and "Spreading".

import { loadWeight } from "./decay";
import { geti, seti } from "./hotkeys";
import { tf, adjust, loadTotal, loadWithPenalty } from "./topics";
import { widenAbove, hotRun, relocateOn, stickyRun, splitRunOn } from "./choice-options";
import { choose } from "./spread";
import { place } from "./relocate";
import { recheck, clearRecheck } from "./relief";
import { E_WIDTH, E_SIZE, E_CURRENT, E_RUN_LEFT, T_STICKY, T_STICKY_LEFT, RUN_TICKS } from "./abi";

// E_RUN_LEFT holds the messages a run has left in its low RUN_LEFT_BITS bits and, for a timed
// run, the run clock's tick it started at (modulo 2^(32 - RUN_LEFT_BITS)) above them: 0 still
// means "choose again" (admission.ts clears it so).
// @ts-ignore: decorator
@inline const RUN_LEFT_BITS: i32 = 20;
// @ts-ignore: decorator
@inline const RUN_LEFT_MASK: i32 = (1 << RUN_LEFT_BITS) - 1;
// @ts-ignore: decorator
@inline const TICK_MASK: i32 = (1 << (32 - RUN_LEFT_BITS)) - 1;

/** The run clock: runTick() advances it RUN_TICKS times per splitRunMs (src/partitioner/clock.ts). */
let runClock: i32 = 0;
/**
 * Runs are timed once the clock has ticked: a stream decided before it ever does (a synchronous
 * loop, a simulation) has no time to go by, and keeps hotRun's runs.
 */
let runClockTicks: bool = false;

/** One tick of the run clock. */
export function runTick(): void {
  runClock = (runClock + 1) & TICK_MASK;
  runClockTicks = true;
}

/**
 * Messages in a hot key's next run: hotRun, but no more than moves a partition by half the
 * balance tolerance (a run lands on one partition at once), and at least 1.
 */
// @ts-ignore: decorator
@inline
function runLength(loadFair: f64): i32 {
  const most = 0.5 * (widenAbove - 1) * loadFair / loadWeight;
  return most >= <f64>hotRun ? hotRun : most < 1 ? 1 : <i32>most;
}

/** Whether entry e's runs are timed: a split key's, with splitRunMs, once the run clock ticks. */
// @ts-ignore: decorator
@inline
function timedRun(e: i32): bool {
  return splitRunOn && runClockTicks && geti(E_WIDTH, e) != 1;
}

/**
 * Messages at most in a split key's timed run: a quarter of its partition's recent fair share
 * (a run lands on one partition: a stream faster than the run clock can follow ends it by count).
 */
// @ts-ignore: decorator
@inline
function timedRunMost(loadFair: f64): i32 {
  const most = 0.25 * loadFair / loadWeight;
  return most >= <f64>RUN_LEFT_MASK ? RUN_LEFT_MASK : most < 1 ? 1 : <i32>most;
}

/**
 * The partition of a message of hot entry e (normal partition `base`, lane B `b`), `count`
 * its recent messages of `topicTotal` (key clock), `topicLoad` the topic's load and `loadFair`
 * its mean per partition (load clock): the run's partition while its run lasts (at most
 * hotRun messages; a split key's, with splitRunMs, RUN_TICKS ticks of the run clock), else the
 * next run's (place, or choose with relocate: false).
 */
// @ts-ignore: decorator
@inline
export function hotPartition(topic: i32, e: i32, count: f64, topicTotal: f64, topicLoad: f64, n: i32, base: i32, b: u32, loadFair: f64): i32 {
  const held = geti(E_RUN_LEFT, e);
  if ((held & RUN_LEFT_MASK) > 0 && geti(E_SIZE, e) == n) {
    const timed = timedRun(e);
    if (!timed || ((runClock - (held >>> RUN_LEFT_BITS)) & TICK_MASK) < RUN_TICKS) {
      seti(E_RUN_LEFT, e, held - 1);
      const current = geti(E_CURRENT, e);
      // A timed run's messages count as movable one by one (their number is not known ahead).
      if (timed && relocateOn) adjust(topic, current, -loadWeight);
      return current;
    }
  }
  let run = runLength(loadFair);
  let result: i32;
  if (relocateOn) {
    clearRecheck();
    result = place(topic, e, count, topicTotal, topicLoad, n, base, b, loadFair);
    // At home on a partition above the line: its next message looks again (as a tracked key's
    // does), so that small keys are not judged less often than big ones.
    if (recheck && result == base && geti(E_WIDTH, e) == 1) run = 1;
  } else {
    result = choose(topic, e, count, topicTotal, n, base, b, loadFair);
  }
  seti(E_CURRENT, e, result);
  if (timedRun(e)) {
    if (relocateOn) adjust(topic, result, -loadWeight);
    seti(E_RUN_LEFT, e, (runClock << RUN_LEFT_BITS) | (timedRunMost(loadFair) - 1));
    return result;
  }
  // A split key's run, counted as movable where it lands once for all its messages.
  if (relocateOn && geti(E_WIDTH, e) != 1) adjust(topic, result, -loadWeight * <f64>run);
  seti(E_RUN_LEFT, e, run - 1);
  return result;
}

/** The next sticky run of undecided keys starts on the least loaded partition (KIP-794's idea). */
export function sticky(topic: i32, n: i32): i32 {
  const left = tf(topic, T_STICKY_LEFT);
  const at = tf(topic, T_STICKY);
  let remaining = load<i32>(left);
  if (remaining > 0 && load<i32>(at) < n) {
    store<i32>(left, remaining - 1);
    return load<i32>(at);
  }
  const fair = loadTotal(topic) / <f64>n;
  let best = 0;
  let bestLoad = f64.MAX_VALUE;
  for (let p = 0; p < n; p++) {
    const l = loadWithPenalty(topic, p, fair);
    if (l < bestLoad) { bestLoad = l; best = p; }
  }
  store<i32>(at, best);
  store<i32>(left, stickyRun - 1);
  return best;
}
