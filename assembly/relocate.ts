// Relocation (relocate: true): a hot key moves whole to one partition with room for it
// (place), and is split (spread.ts choose) only when none has room; a moved key goes back
// once its own partition has room again. See docs/design.md, "Relocating before splitting".
// Its state lives in its tracked-key entry (E_CURRENT, E_MOVE_AFTER, and the sequence of
// spread.ts: E_SIZE, E_STEP, E_SCAN_*, E_WIDTH); whether it leaves its own partition is relief.ts.

import { loadWeight } from "./decay";
import { geti, seti, getf, setf } from "./hotkeys";
import { fixedLoad, adjust } from "./topics";
import { widenAbove, homeAbove } from "./choice-options";
import { spreadStep, choose, SCAN_WINDOW } from "./spread";
import { leaves, trust, due, JUST_HOT, HOT } from "./relief";
import { E_WIDTH, E_STEP, E_SIZE, E_SCAN_INDEX, E_SCAN_AT, E_CURRENT, E_MOVE_AFTER } from "./abi";

/** 2^(1/8): the load clock's weight grows by this in an eighth of its half-life. */
// @ts-ignore: decorator
@inline const LOOK_AGAIN: f64 = 1.0905077326652577;

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
export function place(topic: i32, e: i32, count: f64, topicTotal: f64, topicLoad: f64, n: i32, base: i32, b: u32, fair: f64): i32 {
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
