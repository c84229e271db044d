// The module's exports: numbers in, numbers out. Key bytes travel through the regions
// laid out in memory.ts; the numbers both sides agree on (codes, markers, record layouts) are
// in abi.ts, mirrored in src/core/abi.ts; src/core/wasm.ts is the JS side of the contract.

import { KEYS, LENGTHS, RESULTS } from "./memory";
import { partitionOf, hashOf, partitionOfHash } from "./partition";
import * as stream from "./stream";

export function keysPtr(): usize { return KEYS; }
export function lengthsPtr(): usize { return LENGTHS; }
export function resultsPtr(): usize { return RESULTS; }

/** Hash of the `length` key bytes at KEYS in a family (0 murmur2, 1 CRC-32, 2 FNV-1a). */
export function hash(family: i32, length: i32): i32 {
  return hashOf(family, KEYS, length);
}

/** Partition of the key at KEYS (`length` -1 for a null key) under a partitioner code. */
export function partition(algorithm: i32, length: i32, partitions: i32): i32 {
  return partitionOf(algorithm, KEYS, length, partitions);
}

/** Partition of a hash computed earlier (by the stream functions) in a family. */
export function hashPartition(family: i32, hashValue: i32, partitions: i32): i32 {
  return partitionOfHash(family, hashValue, partitions);
}

/**
 * Partitions of `count` keys packed back to back at KEYS, their lengths in
 * LENGTHS (-1 for null, taking no bytes), written to RESULTS.
 */
export function partitionBatch(algorithm: i32, count: i32, partitions: i32): void {
  let ptr = KEYS;
  for (let i = 0; i < count; i++) {
    const length = load<i32>(LENGTHS + (<usize>i << 2));
    store<i32>(RESULTS + (<usize>i << 2), partitionOf(algorithm, ptr, length, partitions));
    if (length > 0) ptr += <usize>length; // keys are packed back to back
  }
}

export function streamStart(family: i32, totalLength: i32): void {
  stream.streamStart(family, totalLength);
}
export function streamUpdate(length: i32): void {
  stream.streamUpdate(KEYS, length);
}
export function streamFinish(length: i32): i32 {
  return stream.streamFinish(KEYS, length);
}

// ---- hot-key detection and spreading; each DynamicPartitioner has its own instance ----
// configure.ts sets it up, decide.ts decides (with admission.ts: which keys are tracked and
// hot; choice.ts: where a hot key goes, with relocate.ts, spread.ts and relief.ts; order.ts: its
// order markers), topics.ts keeps the per-topic state, events.ts the event log.

import { configure as setUp } from "./configure";
import { PARAMS, intParam } from "./params";
import { decideAt, decideBatchAt, account as accountAt, DECISION } from "./decide";
import * as topics from "./topics";
import * as choice from "./choice";
import { CELLS, events } from "./events";
import { refused, estimateAt } from "./admission";
import { spreadStepAt } from "./spread";
import { topicsWithState, currentTableScale, arenaBound, maxScale } from "./configure";
import * as hotkeys from "./hotkeys";
import { E_RETURN, CHAIN_PINNED, P_ENTRIES } from "./abi";

/** Sets up hot-key detection from the parameters written at paramsPtr() (abi.ts P_*). */
export function configure(): void { setUp(); }
export function paramsPtr(): usize { return PARAMS; }

/** Partition for the key at KEYS in topic slot `topic`; its by-products in the decision record. */
export function decide(topic: i32, algorithm: i32, length: i32, partitions: i32): i32 {
  return decideAt(topic, algorithm, KEYS, length, partitions);
}

/**
 * decide() for keys [from, count) packed as for partitionBatch. Returns the index of the
 * first key not decided (count, or less when the event log must be drained first).
 */
export function decideBatch(topic: i32, algorithm: i32, from: i32, count: i32, partitions: i32): i32 {
  return decideBatchAt(topic, algorithm, KEYS, LENGTHS, RESULTS, from, count, partitions);
}

export function topicReset(topic: i32, partitions: i32): void { topics.topicReset(topic, partitions); }
export function topicResize(topic: i32, partitions: i32): void { topics.topicResize(topic, partitions); }
export function tick(factor: f64, loadFactor: f64): void { topics.tick(factor, loadFactor); }
/** One tick of the run clock of split keys' timed runs (choice.ts; splitRunMs). */
export function runTick(): void { choice.runTick(); }
/** Slot `topic`'s key clock and load clock (decay.ts): counts divided by them are recent messages. */
export function currentWeight(topic: i32): f64 { return topics.topicWeight(topic); }
export function currentLoadWeight(topic: i32): f64 { return topics.topicLoadWeight(topic); }
/**
 * The number of topics with state: the sketch's half-life is the key horizon times it, and the
 * shared tables grow with it. True when they grew (the entries and the event log moved).
 */
export function setTopicsWithState(count: i32): bool { return topicsWithState(count); }
/** The shared tables' factor over the options' sizes now (a power of two). */
export function tableScale(): i32 { return currentTableScale(); }
/** The capacity of the table of tracked keys now. */
export function trackedKeysCapacity(): i32 { return hotkeys.capacity; }
/** The most entries the table of tracked keys reaches (its size for maxTopics topics). */
export function trackedKeysBound(): i32 { return intParam(P_ENTRIES) * maxScale(); }
/** The most bytes of memory this instance can take, from its options. */
export function memoryBound(): f64 { return arenaBound(); }

/** The stride of the allowed partitions of the key at KEYS among `partitions`. */
export function spreadStep(length: i32, partitions: i32): i32 {
  return spreadStepAt(KEYS, length, partitions);
}

// Where the regions the TS side reads start; the layout of their records is in abi.ts.
export function cellsPtr(): usize { return CELLS; }
export function decisionPtr(): usize { return DECISION; }
export function eventsPtr(): usize { return events; }
export function topicRecordsPtr(): usize { return topics.tRecords; }
export function entriesPtr(): usize { return hotkeys.entries; }
export function trackedKeys(): i32 { return hotkeys.used(); }
export function refusedAdmissions(): f64 { return refused; }
export function account(topic: i32, partition: i32): void { accountAt(topic, partition); }
/** The application's spreadable() refused tracked entry e: it stays on its own partition while tracked (CHAIN_PINNED). */
export function pin(entry: i32): void { hotkeys.seti(E_RETURN, entry, CHAIN_PINNED); }
/** Messages of tracked entry e's key wait in the producer (held 1) or no longer (0): while held it is never freed. */
export function hold(entry: i32, held: i32): void { hotkeys.setHeld(entry, held != 0); }
export function estimate(topic: i32, length: i32): f64 { return estimateAt(topic, KEYS, length); }
export function recentMessages(topic: i32): f64 { return topics.recentMessages(topic); }
