// Per topic slot (the TS side maps topic names to slots): a record of totals and sticky-run
// state, and per partition a decayed load, an external penalty and a relocation adjustment;
// what happens to them when a slot is reset or resized, and when the clocks move (tick,
// renormalise).

import { arenaAlloc, arenaSize } from "./memory";
import { sketchScale, TINY } from "./sketch";
import { RENORMALISE_AT, advanceSketchBy, restartSketch, growthFor } from "./decay";
import { capacity, geti, remove, getCount, setCount, getf, setf } from "./hotkeys";
import { emit } from "./events";
import {
  TOPIC_SHIFT, T_TOTAL, T_LOAD_TOTAL, T_INVERSE, T_SIZE, T_STICKY, T_GENERATION, T_STICKY_LEFT,
  T_MESSAGES, T_SPREAD_MESSAGES, T_MOVED_MESSAGES, T_WEIGHT, T_LOAD_WEIGHT, T_SKETCH_TOTAL, T_GROWTH, T_LOAD_GROWTH, T_PAGE,
  E_STATE, E_TOPIC, E_MOVE_AFTER, STATE_FREE, STATE_HOT, EVENT_COOLED,
} from "./abi";

export let maxTopics: i32 = 0;
export let maxPartitions: i32 = 0;
/** One record of 1 << TOPIC_SHIFT bytes per topic slot (one cache line per message), fields T_* (abi.ts). */
export let tRecords: usize = 0;
// A slot's page (at T_PAGE in its record), carved out when the slot is first given to a topic,
// so memory follows the topics that got state: per partition up to maxPartitions,
// - f64: the decayed messages placed (load clock);
// - f64: the external penalty, in fair shares;
// - f32, load clock: what relocation adds to a partition's placed load to judge its room
//   (fixedLoad, below). Minus the split keys' messages placed there: they go wherever
//   there is room, so they leave room to a key that needs a partition whole. Plus the rate of
//   the keys moved in, minus that of the keys moved out, that the decayed load does not show
//   yet: a key of rate r moving in at weight w adds r w-units once its traffic there is at its
//   steady state; stored as is, the amount fades as the weight grows, exactly as the missing
//   part of that load does. So several keys do not move into one partition on the same room,
//   nor keys leave a partition just relieved. The loads stay the decayed messages actually placed.

/** The arena bytes of one slot's page. */
export function topicPageBytes(partitions: i32): usize {
  return arenaSize(<usize>partitions * 20);
}

/** Carves out the records of `topics` slots of up to `partitions` partitions; once, from configure(). Pages come with use (topicReset). */
export function topicsConfigure(topics: i32, partitions: i32): void {
  maxTopics = topics;
  maxPartitions = partitions;
  const t = <usize>topics;
  tRecords = arenaAlloc(t << TOPIC_SHIFT);
  for (let i = 0; i < topics; i++) {
    store<f64>(tf(i, T_WEIGHT), 1);
    store<f64>(tf(i, T_LOAD_WEIGHT), 1);
    setGrowth(i, 1);
  }
}

/** The address of field T_* of a slot's record. */
// @ts-ignore: decorator
@inline export function tf(topic: i32, field: usize): usize { return tRecords + (<usize>topic << TOPIC_SHIFT) + field; }
// @ts-ignore: decorator
@inline function pageOf(topic: i32): usize { return load<usize>(tf(topic, T_PAGE)); }
/** Partition p's decayed load (f64). */
// @ts-ignore: decorator
@inline
export function loadAt(topic: i32, p: i32): usize {
  return pageOf(topic) + (<usize>p << 3);
}
/** Partition p's external penalty (f64). */
// @ts-ignore: decorator
@inline
export function penaltyAt(topic: i32, p: i32): usize {
  return pageOf(topic) + ((<usize>maxPartitions + p) << 3);
}
/** Partition p's relocation adjustment (f32). */
// @ts-ignore: decorator
@inline
export function adjustAt(topic: i32, p: i32): usize {
  return pageOf(topic) + (<usize>maxPartitions << 4) + (<usize>p << 2);
}
/** A slot's decayed message count (key clock). */
// @ts-ignore: decorator
@inline
export function total(topic: i32): f64 {
  return load<f64>(tf(topic, T_TOTAL));
}
/** A slot's decayed message count (load clock). */
// @ts-ignore: decorator
@inline
export function loadTotal(topic: i32): f64 {
  return load<f64>(tf(topic, T_LOAD_TOTAL));
}
/** A partition's load plus its penalty, `fair` being the topic's mean load. */
// @ts-ignore: decorator
@inline
export function loadWithPenalty(topic: i32, p: i32, fair: f64): f64 {
  return load<f64>(loadAt(topic, p)) + load<f64>(penaltyAt(topic, p)) * fair;
}
/** A partition's load as relocation sees it: placed, adjusted (its page, above), plus penalty. */
// @ts-ignore: decorator
@inline
export function fixedLoad(topic: i32, p: i32, fair: f64): f64 {
  return load<f64>(loadAt(topic, p)) + <f64>load<f32>(adjustAt(topic, p)) + load<f64>(penaltyAt(topic, p)) * fair;
}
/** Adds `v` to partition p's relocation adjustment. */
// @ts-ignore: decorator
@inline
export function adjust(topic: i32, p: i32, v: f64): void {
  const at = adjustAt(topic, p);
  store<f32>(at, load<f32>(at) + <f32>v);
}

/** A slot's clocks' growth per message for `n` partitions (decay.ts growthFor). */
function setGrowth(topic: i32, n: i32): void {
  store<f64>(tf(topic, T_GROWTH), growthFor(n, false));
  store<f64>(tf(topic, T_LOAD_GROWTH), growthFor(n, true));
}

/** A slot has `n` partitions now: its size, its clocks' growth and 1 / n. */
function setSize(topic: i32, n: i32): void {
  store<i32>(tf(topic, T_SIZE), n);
  setGrowth(topic, n);
  store<f64>(tf(topic, T_INVERSE), 1.0 / <f64>n);
}

/** Forgets a topic slot's history and gives it `n` partitions; its keys leave the table. Carves out its page on its first use. */
export function topicReset(topic: i32, n: i32): void {
  if (pageOf(topic) == 0) store<usize>(tf(topic, T_PAGE), arenaAlloc(<usize>maxPartitions * 20));
  setSize(topic, n);
  const g = tf(topic, T_GENERATION);
  store<u32>(g, load<u32>(g) + 1);
  store<f64>(tf(topic, T_TOTAL), 0);
  store<f64>(tf(topic, T_LOAD_TOTAL), 0);
  store<f64>(tf(topic, T_SKETCH_TOTAL), 0);
  store<f64>(tf(topic, T_WEIGHT), 1);
  store<f64>(tf(topic, T_LOAD_WEIGHT), 1);
  memory.fill(loadAt(topic, 0), 0, <usize>maxPartitions << 3);
  memory.fill(penaltyAt(topic, 0), 0, <usize>maxPartitions << 3);
  memory.fill(adjustAt(topic, 0), 0, <usize>maxPartitions << 2);
  store<i32>(tf(topic, T_STICKY), 0);
  store<i32>(tf(topic, T_STICKY_LEFT), 0);
  store<f64>(tf(topic, T_MESSAGES), 0);
  store<f64>(tf(topic, T_SPREAD_MESSAGES), 0);
  store<f64>(tf(topic, T_MOVED_MESSAGES), 0);
  // At most one event per entry, into a log the TS side drained: it fits (events.ts).
  for (let e = 0; e < capacity; e++) {
    const state = geti(E_STATE, e);
    if (state != STATE_FREE && geti(E_TOPIC, e) == topic) {
      if (state >= STATE_HOT) emit(EVENT_COOLED, e);
      remove(e);
    }
  }
}

/**
 * A topic's partition count changed: loads restart level (each partition at the mean), the
 * penalties of partitions that still exist stay, and hot keys keep their state; their
 * allowed partitions follow from the new count.
 */
export function topicResize(topic: i32, n: i32): void {
  const old = load<i32>(tf(topic, T_SIZE));
  setSize(topic, n);
  const level = loadTotal(topic) / <f64>n;
  for (let p = 0; p < maxPartitions; p++) {
    store<f64>(loadAt(topic, p), p < n ? level : 0);
    if (p >= n || p >= old) store<f64>(penaltyAt(topic, p), 0);
  }
  memory.fill(adjustAt(topic, 0), 0, <usize>maxPartitions << 2);
  store<i32>(tf(topic, T_STICKY_LEFT), 0);
}

// @ts-ignore: decorator
@inline
function flushTiny(v: f64): f64 {
  return v < <f64>TINY ? 0 : v;
}

/**
 * Rescales every count of slot `topic` when one of its clocks got large (decay.ts): its totals,
 * loads and adjustments, and its tracked keys' counts and move times; its clocks restart at 1.
 */
export function renormaliseTopic(topic: i32): void {
  const wt = tf(topic, T_WEIGHT);
  const lwt = tf(topic, T_LOAD_WEIGHT);
  const factor = 1.0 / load<f64>(wt);
  const loadFactor = 1.0 / load<f64>(lwt);
  store<f64>(wt, 1);
  store<f64>(lwt, 1);
  // Values far below one message become 0 rather than drift into the subnormal range.
  for (let e = 0; e < capacity; e++) {
    if (geti(E_STATE, e) == STATE_FREE || geti(E_TOPIC, e) != topic) continue;
    setCount(e, flushTiny(getCount(e) * factor));
    setf(E_MOVE_AFTER, e, getf(E_MOVE_AFTER, e) * loadFactor);
  }
  store<f64>(tf(topic, T_TOTAL), flushTiny(total(topic) * factor));
  store<f64>(tf(topic, T_LOAD_TOTAL), flushTiny(loadTotal(topic) * loadFactor));
  const n = load<i32>(tf(topic, T_SIZE));
  for (let p = 0; p < n; p++) {
    store<f64>(loadAt(topic, p), flushTiny(load<f64>(loadAt(topic, p)) * loadFactor));
    const r = <f64>load<f32>(adjustAt(topic, p)) * loadFactor;
    store<f32>(adjustAt(topic, p), <f32>(Math.abs(r) < <f64>TINY ? 0 : r));
  }
}

/** Rescales the sketch and every topic's total on its clock when that clock got large. */
export function renormaliseSketch(): void {
  const factor = restartSketch();
  sketchScale(<f32>factor);
  for (let t = 0; t < maxTopics; t++) {
    const at = tf(t, T_SKETCH_TOTAL);
    store<f64>(at, flushTiny(load<f64>(at) * factor));
  }
}

/** The clock of a time horizon moved: counts so far shrink by `factor` relative to new ones, in every topic. */
export function tick(factor: f64, loadFactor: f64): void {
  for (let t = 0; t < maxTopics; t++) {
    const wt = tf(t, T_WEIGHT);
    const lwt = tf(t, T_LOAD_WEIGHT);
    const w = load<f64>(wt) * factor;
    const lw = load<f64>(lwt) * loadFactor;
    store<f64>(wt, w);
    store<f64>(lwt, lw);
    if (w > RENORMALISE_AT || lw > RENORMALISE_AT) renormaliseTopic(t);
  }
  if (advanceSketchBy(factor)) renormaliseSketch();
}

/** The key clock's total of slot `topic`, in recent messages. */
export function recentMessages(topic: i32): f64 {
  return total(topic) / load<f64>(tf(topic, T_WEIGHT));
}

/** Slot `topic`'s key clock (its current weight). */
export function topicWeight(topic: i32): f64 {
  return load<f64>(tf(topic, T_WEIGHT));
}

/** Slot `topic`'s load clock. */
export function topicLoadWeight(topic: i32): f64 {
  return load<f64>(tf(topic, T_LOAD_WEIGHT));
}
