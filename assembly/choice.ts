// Where a hot key's message goes, and where a run of null keys goes: everything about the
// choice of a partition other than Kafka's. A hot key is relocated whole to one partition with
// room for it (place), else split over the least loaded of its allowed partitions (choose),
// one choice per run of its messages (hotPartition); a key's allowed partitions are its normal
// partition and then steps of spreadStep(lane B) through the others. See docs/design.md,
// "Relocating before splitting", "Which keys leave" and "Spreading". The state of a key's choice
// lives in its tracked-key entry (E_WIDTH, E_STEP, E_SIZE, E_SCAN_*, E_CURRENT, E_RUN_LEFT,
// E_MOVE_AFTER); whether a key leaves an overloaded partition is leaves().

import { loadWeight } from "./decay";
import { geti, seti, getf, setf } from "./hotkeys";
import { tf, loadAt, penaltyAt, adjustAt, loadTotal, loadWithPenalty } from "./topics";
import { fingerprint, laneB } from "./fingerprint";
import { param, intParam } from "./params";
import {
  E_WIDTH, E_STEP, E_SIZE, E_SCAN_INDEX, E_SCAN_AT, E_CURRENT, E_RUN_LEFT, E_MOVE_AFTER, E_RETURN, T_STICKY, T_STICKY_LEFT,
  T_LOAD_GROWTH, T_INVERSE,
  CHAIN_NONE, CHAIN_OPEN, CHAIN_PINNED, ORDER_NONE, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED,
  P_SPREAD_FACTOR, P_MAX_SPREAD, P_STICKY_RUN, P_WIDEN_ABOVE, P_HOT_RUN, P_RELOCATE,
} from "./abi";

// ---- options (choiceConfigure) ----
let spreadFactor: f64; // a hot key starts with ceil(spreadFactor * share * n) partitions
let widenAbove: f64;   // and gets one more while its best is above this many means: 1 + balanceTolerance
let maxSpread: i32;    // at most this many (0: all)
let stickyRun: i32;    // messages per sticky run of undecided (null) keys
let hotRun: i32;       // messages of a hot key sent to one choice before choosing again
let relocateOn: bool;  // a hot key that fits whole in one partition moves there whole instead of splitting (relocate)
let homeAbove: f64;    // a key away from its own partition goes back once that is within this many means with it,
                       // and a split key widens above it: 1 + balanceTolerance / 2

// @ts-ignore: decorator
@inline const SCAN_WINDOW: i32 = 8;
/** 2^(1/8): the load clock's weight grows by this in an eighth of its half-life. */
// @ts-ignore: decorator
@inline const LOOK_AGAIN: f64 = 1.0905077326652577;

/** Sets the options from the parameters (params.ts). */
export function choiceConfigure(): void {
  spreadFactor = param(P_SPREAD_FACTOR); widenAbove = param(P_WIDEN_ABOVE); maxSpread = intParam(P_MAX_SPREAD);
  stickyRun = intParam(P_STICKY_RUN); hotRun = intParam(P_HOT_RUN); relocateOn = intParam(P_RELOCATE) != 0;
  homeAbove = 1 + (widenAbove - 1) * 0.5;
}

// @ts-ignore: decorator
@inline
function gcd(a: i32, b: i32): i32 {
  while (b != 0) { const t = a % b; a = b; b = t; }
  return a;
}

/**
 * The stride of a key's allowed partitions among n: 1 + (laneB & 0x7fffffff) % (n - 1),
 * moved up (cyclically in 1..n-1) to the first value coprime with n, so that base,
 * base + step, base + 2 step, ... (mod n) visits every partition once.
 */
export function spreadStep(b: u32, n: i32): i32 {
  if (n <= 2) return 1;
  let step = 1 + <i32>((b & 0x7fffffff) % <u32>(n - 1));
  while (gcd(step, n) != 1) step = step == n - 1 ? 1 : step + 1;
  return step;
}

/** The stride of the allowed partitions of the key at ptr among n (see spreadStep). */
export function spreadStepAt(ptr: usize, length: i32, n: i32): i32 {
  fingerprint(ptr, length < 0 ? 0 : length);
  return spreadStep(laneB, n);
}

/** How many partitions a key with `count` of `topicTotal` may use among n. */
// @ts-ignore: decorator
@inline
function widthFor(count: f64, topicTotal: f64, n: i32): i32 {
  let w = <i32>Math.ceil(spreadFactor * count * <f64>n / topicTotal);
  if (w < 2) w = 2;
  const most = maxSpread > 0 && maxSpread < n ? maxSpread : n;
  return w > most ? most : w;
}

/**
 * The least loaded (load + penalty) of the allowed partitions of hot entry e. When even the
 * least loaded of them is above the topic's mean by more than half the tolerance (homeAbove),
 * the key is given one more partition (the next in its sequence): widths grow only as far as
 * balance needs, and shrink only when the key cools. Half, so that the partitions a split key
 * fills stay clear of the line at which a partition sheds its own keys (relief).
 */
function choose(topic: i32, e: i32, count: f64, topicTotal: f64, n: i32, base: i32, b: u32, fair: f64): i32 {
  if (geti(E_SIZE, e) != n) {
    seti(E_SIZE, e, n);
    seti(E_STEP, e, spreadStep(b, n));
    seti(E_WIDTH, e, 1);
    seti(E_SCAN_INDEX, e, 0);
    seti(E_SCAN_AT, e, base);
  }
  let width = geti(E_WIDTH, e);
  // widthFor(count) > width, without a division on every message.
  if (width < 2 || spreadFactor * count * <f64>n > <f64>width * topicTotal) {
    const wanted = widthFor(count, topicTotal, n);
    if (wanted > width) { width = wanted; seti(E_WIDTH, e, width); }
  }
  const step = geti(E_STEP, e);
  // A narrow set is scanned whole; a wide one through a window of SCAN_WINDOW consecutive
  // members that moves on by a window each time: the least loaded of several choices
  // balances almost as well as the least loaded of all (the power of d choices), at a fixed cost.
  let index = 0;
  let p = base;
  let scan = width;
  if (width > SCAN_WINDOW) {
    index = geti(E_SCAN_INDEX, e);
    p = geti(E_SCAN_AT, e);
    if (index >= width) { index = 0; p = base; }
    scan = SCAN_WINDOW;
  }
  let best = p;
  let bestLoad = loadWithPenalty(topic, p, fair);
  for (let i = 1; i < scan; i++) {
    p += step;
    if (p >= n) p -= n;
    if (++index == width) { index = 0; p = base; }
    const l = loadWithPenalty(topic, p, fair);
    if (l < bestLoad) { bestLoad = l; best = p; }
  }
  if (width > SCAN_WINDOW) {
    // The next window starts after this one.
    p += step;
    if (p >= n) p -= n;
    if (++index == width) { index = 0; p = base; }
    seti(E_SCAN_INDEX, e, index);
    seti(E_SCAN_AT, e, p);
  }
  const most = maxSpread > 0 && maxSpread < n ? maxSpread : n;
  if (bestLoad > fair * homeAbove && width < most) {
    // Even the best is overloaded: admit the next partition of the key's sequence.
    seti(E_WIDTH, e, width + 1);
    p = <i32>((<i64>base + <i64>width * <i64>step) % <i64>n);
    const l = loadWithPenalty(topic, p, fair);
    if (l < bestLoad) best = p;
  }
  return best;
}

/** A partition's load as relocation sees it: placed, adjusted (adjustAt in topics.ts), plus penalty. */
// @ts-ignore: decorator
@inline
function fixedLoad(topic: i32, p: i32, fair: f64): f64 {
  return load<f64>(loadAt(topic, p)) + <f64>load<f32>(adjustAt(topic, p)) + load<f64>(penaltyAt(topic, p)) * fair;
}

// @ts-ignore: decorator
@inline
function adjust(topic: i32, p: i32, v: f64): void {
  const at = adjustAt(topic, p);
  store<f32>(at, load<f32>(at) + <f32>v);
}

/**
 * A relocated key of `rate` moves whole from partition `from` to `to`: the rate it takes along
 * is counted out of one and into the other until the decayed loads show it (fixedLoad), and
 * it stays at least a load half-life (E_MOVE_AFTER).
 */
// @ts-ignore: decorator
@inline
function moveWhole(topic: i32, e: i32, from: i32, to: i32, rate: f64): i32 {
  setf(E_MOVE_AFTER, e, loadWeight * 2);
  adjust(topic, from, -rate);
  adjust(topic, to, rate);
  seti(E_CURRENT, e, to);
  return to;
}

// ---- relief: which key leaves an overloaded partition (docs/design.md, "Which keys leave") ----

/** An overload starts a key's clock once it is this many deviations of its load's noise (times the trust) above the line. */
// @ts-ignore: decorator
@inline const SIGNIFICANT: f64 = 1.5;
/** No key leaves for relief before its topic's loads hold this share (times the trust) of their steady number of messages. */
// @ts-ignore: decorator
@inline const SETTLED: f64 = 0.75;
/** The fit is trusted fully where the noise of a partition's load is at most this share of balanceTolerance ... */
// @ts-ignore: decorator
@inline const TRUSTED: f64 = 0.2;
/** ... and not at all from this share on. */
// @ts-ignore: decorator
@inline const UNTRUSTED: f64 = 0.4;

/** leaves() kinds of keys: tracked but not hot, at its first placement since it turned hot, hot for longer. */
// @ts-ignore: decorator
@inline export const CANDIDATE: i32 = 0;
// @ts-ignore: decorator
@inline export const JUST_HOT: i32 = 1;
// @ts-ignore: decorator
@inline export const HOT: i32 = 2;

/** Set by measure(): how well the topic's loads measure an excess over balanceTolerance, in [0, 1]. */
let trust: f64 = 0;
/** Set by measure(): the topic's recent messages on the load clock over their steady number. */
let settled: f64 = 1;
/** Set by leaves() when it says yes: the load clock's weight at which the key was due to leave. */
let due: f64 = 0;
/** Set by leaves() when the key's partition is above the line and its excess is measured: its next message looks again. */
let recheck: bool = false;

/**
 * The noise of the topic's loads. A partition's decayed load counts its messages with weights
 * that fade over the load horizon: with n partitions and the horizon holding S messages at its
 * steady state (g / (g - 1) for a growth g per message; for a time horizon, the messages it
 * holds now), a partition's load is off by about sqrt(n / 2S) of the mean (1.2% at 4
 * partitions with the default 10,000-message horizon, 6% at 100). The trust is 1 where that is
 * at most TRUSTED of balanceTolerance, 0 from UNTRUSTED of it on (the excess cannot be measured:
 * the keys leave as they did before there was a fit), linear between.
 */
function measure(topic: i32): void {
  const g = load<f64>(tf(topic, T_LOAD_GROWTH));
  const recent = loadTotal(topic) / loadWeight;
  const steady = g > 1 ? g / (g - 1) : recent;
  settled = steady > 0 ? recent / steady : 1;
  const noise = Math.sqrt(1 / (2 * steady * load<f64>(tf(topic, T_INVERSE)))) / (widenAbove - 1);
  const t = (UNTRUSTED - noise) / (UNTRUSTED - TRUSTED);
  trust = t > 1 ? 1 : t > 0 ? t : 0;
}

/**
 * Whether the key of hot or tracked entry e, of `rate` (load clock), at home on partition p,
 * leaves it now to relieve it (docs/design.md, "Which keys leave"). p is overloaded when its
 * load as relocation sees it (fixedLoad) is above the mean `fair` by more than
 * balanceTolerance; its excess is what is above that line. Each key of p acts on its own
 * messages and cannot see the others' rates, so the choice is made by time: the key whose rate
 * fits the excess best goes first, and once it has gone the partition is no longer overloaded
 * for the others (its rate is counted out at once). A key of rate r fits an excess x by
 * q = max(r, x) / min(r, x) (a larger key overshoots, a smaller one leaves the rest to others)
 * and leaves once the overload has lasted log2(q / 2) load half-lives (at once for q <= 2),
 * blended by the trust (measure) with the rule for an excess that cannot be measured: at once,
 * unless hot for a while already and bigger than twice the excess (then a half-life).
 *
 * The clock (E_MOVE_AFTER < 0: minus the load weight when it started) starts on an excess more
 * than SIGNIFICANT deviations of the load's noise (times the trust) above the line, so that
 * noise does not move keys out of a partition within the tolerance. It stops once the excess is
 * down to one deviation (times the trust) less (1 - trust)^2 of the tolerance: at the line where
 * the trust is full, at the mean where there is none (an overload hovering around the line is
 * not forgotten at its first dip). A hot key held after a move does not leave, nor does a key of
 * a topic whose loads have not settled yet (SETTLED, times the trust: a new topic's loads are
 * noise) unless it is bigger than a fair share.
 *
 * `kind`: CANDIDATE (tracked, not hot: turnsHot), JUST_HOT (its first placement since it
 * turned hot: it starts over if its partition is back within the line) or HOT; `reliefs`: a
 * candidate's share over reliefThreshold (it may leave from 1 - trust / 2 of it on: half of it
 * where the trust is full, all of it where there is none).
 */
export function leaves(topic: i32, e: i32, p: i32, rate: f64, fair: f64, kind: i32, reliefs: f64): bool {
  const excess = fixedLoad(topic, p, fair) - fair * widenAbove;
  const since = getf(E_MOVE_AFTER, e);
  if (excess <= 0) {
    // A key just hot whose partition is back within the line starts over.
    if (since < 0 && kind == JUST_HOT) setf(E_MOVE_AFTER, e, 0);
    if (since >= 0 || kind == JUST_HOT) return false;
  }
  measure(topic);
  // The load's noise: its variance is the sum of its messages' squared weights, from w times
  // the load early on (every weight near the current w) to w / 2 times it at the steady state.
  let c = 1 - settled * 0.5;
  if (c < 0.5) c = 0.5;
  const noise = trust * Math.sqrt(load<f64>(loadAt(topic, p)) * loadWeight * c);
  if (since < 0) {
    const band = 1 - trust;
    if (excess <= noise - band * band * (widenAbove - 1) * fair) {
      setf(E_MOVE_AFTER, e, 0);
      return false;
    }
  }
  if (excess <= 0 || (kind == HOT && since >= 0 && loadWeight < since)) return false;
  recheck = trust > 0;
  if ((settled < SETTLED * trust && rate <= fair) || reliefs < 1 - trust * 0.5) return false;
  let start = -since;
  if (since >= 0) {
    if (excess <= SIGNIFICANT * noise) return false;
    start = loadWeight;
    setf(E_MOVE_AFTER, e, -start);
  }
  let need = (rate > excess ? rate / excess : excess / rate) * 0.5 * trust;
  if (kind == HOT && rate > excess * 2) need += 2 * (1 - trust);
  if (trust < 1 && need * (1 - trust) > 2) need = 2 / (1 - trust);
  due = start * need;
  return loadWeight >= due;
}

/**
 * The least loaded of the first SCAN_WINDOW partitions of hot entry e's sequence (from base),
 * other than `skip`, with room for `rate` more: settled load + rate within `bound`. -1: none.
 */
function roomFor(topic: i32, e: i32, n: i32, base: i32, skip: i32, rate: f64, bound: f64, fair: f64): i32 {
  const step = geti(E_STEP, e);
  const scan = n < SCAN_WINDOW ? n : SCAN_WINDOW;
  let best = -1;
  let bestLoad = bound - rate;
  let p = base;
  for (let i = 0; i < scan; i++) {
    if (p != skip) {
      const l = fixedLoad(topic, p, fair);
      if (l < bestLoad || (best < 0 && l == bestLoad)) { bestLoad = l; best = p; }
    }
    p += step;
    if (p >= n) p -= n;
  }
  return best;
}
/**
 * The partition of hot entry e's next run, with relocation on. A key stays on its own
 * partition until it is the key that relieves it (leaves); then it is relocated whole, width 1,
 * to a partition with room (settled load + the key's rate within balanceTolerance of the mean),
 * and is split (choose) only when none has room. After a move it stays at least a
 * load half-life (E_MOVE_AFTER), so that noise in the loads does not bounce it; a relocated key
 * goes back to its own partition once that has room for it again, and a split key that fits
 * whole again is relocated on its least loaded partition. A consumer
 * group keeps a relocated key's order with one handoff per move; a split key's partitions may
 * be on several consumers, which cannot order it without waiting for each other.
 */
function place(topic: i32, e: i32, count: f64, topicTotal: f64, topicLoad: f64, n: i32, base: i32, b: u32, fair: f64): i32 {
  const width = geti(E_WIDTH, e);
  let fresh = false;
  // A split key stays split through a change of partition count (choose() starts it over).
  if (geti(E_SIZE, e) != n && width < 2) {
    // Just hot (its anchor went to base: width 0) or a relocated key after a change of
    // partition count: decided afresh, from where it is if that partition still exists.
    if (width == 0 || geti(E_CURRENT, e) >= n) seti(E_CURRENT, e, base);
    seti(E_SIZE, e, n);
    seti(E_STEP, e, spreadStep(b, n));
    seti(E_SCAN_INDEX, e, 0);
    seti(E_SCAN_AT, e, base);
    seti(E_WIDTH, e, 1);
    fresh = true;
  }
  const bound = fair * widenAbove;
  if (width < 2) {
    const here = geti(E_CURRENT, e);
    const hereLoad = fixedLoad(topic, here, fair);
    const after = getf(E_MOVE_AFTER, e);
    const rate = count * topicLoad / topicTotal;
    // Leaving brings the partition nearer the mean, whatever the noise.
    const large = (hereLoad - bound) * 2 > rate;
    if (here == base) {
      if (!fresh && after >= 0 && loadWeight < after) {
        // Back home less than a load half-life ago: it stays, unless it outgrew its partition.
        if (!large || hereLoad <= bound) return here;
      } else {
        // At home: it leaves when it is the key that relieves its partition (leaves), for the
        // least loaded of the first partitions of its sequence with room for all of it.
        if (!leaves(topic, e, here, rate, fair, fresh ? JUST_HOT : HOT, f64.MAX_VALUE)) return here;
        const q = roomFor(topic, e, n, base, here, rate, bound, fair);
        if (q >= 0) return moveWhole(topic, e, here, q, rate);
        // No room anywhere: unless its partition is over the line by more than half its rate, a
        // key just hot stays (its clock runs), and so does one within a fair share that has
        // waited less than as long again (times the trust); the others are split.
        if (!large && (fresh || (rate <= fair && loadWeight < due * (1 + trust)))) return here;
      }
      setf(E_MOVE_AFTER, e, loadWeight * 2);
      adjust(topic, here, -rate);
      return choose(topic, e, count, topicTotal, n, base, b, fair); // from width 1: at least 2
    }
    if (hereLoad <= bound) {
      // The overload passed once the partition is back at the mean (a band, not a line, so
      // that an overload hovering around the bound is not forgotten at its first dip).
      if (after < 0 && hereLoad <= fair) setf(E_MOVE_AFTER, e, 0);
      if (after >= 0 && loadWeight >= after) {
        // Away from its own partition: back there once that has room for the whole key within
        // half the tolerance (the margin keeps it from flapping), so that a key stays away only
        // while balance needs it.
        if (fixedLoad(topic, base, fair) + rate <= fair * homeAbove) {
          return moveWhole(topic, e, here, base, rate);
        }
        // Looked again after an eighth of a load half-life.
        setf(E_MOVE_AFTER, e, loadWeight * LOOK_AGAIN);
      }
      return here;
    }
    // Overloaded where it was moved to. Unless the overload is more than half the key's rate,
    // it acts only on an overload that lasted a whole load half-life (E_MOVE_AFTER < 0: minus
    // the load weight when it started): a shorter one is noise, or one the split keys' choices
    // pay back. Within a load half-life of its last move it does not move again; it is split if
    // it outgrew its partition.
    const moved = !fresh && after >= 0 && loadWeight < after;
    if (moved && !large) return here;
    if (!fresh && !large) {
      if (after >= 0) {
        setf(E_MOVE_AFTER, e, -loadWeight);
        return here;
      }
      if (loadWeight < -after * 2) return here;
    }
    const q = moved ? -1 : roomFor(topic, e, n, base, here, rate, bound, fair);
    if (q >= 0) return moveWhole(topic, e, here, q, rate);
    if (fresh && !large) {
      // No room anywhere yet: it stays and waits to see whether the overload lasts.
      setf(E_MOVE_AFTER, e, -loadWeight);
      return here;
    }
    // Too big for any partition now: split.
    setf(E_MOVE_AFTER, e, loadWeight * 2);
    adjust(topic, here, -rate);
    return choose(topic, e, count, topicTotal, n, base, b, fair); // from width 1: at least 2
  }
  if (loadWeight >= getf(E_MOVE_AFTER, e)) {
    // Whole on one of the first partitions of its sequence (not only those it uses now): room
    // there for all of its rate; what it has there now, split, is not in the fixed load.
    const rate = count * topicLoad / topicTotal;
    const q = roomFor(topic, e, n, base, -1, rate, bound, fair);
    if (q >= 0) {
      seti(E_WIDTH, e, 1);
      seti(E_CURRENT, e, q);
      setf(E_MOVE_AFTER, e, loadWeight * 2);
      adjust(topic, q, rate);
      return q;
    }
    // Looked again after an eighth of a load half-life: the scan is not made every run.
    setf(E_MOVE_AFTER, e, loadWeight * LOOK_AGAIN);
  }
  return choose(topic, e, count, topicTotal, n, base, b, fair);
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

/**
 * The partition of a message of hot entry e (normal partition `base`, lane B `b`), `count`
 * its recent messages of `topicTotal` (key clock), `topicLoad` the topic's load and `loadFair`
 * its mean per partition (load clock): the run's partition while its run lasts (at most
 * hotRun messages), else the next run's (place, or choose with relocate: false).
 */
// @ts-ignore: decorator
@inline
export function hotPartition(topic: i32, e: i32, count: f64, topicTotal: f64, topicLoad: f64, n: i32, base: i32, b: u32, loadFair: f64): i32 {
  const left = geti(E_RUN_LEFT, e);
  if (left > 0 && geti(E_SIZE, e) == n) {
    seti(E_RUN_LEFT, e, left - 1);
    return geti(E_CURRENT, e);
  }
  let run = runLength(loadFair);
  let result: i32;
  if (relocateOn) {
    recheck = false;
    result = place(topic, e, count, topicTotal, topicLoad, n, base, b, loadFair);
    // At home on a partition above the line: its next message looks again (as a tracked key's
    // does), so that small keys are not judged less often than big ones.
    if (recheck && result == base && geti(E_WIDTH, e) == 1) run = 1;
    // A split key's run, counted as movable where it lands once for all its messages.
    if (geti(E_WIDTH, e) != 1) adjust(topic, result, -loadWeight * <f64>run);
  } else {
    result = choose(topic, e, count, topicTotal, n, base, b, loadFair);
  }
  seti(E_CURRENT, e, result);
  seti(E_RUN_LEFT, e, run - 1);
  return result;
}

/**
 * The order marker of a message of hot entry e that hotPartition() sent to `result` (its own
 * partition `base`). With relocation on, a key is marked only while its messages leave its
 * own partition: none while it stays there (its order is the partition's); an anchor as it
 * first leaves (that message still goes to `base`: the caller puts it there, and the rest of
 * the run goes where it was placed), which opens its chain; moved (relocated whole) or spread
 * (split) while away; a return when a relocated key comes back whole, which closes the chain.
 * With relocation off, a hot key's chain is open from the message after which it turned hot
 * (hotTurned) and every message is spread.
 */
export function hotOrder(e: i32, base: i32, result: i32): i32 {
  if (!relocateOn) return ORDER_SPREAD;
  const whole = geti(E_WIDTH, e) == 1;
  if (geti(E_RETURN, e) != CHAIN_OPEN) {
    if (whole && result == base) return ORDER_NONE;
    seti(E_RETURN, e, CHAIN_OPEN);
    return ORDER_ANCHOR;
  }
  if (!whole) return ORDER_SPREAD;
  if (result != base) return ORDER_MOVED;
  seti(E_RETURN, e, CHAIN_NONE);
  return ORDER_RETURN;
}

/**
 * The order marker of the message at which entry e turned hot (it goes to its own partition):
 * with relocation off, an anchor that opens its chain at once; with it on, none (hotOrder
 * opens the chain when the key first leaves).
 */
export function hotTurned(e: i32): i32 {
  if (relocateOn || geti(E_RETURN, e) == CHAIN_PINNED) return ORDER_NONE;
  seti(E_RETURN, e, CHAIN_OPEN);
  return ORDER_ANCHOR;
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
