// The decision for one message: hash → count (admission.ts) → cold: the base partitioner's
// partition / hot: where choice.ts puts it; and the decision record the TS side reads after
// each decision. See docs/design.md, "How it works".

import { weight, loadWeight, sketchWeight, advance, useClocks, RENORMALISE_AT } from "./decay";
import { geti, seti, getCount } from "./hotkeys";
import { fingerprint, laneB, laneZero } from "./fingerprint";
import { familyOf, hashOf, partitionOfHash, undecided } from "./partition";
import { eventRoom, setBatchIndex, hotLogged, clearHotLogged } from "./events";
import { tf, loadAt, renormaliseTopic, renormaliseSketch } from "./topics";
import { countMessage, staysHot, turnsHot, sweep, admissionCooled, SWEEP_BATCH } from "./admission";
import { hotPartition, sticky } from "./choice";
import { hotOrder, hotTurned } from "./order";
import { intParam } from "./params";
import {
  FAMILY_MURMUR2, E_STATE, E_WIDTH, E_RETURN, STATE_HOT, T_TOTAL, T_LOAD_TOTAL, T_INVERSE,
  T_MESSAGES, T_SPREAD_MESSAGES, T_MOVED_MESSAGES, T_WEIGHT, T_LOAD_WEIGHT, T_SKETCH_TOTAL, T_GROWTH, T_LOAD_GROWTH,
  CHAIN_NONE, CHAIN_OWED, CHAIN_PINNED, P_ASK_ON_HOT, ORDER_NONE, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN,
  DECISION_SIZE, D_PARTITION, D_ORDER, D_ENTRY, D_WIDTH, D_ZERO, P_SPREAD,
} from "./abi";

/** The decision record: fields D_* (abi.ts), written by every decision. */
export const DECISION: usize = memory.data(<i32>DECISION_SIZE, 16);

let spreadOn: bool; // false: detect and report, never move (spread)
let askOnHot: bool; // a batch stops after a message at which a key turned hot (spreadable())

/**
 * The most events one decision emits: its own (a key turning hot or cooling, or the hot key an
 * admission cooled to take its place: admission.ts), plus one per entry its sweep looks at. The log
 * holds every event until the TS side drains it, which it does after each call; a batch stops
 * early while the log has less room than this (decideBatchAt), and topicReset emits at most one
 * per entry into a drained log: so a log of maxTrackedKeys + EVENT_RESERVE records never fills.
 */
// @ts-ignore: decorator
@inline export const EVENT_RESERVE: i32 = 1 + SWEEP_BATCH;

/** Sets the options from the parameters (params.ts). */
export function decideConfigure(): void {
  spreadOn = intParam(P_SPREAD) != 0;
  askOnHot = intParam(P_ASK_ON_HOT) != 0;
  writeDecision(0, ORDER_NONE, -1, 1, -1);
}

// @ts-ignore: decorator
@inline
function writeDecision(partition: i32, order: i32, entry: i32, width: i32, zero: i32): void {
  store<i32>(DECISION + D_PARTITION, partition);
  store<i32>(DECISION + D_ORDER, order);
  store<i32>(DECISION + D_ENTRY, entry);
  store<i32>(DECISION + D_WIDTH, width);
  store<i32>(DECISION + D_ZERO, zero);
}

/** Counts a message of slot `topic` in its cumulative counters: marked (spread) and moved off its key's partition. */
// @ts-ignore: decorator
@inline
function count(topic: i32, spread: bool, moved: bool): void {
  const m = tf(topic, T_MESSAGES);
  store<f64>(m, load<f64>(m) + 1);
  if (spread) {
    const s = tf(topic, T_SPREAD_MESSAGES);
    store<f64>(s, load<f64>(s) + 1);
  }
  if (moved) {
    const v = tf(topic, T_MOVED_MESSAGES);
    store<f64>(v, load<f64>(v) + 1);
  }
}

/** Loads slot `topic`'s clocks (decay.ts) and counts a message in its totals on the sketch's clock. */
// @ts-ignore: decorator
@inline
function enter(topic: i32): void {
  useClocks(load<f64>(tf(topic, T_WEIGHT)), load<f64>(tf(topic, T_LOAD_WEIGHT)), load<f64>(tf(topic, T_GROWTH)), load<f64>(tf(topic, T_LOAD_GROWTH)));
  const st = tf(topic, T_SKETCH_TOTAL);
  store<f64>(st, load<f64>(st) + sketchWeight);
}

/** Advances slot `topic`'s clocks and the sketch's past a message, stores them back, and rescales what got large. */
// @ts-ignore: decorator
@inline
function leave(topic: i32): void {
  advance();
  store<f64>(tf(topic, T_WEIGHT), weight);
  store<f64>(tf(topic, T_LOAD_WEIGHT), loadWeight);
  if (weight > RENORMALISE_AT || loadWeight > RENORMALISE_AT) renormaliseTopic(topic);
  if (sketchWeight > RENORMALISE_AT) renormaliseSketch();
}

/** Partition for the key at ptr (length NULL_KEY for null) of slot `topic` with n partitions. */
export function decideAt(topic: i32, algorithm: i32, ptr: usize, length: i32, n: i32): i32 {
  const family = familyOf(algorithm);
  enter(topic);
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
  let home = -1;
  if (undecided(algorithm, length)) {
    result = sticky(topic, n);
  } else {
    if (length < 0) length = 0;
    const a = <u32>fingerprint(ptr, length);
    const b = laneB;
    zero = laneZero;
    const base = partitionOfHash(family, family == FAMILY_MURMUR2 ? <i32>a : hashOf(family, ptr, length), n);
    result = base;
    home = base;
    const fair = topicTotal * inverse;
    const e = countMessage(topic, a, b, topicTotal, fair);
    if (e >= 0) {
      entry = e;
      const count = getCount(e);
      const state = geti(E_STATE, e);
      if (state >= STATE_HOT) {
        if (staysHot(e, state, count, fair)) {
          order = ORDER_SPREAD;
          if (geti(E_RETURN, e) == CHAIN_PINNED) {
            order = ORDER_NONE; // not spreadable: on its own partition, unmarked
          } else if (spreadOn) {
            result = hotPartition(topic, e, count, topicTotal, topicLoad, n, base, b, loadFair);
            order = hotOrder(e, base, result);
            if (order == ORDER_ANCHOR) result = base;
          }
        } else if (geti(E_RETURN, e) == CHAIN_OWED) {
          // A key that cools with its chain open: this message goes to its own partition and says so.
          seti(E_RETURN, e, CHAIN_NONE);
          order = ORDER_RETURN;
        }
      } else if (geti(E_RETURN, e) == CHAIN_OWED) {
        // Cooled while it was away (the sweep): its first message since says so, before the key
        // may turn hot again (on its next message): a new chain opened here would not wait for
        // the end of the old one, on partitions a reader may not have read yet.
        seti(E_RETURN, e, CHAIN_NONE);
        order = ORDER_RETURN;
      } else if (!admissionCooled() && turnsHot(topic, e, count, topicTotal, fair, base, loadFair, topicLoad)) {
        order = hotTurned(e);
      }
    }
  }
  if (!spreadOn) order = ORDER_NONE;
  const l = loadAt(topic, result);
  store<f64>(l, load<f64>(l) + loadWeight);
  count(topic, order != ORDER_NONE, home >= 0 && result != home);
  writeDecision(result, order, entry, order == ORDER_SPREAD ? geti(E_WIDTH, entry) : 1, zero);
  leave(topic);
  sweep();
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
  let i = from;
  clearHotLogged();
  for (; i < count; i++) {
    if (!eventRoom(EVENT_RESERVE)) break;
    setBatchIndex(i);
    const length = load<i32>(lengths + (<usize>i << 2));
    store<i32>(results + (<usize>i << 2), decideAt(topic, algorithm, ptr, length, n));
    if (length > 0) ptr += <usize>length;
    // A key turned hot: the TS side asks spreadable() before any more of the batch is decided.
    if (askOnHot && hotLogged) { i++; break; }
  }
  setBatchIndex(0);
  return i;
}

/** Counts a message placed without a decision (a key too long for the key region: never spread). */
export function account(topic: i32, partition: i32): void {
  enter(topic);
  const tt = tf(topic, T_TOTAL);
  store<f64>(tt, load<f64>(tt) + weight);
  const lt = tf(topic, T_LOAD_TOTAL);
  store<f64>(lt, load<f64>(lt) + loadWeight);
  const l = loadAt(topic, partition);
  store<f64>(l, load<f64>(l) + loadWeight);
  count(topic, false, false);
  writeDecision(partition, ORDER_NONE, -1, 1, -1); // the key was not looked at: zero byte not known
  leave(topic);
}
