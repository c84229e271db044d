// Which keys are tracked exactly and when they turn hot or cool: a message of a key the
// table does not hold is counted in the sketch (when sampled), and admits the key to the
// table of tracked keys once its estimate passes the admission level; a tracked key turns hot
// above hotThreshold (or, above half of reliefThreshold, when it is the key that relieves its
// overloaded partition) and cools below coolThreshold; a sweep finds the keys that stopped arriving.

import { sketchConfigure, sketchAdd, sketchEstimate, sketchRaise } from "./sketch";
import { weight, sketchWeight } from "./decay";
import { hotkeysConfigure, find, insert, remove, capacity, geti, seti, getCount, setCount, full, isHeld } from "./hotkeys";
import { emit } from "./events";
import { tf, total, recentMessages as recentOf } from "./topics";
import { leaves, CANDIDATE } from "./relief";
import { fingerprint, laneB } from "./fingerprint";
import { param, intParam } from "./params";
import {
  E_TOPIC, E_LANE_A, E_LANE_B, E_STATE, E_WIDTH, E_SIZE, E_RETURN, E_RUN_LEFT, CHAIN_NONE, CHAIN_OWED, CHAIN_OPEN, CHAIN_PINNED,
  STATE_CANDIDATE, STATE_HOT, STATE_RELIEF, STATE_FREE, T_INVERSE, T_GENERATION, T_SKETCH_TOTAL, T_WEIGHT, EVENT_HOT, EVENT_COOLED,
  P_SKETCH_WIDTH, P_SKETCH_DEPTH, P_ENTRIES, P_HOT, P_COOL, P_ADMIT, P_MIN_HOT, P_WARMUP, P_RELIEF, P_SAMPLING,
} from "./abi";

// ---- options (admissionConfigure) ----
let hotShare: f64;     // hot above this many fair shares (1/n of the topic's traffic): hotThreshold
let coolShare: f64;    // cold again below this many: coolThreshold
let reliefShare: f64;  // relief (0: off): keys above half this many may leave an overloaded partition: reliefThreshold
let admitShare: f64;   // tracked exactly above this many
let minCount: f64;     // a hot key has at least this many recent messages: minHotMessages
let warmup: f64;       // no key is hot before its topic has this many recent messages: warmupMessages
let sampleEvery: i32;  // an untracked key's message updates the sketch once in this many: sketch.sampling

/** Admissions refused because the table was full of stronger keys (stats()). */
export let refused: f64 = 0;

/** The last admission cooled a hot key to take its place: that message emitted its event. */
let cooledForAdmission: bool = false;

/** Whether this message's admission cooled a hot key (its one event): then the key does not also turn hot on it. Clears the flag. */
// @ts-ignore: decorator
@inline
export function admissionCooled(): bool {
  const c = cooledForAdmission;
  cooledForAdmission = false;
  return c;
}

let sweepCursor: i32 = 0;
/** The sweep looks at this many entries every this many messages (one per message on average). */
// @ts-ignore: decorator
@inline export const SWEEP_BATCH: i32 = 8;
let sweepLeft: i32 = SWEEP_BATCH; // messages to the next sweep

// Sampling (the "sample and hold" of Estan & Varghese, SIGCOMM 2002): a message of a key the
// table does not hold updates the sketch only when it is sampled, and then with the weight
// of `sampleEvery` messages, so the sketch's estimates stay unbiased. Gaps between samples
// are drawn uniformly from [1, 2 sampleEvery - 1] (mean sampleEvery), so that no periodic
// pattern of keys can hide a key between samples. Once held (tracked), a key is counted
// exactly, every message.
let sampleLeft: i32 = 1;
let sampleState: u32 = 0x9e3779b9;

/** Sizes the sketch and the table and sets the options, from the parameters (params.ts). */
export function admissionConfigure(): void {
  sketchConfigure(<u32>intParam(P_SKETCH_WIDTH), <u32>intParam(P_SKETCH_DEPTH));
  hotkeysConfigure(intParam(P_ENTRIES));
  hotShare = param(P_HOT); coolShare = param(P_COOL); admitShare = param(P_ADMIT); minCount = param(P_MIN_HOT);
  warmup = param(P_WARMUP); reliefShare = param(P_RELIEF); sampleEvery = intParam(P_SAMPLING);
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
  sketchRaise(sketchRow(topic, <u32>geti(E_LANE_A, e)), <u32>geti(E_LANE_B, e), <f32>(getCount(e) * toSketch(topic)));
  remove(e);
}

/**
 * Key-clock counts of slot `topic` to the sketch's clock: the same share of the topic's
 * messages (its total on each clock, decay.ts).
 */
// @ts-ignore: decorator
@inline
function toSketch(topic: i32): f64 {
  const t = total(topic);
  return t > 0 ? load<f64>(tf(topic, T_SKETCH_TOTAL)) / t : 0;
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
  // The sketch counts on its own clock: its estimate is compared with the topic's total there.
  const sampleWeight = sketchWeight * <f64>sampleEvery;
  const estimate = <f64>sketchAdd(sketchRow(topic, a), b, <f32>sampleWeight);
  const sketchTotal = load<f64>(tf(topic, T_SKETCH_TOTAL));
  // Held from its second sample on at least, so one lucky sample does not take a place.
  if (estimate <= admitShare * sketchTotal * load<f64>(tf(topic, T_INVERSE)) || topicTotal < warmup * weight) return -1;
  if (sampleEvery > 1 && estimate < 2 * sampleWeight) return -1;
  if (full()) {
    // Sample a few entries after the sweep cursor; evict the weakest if weaker. A candidate
    // competes with its share; a hot key that is at home and unmarked (its chain closed) with
    // half its share, so that with many topics the table holds their strongest keys rather
    // than the weak hot keys of the topics that filled it first. A key owing a RETURN marker,
    // or with its chain open, is kept unless it has all but vanished (candidates) or kept. A
    // key whose messages the producer holds (isHeld) is never taken.
    let victim = -1;
    let victimShare = estimate / sketchTotal;
    for (let i = 0, e = sweepCursor; i < 8; i++) {
      const state = isHeld(e) ? STATE_FREE : geti(E_STATE, e);
      const chain = geti(E_RETURN, e);
      let share = -1.0;
      if (state == STATE_CANDIDATE) share = getCount(e) / total(geti(E_TOPIC, e)) * (chain == CHAIN_OWED ? 100 : 1);
      else if (state >= STATE_HOT && chain == CHAIN_NONE) share = getCount(e) / total(geti(E_TOPIC, e)) * 2;
      if (share >= 0 && share < victimShare) { victimShare = share; victim = e; }
      e = e + 1 == capacity ? 0 : e + 1;
    }
    if (victim < 0) {
      refused += 1; // the table is full of stronger keys: this one is not tracked
      return -1;
    }
    if (geti(E_STATE, victim) >= STATE_HOT) {
      cool(victim);
      cooledForAdmission = true;
    }
    untrack(victim);
  }
  return insert(topic, a, b, estimate * topicTotal / sketchTotal); // the same share, on the topic's key clock
}

/**
 * Counts a message of the key with fingerprint (a, b) in slot `topic`: exactly when the key is
 * tracked, else (when the message is sampled) in the sketch, which may admit the key. Returns
 * its entry, its count now in the entry, or -1 when it is not tracked.
 */
// @ts-ignore: decorator
@inline
export function countMessage(topic: i32, a: u32, b: u32, topicTotal: f64, fair: f64): i32 {
  const e = find(topic, a, b);
  if (e >= 0) {
    setCount(e, getCount(e) + weight);
    return e;
  }
  if (--sampleLeft <= 0) {
    sampleLeft = nextGap();
    return admit(topic, a, b, topicTotal, fair);
  }
  return -1;
}

/** The share (in fair shares) below which a hot key cools: half of reliefThreshold for STATE_RELIEF keys. */
// @ts-ignore: decorator
@inline
function coolLine(state: i32): f64 {
  return state == STATE_RELIEF ? reliefShare * 0.5 : coolShare;
}

function cool(e: i32): void {
  seti(E_STATE, e, STATE_CANDIDATE);
  seti(E_SIZE, e, 0);
  seti(E_RUN_LEFT, e, 0);
  // It owes a return only if its chain is open (it left its own partition since it turned
  // hot); a key pinned by spreadable() stays pinned while it is tracked.
  const chain = geti(E_RETURN, e);
  seti(E_RETURN, e, chain == CHAIN_OPEN ? CHAIN_OWED : chain == CHAIN_PINNED ? CHAIN_PINNED : CHAIN_NONE);
  emit(EVENT_COOLED, e);
}

/**
 * A message of hot entry e (in `state`, with `count`): false when the key cools now (this
 * message goes to its own partition); else true, and a key hot for relief whose share passed
 * hotThreshold becomes an ordinary hot key.
 */
// @ts-ignore: decorator
@inline
export function staysHot(e: i32, state: i32, count: f64, fair: f64): bool {
  if (count < coolLine(state) * fair) {
    cool(e);
    return false;
  }
  if (state == STATE_RELIEF && count > hotShare * fair) seti(E_STATE, e, STATE_HOT);
  return true;
}

/**
 * A message of tracked entry e, not hot, whose normal partition is `base`: true when the key
 * turns hot now, above hotThreshold, or, above half of reliefThreshold (the admission level),
 * when it is the key that relieves its overloaded partition (relief.ts leaves(): the key whose
 * rate fits the excess best), so that partitions heavy with cold traffic shed the traffic
 * balance needs and no more.
 */
// @ts-ignore: decorator
@inline
export function turnsHot(topic: i32, e: i32, count: f64, topicTotal: f64, fair: f64, base: i32, loadFair: f64, topicLoad: f64): bool {
  if (count < minCount * weight || topicTotal < warmup * weight) return false;
  let next = STATE_FREE;
  if (count > hotShare * fair) next = STATE_HOT;
  else if (reliefShare > 0 && count > reliefShare * 0.5 * fair && leaves(topic, e, base, count * topicLoad / topicTotal, loadFair, CANDIDATE, count / (reliefShare * fair))) next = STATE_RELIEF;
  if (next == STATE_FREE) return false;
  // This message still goes to the key's own partition, behind its earlier ones; its chain is
  // opened by the decision (order.ts, hotTurned and hotOrder).
  seti(E_STATE, e, next);
  seti(E_SIZE, e, 0);
  seti(E_WIDTH, e, 0); // undecided: the choice is made on its next message (choice.ts)
  seti(E_RUN_LEFT, e, 0);
  if (geti(E_RETURN, e) != CHAIN_PINNED) seti(E_RETURN, e, CHAIN_NONE);
  emit(EVENT_HOT, e);
  return true;
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
  } else if (count < admitShare * 0.5 * fair && geti(E_RETURN, e) != CHAIN_OWED && !isHeld(e)) {
    // A key that owes a RETURN marker stays until its next message (or until the table
    // needs its place: admit() evicts the weakest candidates first); one whose messages the
    // producer holds stays until they are gone.
    untrack(e);
  }
}

/** After each message: every SWEEP_BATCH messages, a sweep of SWEEP_BATCH entries (at most one event each). */
// @ts-ignore: decorator
@inline
export function sweep(): void {
  if (--sweepLeft == 0) {
    sweepLeft = SWEEP_BATCH;
    for (let i = 0; i < SWEEP_BATCH; i++) sweepOne();
  }
}

/**
 * The recent-message count of the key at ptr in slot `topic`, without counting a message:
 * its exact count when tracked, else the sketch's estimate (never below the true count).
 */
export function estimateAt(topic: i32, ptr: usize, length: i32): f64 {
  if (length < 0) length = 0;
  const a = <u32>fingerprint(ptr, length);
  const b = laneB;
  const e = find(topic, a, b);
  if (e >= 0) return getCount(e) / load<f64>(tf(topic, T_WEIGHT));
  // The same share of the topic's recent messages as on the sketch's clock.
  const sketchTotal = load<f64>(tf(topic, T_SKETCH_TOTAL));
  return sketchTotal > 0 ? <f64>sketchEstimate(sketchRow(topic, a), b) / sketchTotal * recentOf(topic) : 0;
}
