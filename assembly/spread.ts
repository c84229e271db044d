// The decision for one message: hash → sketch → cold: the base partitioner's partition /
// hot: one partition with room for the whole key (relocated), else the least loaded of the
// key's allowed partitions (split). See README, "How it works" (its paragraphs "Relocating
// before splitting" and "Spreading").
//
// Per topic slot (the TS side maps topic names to slots): a decayed total, a decayed load,
// an external penalty and a reserve per partition, and the state of its sticky run for null keys.

import { arenaAlloc } from "./memory";
import { murmur2Lanes, laneB, laneZero } from "./murmur2";
import { familyOf, hashOf, partitionOfHash } from "./partition";
import { sketchConfigure, sketchAdd, sketchEstimate, sketchRaise, sketchScale, TINY } from "./sketch";
import { weight, loadWeight, decayConfigure, advance, advanceBy, restart, restartLoads } from "./decay";
import { hotkeysConfigure, find, insert, remove, capacity, geti, seti, getCount, setCount, getf, setf, full } from "./hotkeys";
import {
  NULL_KEY, FAMILY_MURMUR2, FAMILY_CRC32, PARTITIONER_DETERMINISTIC,
  E_TOPIC, E_LANE_A, E_LANE_B, E_STATE, E_WIDTH, E_STEP, E_SIZE, E_RETURN, E_SCAN_INDEX, E_SCAN_AT, E_CURRENT, E_RUN_LEFT, E_MOVE_AFTER,
  STATE_CANDIDATE, STATE_HOT, STATE_RELIEF, STATE_FREE,
  TOPIC_SHIFT, T_TOTAL, T_LOAD_TOTAL, T_INVERSE, T_SIZE, T_STICKY, T_GENERATION, T_STICKY_LEFT,
  CELLS_SIZE, CELL_EVENT_COUNT, CELL_LAST_ENTRY, CELL_LAST_BATCH_INDEX, CELL_LAST_ORDER, CELL_LAST_ZERO,
  ORDER_NONE, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED,
  EVENT_HOT, EVENT_COOLED, EVENT_SIZE, EVENT_KIND, EVENT_ENTRY, EVENT_BATCH_INDEX,
  PARAMS_SIZE, P_SKETCH_WIDTH, P_SKETCH_DEPTH, P_ENTRIES, P_TOPICS, P_PARTITIONS, P_GROWTH, P_LOAD_GROWTH, P_HOT, P_COOL,
  P_ADMIT, P_MIN_HOT, P_WARMUP, P_SPREAD_FACTOR, P_MAX_SPREAD, P_SPREAD, P_STICKY_RUN, P_WIDEN_ABOVE, P_RELIEF,
  P_SAMPLING, P_HOT_RUN, P_RELOCATE,
} from "./abi";

// ---- options: set by configure() alone, from the parameters the TS side wrote (their
// defaults are DEFAULTS in src/core/options.ts, the only place they are written) ----
let hotShare: f64;     // hot above this many fair shares (1/n of the topic's traffic): hotThreshold
let coolShare: f64;    // cold again below this many: coolThreshold
let reliefShare: f64;  // hot above this many when the key's partition is overloaded (0: off): reliefThreshold
let admitShare: f64;   // tracked exactly above this many
let minCount: f64;     // a hot key has at least this many recent messages: minHotMessages
let warmup: f64;       // no key is hot before its topic has this many recent messages: warmupMessages
let spreadFactor: f64; // a hot key starts with ceil(spreadFactor * share * n) partitions
let widenAbove: f64;   // and gets one more while its best is above this many means: 1 + balanceTolerance
let maxSpread: i32;    // at most this many (0: all)
let spreadOn: bool;    // false: detect and report, never move (spread)
let stickyRun: i32;    // messages per sticky run of undecided (null) keys
let hotRun: i32;       // messages of a hot key sent to one choice before choosing again
let sampleEvery: i32;  // an untracked key's message updates the sketch once in this many: sketch.sampling
let relocateOn: bool;  // a hot key that fits whole in one partition moves there whole instead of splitting (relocate)

// ---- per topic ----
let maxTopics: i32 = 0;
let maxPartitions: i32 = 0;
// One record of 1 << TOPIC_SHIFT bytes per topic slot (one cache line per message), fields T_* (abi.ts).
export let tRecords: usize = 0;
// @ts-ignore: decorator
@inline function tf(topic: i32, field: usize): usize { return tRecords + (<usize>topic << TOPIC_SHIFT) + field; }
export let tLoads: usize = 0;    // f64[maxPartitions]: decayed messages per partition (load clock)
export let tPenalty: usize = 0;  // f64[maxPartitions]: external penalty, in fair shares
// f32[maxPartitions], load clock: what relocation adds to a partition's placed load to judge
// its room (fixedLoad). Minus the split keys' messages placed there: they go wherever there is
// room, so they leave room to a key that needs a partition whole. Plus the rate of the keys
// moved in, minus that of the keys moved out, that the decayed load does not show yet: a key of
// rate r moving in at weight w adds r w-units once its traffic there is at its steady state;
// stored as is, the amount fades as the weight grows, exactly as the missing part of that load
// does. So several keys do not move into one partition on the same room, nor keys leave a
// partition just relieved. tLoads stay the decayed messages actually placed.
let tAdjust: usize = 0;

// ---- signals to the TS side, in a static cell block it reads without a call ----
export const CELLS: usize = memory.data(<i32>CELLS_SIZE, 16); // fields CELL_* (abi.ts)
/** The configuration's parameters, fields P_* (abi.ts): written by the TS side, read by configure(). */
export const PARAMS: usize = memory.data(<i32>PARAMS_SIZE, 16);
export let events: usize = 0;    // records of EVENT_SIZE bytes (abi.ts)
let eventCapacity: i32 = 0;

let sweepCursor: i32 = 0;
/** Admissions refused because the table was full of stronger keys (stats()). */
export let refused: f64 = 0;
// The sweep looks at this many entries every this many messages (one per message on average).
// @ts-ignore: decorator
@inline const SWEEP_BATCH: i32 = 8;
let sweepLeft: i32 = SWEEP_BATCH; // messages to the next sweep
// The log holds every event until the TS side drains it, which it does after each call. One
// decision emits at most EVENT_RESERVE events (its own, plus one per entry its sweep looks
// at); a batch stops early while the log has less room than that (decideBatchAt), and
// topicReset emits at most one per entry into a drained log. So the log never overflows.
// @ts-ignore: decorator
@inline const EVENT_RESERVE: i32 = 1 + SWEEP_BATCH;
// Sampling (the "sample and hold" of Estan & Varghese, SIGCOMM 2002): a message of a key the
// table does not hold updates the sketch only when it is sampled, and then with the weight
// of `sampleEvery` messages, so the sketch's estimates stay unbiased. Gaps between samples
// are drawn uniformly from [1, 2 sampleEvery - 1] (mean sampleEvery), so that no periodic
// pattern of keys can hide a key between samples. Once held (tracked), a key is counted
// exactly, every message.
let sampleLeft: i32 = 1;
let sampleState: u32 = 0x9e3779b9;
// @ts-ignore: decorator
@inline const SCAN_WINDOW: i32 = 8;
/** 2^(1/8): the load clock's weight grows by this in an eighth of its half-life. */
// @ts-ignore: decorator
@inline const LOOK_AGAIN: f64 = 1.0905077326652577;
let batchIndex: i32 = 0;

/** A configuration parameter (abi.ts P_*) as written at PARAMS. */
// @ts-ignore: decorator
@inline function param(at: usize): f64 { return load<f64>(PARAMS + at); }
// @ts-ignore: decorator
@inline function intParam(at: usize): i32 { return <i32>load<f64>(PARAMS + at); }

/** Sizes the regions and sets the options from the parameters at PARAMS; once, before any decision. */
export function configure(): void {
  const entries = intParam(P_ENTRIES);
  const topics = intParam(P_TOPICS);
  const partitions = intParam(P_PARTITIONS);
  sketchConfigure(<u32>intParam(P_SKETCH_WIDTH), <u32>intParam(P_SKETCH_DEPTH));
  hotkeysConfigure(entries);
  decayConfigure(param(P_GROWTH), param(P_LOAD_GROWTH));
  hotShare = param(P_HOT); coolShare = param(P_COOL); admitShare = param(P_ADMIT); minCount = param(P_MIN_HOT);
  warmup = param(P_WARMUP); spreadFactor = param(P_SPREAD_FACTOR); widenAbove = param(P_WIDEN_ABOVE);
  reliefShare = param(P_RELIEF); maxSpread = intParam(P_MAX_SPREAD); spreadOn = intParam(P_SPREAD) != 0;
  stickyRun = intParam(P_STICKY_RUN); sampleEvery = intParam(P_SAMPLING); hotRun = intParam(P_HOT_RUN);
  relocateOn = intParam(P_RELOCATE) != 0;
  maxTopics = topics;
  maxPartitions = partitions;
  const t = <usize>topics;
  tRecords = arenaAlloc(t << TOPIC_SHIFT);
  tLoads = arenaAlloc((t * <usize>partitions) << 3);
  tPenalty = arenaAlloc((t * <usize>partitions) << 3);
  tAdjust = arenaAlloc((t * <usize>partitions) << 2);
  eventCapacity = entries + EVENT_RESERVE;
  events = arenaAlloc(<usize>eventCapacity * EVENT_SIZE);
  store<i32>(CELLS + CELL_LAST_ENTRY, -1);
}

// @ts-ignore: decorator
@inline function loadAt(topic: i32, p: i32): usize {
  return tLoads + ((<usize>topic * maxPartitions + p) << 3);
}
// @ts-ignore: decorator
@inline function penaltyAt(topic: i32, p: i32): usize {
  return tPenalty + ((<usize>topic * maxPartitions + p) << 3);
}
// @ts-ignore: decorator
@inline function adjustAt(topic: i32, p: i32): usize {
  return tAdjust + ((<usize>topic * maxPartitions + p) << 2);
}
// @ts-ignore: decorator
@inline function total(topic: i32): f64 {
  return load<f64>(tf(topic, T_TOTAL));
}
// @ts-ignore: decorator
@inline function loadTotal(topic: i32): f64 {
  return load<f64>(tf(topic, T_LOAD_TOTAL));
}

function emit(kind: i32, e: i32): void {
  const count = load<i32>(CELLS + CELL_EVENT_COUNT);
  if (count >= eventCapacity) return; // unreachable: see EVENT_RESERVE
  const p = events + <usize>count * EVENT_SIZE;
  store<i32>(p + EVENT_KIND, kind);
  store<i32>(p + EVENT_ENTRY, e);
  store<i32>(p + EVENT_BATCH_INDEX, batchIndex);
  store<i32>(CELLS + CELL_EVENT_COUNT, count + 1);
}

/** Forgets a topic slot's history and gives it `n` partitions; its keys leave the table. */
export function topicReset(topic: i32, n: i32): void {
  store<i32>(tf(topic, T_SIZE), n);
  store<f64>(tf(topic, T_INVERSE), 1.0 / <f64>n);
  const g = tf(topic, T_GENERATION);
  store<u32>(g, load<u32>(g) + 1);
  store<f64>(tf(topic, T_TOTAL), 0);
  store<f64>(tf(topic, T_LOAD_TOTAL), 0);
  memory.fill(loadAt(topic, 0), 0, <usize>maxPartitions << 3);
  memory.fill(penaltyAt(topic, 0), 0, <usize>maxPartitions << 3);
  memory.fill(adjustAt(topic, 0), 0, <usize>maxPartitions << 2);
  store<i32>(tf(topic, T_STICKY), 0);
  store<i32>(tf(topic, T_STICKY_LEFT), 0);
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
  store<i32>(tf(topic, T_SIZE), n);
  store<f64>(tf(topic, T_INVERSE), 1.0 / <f64>n);
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
 * least loaded of them is above the topic's mean by more than `widenAbove`, the key is
 * given one more partition (the next in its sequence): widths grow only as far as balance
 * needs, and shrink only when the key cools.
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
  let bestLoad = load<f64>(loadAt(topic, p)) + load<f64>(penaltyAt(topic, p)) * fair;
  for (let i = 1; i < scan; i++) {
    p += step;
    if (p >= n) p -= n;
    if (++index == width) { index = 0; p = base; }
    const l = load<f64>(loadAt(topic, p)) + load<f64>(penaltyAt(topic, p)) * fair;
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
  if (bestLoad > fair * widenAbove && width < most) {
    // Even the best is overloaded: admit the next partition of the key's sequence.
    seti(E_WIDTH, e, width + 1);
    p = <i32>((<i64>base + <i64>width * <i64>step) % <i64>n);
    const l = load<f64>(loadAt(topic, p)) + load<f64>(penaltyAt(topic, p)) * fair;
    if (l < bestLoad) best = p;
  }
  return best;
}

/** A partition's load as relocation sees it: placed, adjusted (tAdjust), plus penalty. */
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
 * The partition of hot entry e's next run, with relocation on. A key that fits whole in one
 * partition (settled load + the key's rate within balanceTolerance of the mean) is relocated
 * there, width 1, its own partition first (no move at all), and stays until that partition has
 * been overloaded for a load half-life; then it moves to a partition with room, and is split
 * (choose) only when none has room. After a move it stays at least a load half-life
 * (E_MOVE_AFTER), so that noise in the loads does not bounce it;
 * a split key that fits whole again is relocated on its least loaded partition. A consumer
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
    if (hereLoad <= bound) {
      // The overload passed once the partition is back at the mean (a band, not a line, so
      // that an overload hovering around the bound is not forgotten at its first dip).
      if (after < 0 && hereLoad <= fair) setf(E_MOVE_AFTER, e, 0);
      return here;
    }
    // Overloaded. Unless the overload is more than half the key's rate (leaving then brings
    // the partition nearer the mean, whatever the noise), a relocated key acts only on an
    // overload that lasted a whole load half-life (E_MOVE_AFTER < 0: until when): a shorter one
    // is noise, or one the split keys' choices pay back. Within a load half-life of its last
    // move it does not move again; it is split if it outgrew its partition (a key whose share
    // is still rising when it turns hot). A key just hot leaves its own partition for one with
    // room at once.
    const rate = count * topicLoad / topicTotal;
    const large = (hereLoad - bound) * 2 > rate;
    const moved = !fresh && after >= 0 && loadWeight < after;
    if (moved && !large) return here;
    if (!fresh && !large) {
      if (after >= 0) {
        setf(E_MOVE_AFTER, e, -loadWeight * 2);
        return here;
      }
      if (loadWeight < -after) return here;
    }
    const q = moved ? -1 : roomFor(topic, e, n, base, here, rate, bound, fair);
    if (q >= 0) {
      setf(E_MOVE_AFTER, e, loadWeight * 2);
      adjust(topic, here, -rate);
      adjust(topic, q, rate);
      seti(E_CURRENT, e, q);
      return q;
    }
    if (fresh && !large) {
      // No room anywhere yet: it stays and waits to see whether the overload lasts.
      setf(E_MOVE_AFTER, e, -loadWeight * 2);
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

/** The next sticky run of undecided keys starts on the least loaded partition (KIP-794's idea). */
function sticky(topic: i32, n: i32): i32 {
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
    const l = load<f64>(loadAt(topic, p)) + load<f64>(penaltyAt(topic, p)) * fair;
    if (l < bestLoad) { bestLoad = l; best = p; }
  }
  store<i32>(at, best);
  store<i32>(left, stickyRun - 1);
  return best;
}

// @ts-ignore: decorator
@inline
function flushTiny(v: f64): f64 {
  return v < <f64>TINY ? 0 : v;
}

/** Rescales every stored count when the decay weight got large (decay.ts). */
function renormalise(): void {
  const factor = restart();
  const loadFactor = restartLoads();
  // Values far below one message become 0 rather than drift into the subnormal range.
  sketchScale(<f32>factor);
  for (let e = 0; e < capacity; e++) {
    setCount(e, flushTiny(getCount(e) * factor));
    setf(E_MOVE_AFTER, e, getf(E_MOVE_AFTER, e) * loadFactor);
  }
  for (let t = 0; t < maxTopics; t++) {
    store<f64>(tf(t, T_TOTAL), flushTiny(total(t) * factor));
    store<f64>(tf(t, T_LOAD_TOTAL), flushTiny(loadTotal(t) * loadFactor));
    const n = load<i32>(tf(t, T_SIZE));
    for (let p = 0; p < n; p++) {
      store<f64>(loadAt(t, p), flushTiny(load<f64>(loadAt(t, p)) * loadFactor));
      const r = <f64>load<f32>(adjustAt(t, p)) * loadFactor;
      store<f32>(adjustAt(t, p), <f32>(Math.abs(r) < <f64>TINY ? 0 : r));
    }
  }
}

/**
 * Looks at one entry, round robin (SWEEP_BATCH of them every SWEEP_BATCH messages): a hot key
 * whose share fell below the cooling level cools, a candidate that fell well below admission
 * leaves the table. Keys that stop arriving are found this way within `capacity` messages
 * (plus SWEEP_BATCH).
 */
// @ts-ignore: decorator
@inline
function sweepOne(): void {
  const e = sweepCursor;
  sweepCursor = e + 1 == capacity ? 0 : e + 1;
  const state = geti(E_STATE, e);
  if (state == STATE_FREE) return;
  const topic = geti(E_TOPIC, e);
  const fair = total(topic) * load<f64>(tf(topic, T_INVERSE));
  const count = getCount(e);
  if (state >= STATE_HOT) {
    if (count < coolLine(state) * fair) cool(e);
  } else if (count < admitShare * 0.5 * fair && geti(E_RETURN, e) == 0) {
    // A key that owes a RETURN marker stays until its next message (or until the table
    // needs its place: admit() evicts the weakest candidates first).
    untrack(e);
  }
}

/** The share (in fair shares) below which a hot key cools: half its way in for STATE_RELIEF keys. */
// @ts-ignore: decorator
@inline
function coolLine(state: i32): f64 {
  return state == STATE_RELIEF ? reliefShare * 0.5 : coolShare;
}

function cool(e: i32): void {
  seti(E_STATE, e, STATE_CANDIDATE);
  seti(E_SIZE, e, 0);
  seti(E_RUN_LEFT, e, 0);
  seti(E_RETURN, e, 1);
  emit(EVENT_COOLED, e);
}

/** Fingerprint → sketch rows: lane A mixed with the topic (lane B is the probe stride). */
// @ts-ignore: decorator
@inline
function sketchRow(topic: i32, a: u32): u32 {
  // The slot's generation changes when the slot is given to another topic, so a new topic
  // does not inherit the counts of the one it replaced.
  const generation = load<u32>(tf(topic, T_GENERATION));
  const h = (a ^ (<u32>topic * 0x9e3779b1) ^ (generation * 0xc2b2ae35)) * 0x85ebca6b;
  return h ^ (h >>> 15);
}

/**
 * Removes a tracked key, giving its exact count back to the sketch first: counts made while
 * it was tracked are not lost, so its estimate stays at or above its true count.
 */
function untrack(e: i32): void {
  const topic = geti(E_TOPIC, e);
  sketchRaise(sketchRow(topic, <u32>geti(E_LANE_A, e)), <u32>geti(E_LANE_B, e), <f32>getCount(e));
  remove(e);
}

/** The number of messages to the next sample: uniform in [1, 2 sampleEvery - 1] (xorshift32; 1 for sampling 1). */
function nextGap(): i32 {
  let x = sampleState;
  x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
  sampleState = x;
  return 1 + <i32>((<u64>x * <u64>(2 * sampleEvery - 1)) >>> 32);
}

/**
 * After a table miss: counts the key in the sketch and admits it to the table once its
 * estimate passes the admission level, evicting the weakest of a few sampled candidates
 * when the table is full.
 */
function admit(topic: i32, a: u32, b: u32, topicTotal: f64, fair: f64): i32 {
  const sampleWeight = weight * <f64>sampleEvery;
  const estimate = <f64>sketchAdd(sketchRow(topic, a), b, <f32>sampleWeight);
  // Held from its second sample on at least, so one lucky sample does not take a place.
  if (estimate <= admitShare * fair || topicTotal < warmup * weight) return -1;
  if (sampleEvery > 1 && estimate < 2 * sampleWeight) return -1;
  if (full()) {
    // Sample a few entries after the sweep cursor; evict the weakest candidate if weaker.
    let victim = -1;
    let victimShare = estimate / topicTotal;
    for (let i = 0, e = sweepCursor; i < 8; i++) {
      if (geti(E_STATE, e) == STATE_CANDIDATE) {
        const t = geti(E_TOPIC, e);
        // A key owing a RETURN marker is kept unless it has all but vanished.
        const share = getCount(e) / total(t) * (geti(E_RETURN, e) != 0 ? 100 : 1);
        if (share < victimShare) { victimShare = share; victim = e; }
      }
      e = e + 1 == capacity ? 0 : e + 1;
    }
    if (victim < 0) {
      refused += 1; // the table is full of stronger keys: this one is not tracked
      return -1;
    }
    untrack(victim);
  }
  return insert(topic, a, b, estimate);
}

/** Partition for the key at ptr (length NULL_KEY for null) of slot `topic` with n partitions. */
export function decideAt(topic: i32, algorithm: i32, ptr: usize, length: i32, n: i32): i32 {
  const family = familyOf(algorithm);
  const tt = tf(topic, T_TOTAL);
  const topicTotal = load<f64>(tt) + weight;
  store<f64>(tt, topicTotal);
  const lt = tf(topic, T_LOAD_TOTAL);
  const topicLoad = load<f64>(lt) + loadWeight;
  store<f64>(lt, topicLoad);
  const inverse = load<f64>(tf(topic, T_INVERSE));
  const loadFair = topicLoad * inverse;
  let result: i32;
  let entry = -1;
  let order = ORDER_NONE;
  let zero = 0;
  if (length <= 0 && (algorithm & PARTITIONER_DETERMINISTIC) == 0 && (length == NULL_KEY || family == FAMILY_CRC32)) {
    result = sticky(topic, n);
  } else {
    if (length < 0) length = 0;
    const a = <u32>murmur2Lanes(ptr, length);
    const b = laneB;
    zero = laneZero;
    const base = partitionOfHash(family, family == FAMILY_MURMUR2 ? <i32>a : hashOf(family, ptr, length), n);
    result = base;
    const fair = topicTotal * inverse;
    let e = find(topic, a, b);
    let count: f64;
    if (e >= 0) {
      count = getCount(e) + weight;
      setCount(e, count);
    } else if (--sampleLeft <= 0) {
      sampleLeft = nextGap();
      e = admit(topic, a, b, topicTotal, fair);
      count = e >= 0 ? getCount(e) : 0;
    } else {
      count = 0;
    }
    if (e >= 0) {
      const state = geti(E_STATE, e);
      entry = e;
      if (state >= STATE_HOT) {
        if (count < coolLine(state) * fair) {
          cool(e); // this message goes to the key's own partition
        } else {
          if (state == STATE_RELIEF && count > hotShare * fair) seti(E_STATE, e, STATE_HOT);
          order = ORDER_SPREAD;
          if (spreadOn) {
            // One choice per run of the key's messages (runLength: at most hotRun).
            const left = geti(E_RUN_LEFT, e);
            if (left > 0 && geti(E_SIZE, e) == n) {
              seti(E_RUN_LEFT, e, left - 1);
              result = geti(E_CURRENT, e);
            } else {
              const run = runLength(loadFair);
              if (relocateOn) {
                result = place(topic, e, count, topicTotal, topicLoad, n, base, b, loadFair);
                // A split key's run, counted as movable where it lands once for all its messages.
                if (geti(E_WIDTH, e) != 1) adjust(topic, result, -loadWeight * <f64>run);
              } else {
                result = choose(topic, e, count, topicTotal, n, base, b, loadFair);
              }
              seti(E_CURRENT, e, result);
              seti(E_RUN_LEFT, e, run - 1);
            }
            if (relocateOn && geti(E_WIDTH, e) == 1) order = ORDER_MOVED;
          }
        }
        if (order == ORDER_NONE) {
          seti(E_RETURN, e, 0);
          order = ORDER_RETURN;
        }
      } else {
        // Hot above hotShare; above reliefShare too while the key's own partition is
        // overloaded, so that partitions heavy with cold traffic shed their biggest keys.
        let next = STATE_FREE;
        if (count >= minCount * weight && topicTotal >= warmup * weight) {
          if (count > hotShare * fair) next = STATE_HOT;
          else if (reliefShare > 0 && count > reliefShare * fair && load<f64>(loadAt(topic, base)) > loadFair * widenAbove) next = STATE_RELIEF;
        }
        if (next != STATE_FREE) {
          // Turns hot; this message still goes to the key's own partition, behind its
          // earlier ones, so a consumer can order what follows after it.
          seti(E_STATE, e, next);
          seti(E_SIZE, e, 0);
          seti(E_WIDTH, e, 0); // undecided: place() decides on its next message
          seti(E_RUN_LEFT, e, 0);
          seti(E_RETURN, e, 0);
          emit(EVENT_HOT, e);
          order = ORDER_ANCHOR;
        } else if (geti(E_RETURN, e) != 0) {
          // Cooled while it was away (sweepOne): its first message since says so.
          seti(E_RETURN, e, 0);
          order = ORDER_RETURN;
        }
      }
    }
  }
  if (!spreadOn) order = ORDER_NONE;
  const l = loadAt(topic, result);
  store<f64>(l, load<f64>(l) + loadWeight);
  store<i32>(CELLS + CELL_LAST_ENTRY, entry);
  store<i32>(CELLS + CELL_LAST_BATCH_INDEX, batchIndex);
  store<i32>(CELLS + CELL_LAST_ORDER, order);
  store<i32>(CELLS + CELL_LAST_ZERO, zero);
  if (advance()) renormalise();
  if (--sweepLeft == 0) {
    sweepLeft = SWEEP_BATCH;
    for (let i = 0; i < SWEEP_BATCH; i++) sweepOne();
  }
  return result;
}

/**
 * decideAt for keys [from, count) of a batch packed at `keys` (lengths at `lengths`,
 * partitions to `results`). Returns the index of the first key not decided: `count`, or less
 * when the event log filled up so far that one more decision might not find room for its
 * events; the caller drains the log and calls again from there.
 */
export function decideBatchAt(topic: i32, algorithm: i32, keys: usize, lengths: usize, results: usize, from: i32, count: i32, n: i32): i32 {
  let ptr = keys;
  for (let i = 0; i < from; i++) {
    const length = load<i32>(lengths + (<usize>i << 2));
    if (length > 0) ptr += <usize>length; // keys are packed back to back
  }
  const room = eventCapacity - EVENT_RESERVE;
  let i = from;
  for (; i < count; i++) {
    if (load<i32>(CELLS + CELL_EVENT_COUNT) > room) break;
    batchIndex = i;
    const length = load<i32>(lengths + (<usize>i << 2));
    store<i32>(results + (<usize>i << 2), decideAt(topic, algorithm, ptr, length, n));
    if (length > 0) ptr += <usize>length;
  }
  batchIndex = 0;
  return i;
}

/** The clock of a time horizon moved: counts so far shrink by `factor` relative to new ones. */
export function tick(factor: f64, loadFactor: f64): void {
  if (advanceBy(factor, loadFactor)) renormalise();
}

export function currentWeight(): f64 {
  return weight;
}

export function currentLoadWeight(): f64 {
  return loadWeight;
}




/** Counts a message placed without a decision (a key too long for the key region: never spread). */
export function account(topic: i32, partition: i32): void {
  const tt = tf(topic, T_TOTAL);
  store<f64>(tt, load<f64>(tt) + weight);
  const lt = tf(topic, T_LOAD_TOTAL);
  store<f64>(lt, load<f64>(lt) + loadWeight);
  const l = loadAt(topic, partition);
  store<f64>(l, load<f64>(l) + loadWeight);
  store<i32>(CELLS + CELL_LAST_ENTRY, -1);
  store<i32>(CELLS + CELL_LAST_ORDER, ORDER_NONE);
  store<i32>(CELLS + CELL_LAST_ZERO, -1); // not looked at
  if (advance()) renormalise();
}

/**
 * The recent-message count of the key at ptr in slot `topic`, without counting a message:
 * its exact count when tracked, else the sketch's estimate (never below the true count).
 */
export function estimateAt(topic: i32, ptr: usize, length: i32): f64 {
  if (length < 0) length = 0;
  const a = <u32>murmur2Lanes(ptr, length);
  const b = laneB;
  const e = find(topic, a, b);
  if (e >= 0) return getCount(e) / weight;
  return <f64>sketchEstimate(sketchRow(topic, a), b) / weight;
}

/** The key clock's total of slot `topic`, in recent messages. */
export function recentMessages(topic: i32): f64 {
  return total(topic) / weight;
}

/** The stride of the allowed partitions of the key at ptr among n (see spreadStep). */
export function spreadStepAt(ptr: usize, length: i32, n: i32): i32 {
  murmur2Lanes(ptr, length < 0 ? 0 : length);
  return spreadStep(laneB, n);
}
