// The module's exports: numbers in, numbers out. Key bytes travel through the regions
// laid out in memory.ts; see src/core/wasm.ts for the JS side of the contract.

import { KEYS, LENGTHS, RESULTS, KEY_CAPACITY, BATCH_CAPACITY } from "./memory";
import { partitionOf, hashOf, partitionOfHash } from "./partition";
import * as stream from "./stream";

export function keysPtr(): usize { return KEYS; }
export function lengthsPtr(): usize { return LENGTHS; }
export function resultsPtr(): usize { return RESULTS; }
export function keyCapacity(): i32 { return KEY_CAPACITY; }
export function batchCapacity(): i32 { return BATCH_CAPACITY; }

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

// ---- hot-key detection and spreading (spread.ts); each DynamicPartitioner has its own instance ----

import * as spread from "./spread";
import * as hotkeys from "./hotkeys";

export function configure(
  width: i32, depth: i32, entries: i32, topics: i32, partitions: i32, growth: f64, loadGrowth: f64,
  hot: f64, cool: f64, admit: f64, minimum: f64, warm: f64, factor: f64, most: i32, on: i32, run: i32,
  widen: f64, relief: f64, sample: i32, hotRun: i32, relocate: i32,
): void {
  spread.configure(width, depth, entries, topics, partitions, growth, loadGrowth, hot, cool, admit, minimum, warm, factor, most, on, run, widen, relief, sample, hotRun, relocate);
}

/** Partition for the key at KEYS in topic slot `topic`; see spread.ts. */
export function decide(topic: i32, algorithm: i32, length: i32, partitions: i32): i32 {
  return spread.decideAt(topic, algorithm, KEYS, length, partitions);
}

/**
 * decide() for keys [from, count) packed as for partitionBatch. Returns the index of the
 * first key not decided (count, or less when the event log must be drained first).
 */
export function decideBatch(topic: i32, algorithm: i32, from: i32, count: i32, partitions: i32): i32 {
  return spread.decideBatchAt(topic, algorithm, KEYS, LENGTHS, RESULTS, from, count, partitions);
}

export function topicReset(topic: i32, partitions: i32): void { spread.topicReset(topic, partitions); }
export function topicResize(topic: i32, partitions: i32): void { spread.topicResize(topic, partitions); }
export function tick(factor: f64, loadFactor: f64): void { spread.tick(factor, loadFactor); }
export function currentWeight(): f64 { return spread.currentWeight(); }
export function currentLoadWeight(): f64 { return spread.currentLoadWeight(); }

/** The stride of the allowed partitions of the key at KEYS among `partitions`. */
export function spreadStep(length: i32, partitions: i32): i32 {
  return spread.spreadStepAt(KEYS, length, partitions);
}

export function cellsPtr(): usize { return spread.CELLS; }
export function eventsPtr(): usize { return spread.events; }
// Topic fields: slot t's field is at its pointer + t * topicStride() bytes.
export function topicStride(): usize { return <usize>1 << spread.TOPIC_SHIFT; }
export function topicSizePtr(): usize { return spread.tRecords + spread.T_SIZE; }
export function topicTotalPtr(): usize { return spread.tRecords + spread.T_TOTAL; }
export function topicLoadTotalPtr(): usize { return spread.tRecords + spread.T_LOAD_TOTAL; }
export function topicLoadsPtr(): usize { return spread.tLoads; }
export function topicPenaltyPtr(): usize { return spread.tPenalty; }
export function trackedKeys(): i32 { return hotkeys.used(); }
export function refusedAdmissions(): f64 { return spread.refused; }
// Entry fields: entry e's field is at its pointer + e * entryStride() bytes.
export function entryStride(): usize { return <usize>1 << hotkeys.ENTRY_SHIFT; }
export function entryTopicPtr(): usize { return hotkeys.entries + hotkeys.eTopic; }
export function entryCountPtr(): usize { return hotkeys.entries + hotkeys.eCount; }
export function entryStatePtr(): usize { return hotkeys.entries + hotkeys.eState; }
export function entryWidthPtr(): usize { return hotkeys.entries + hotkeys.eWidth; }
export function entrySizePtr(): usize { return hotkeys.entries + hotkeys.eSize; }
export function account(topic: i32, partition: i32): void { spread.account(topic, partition); }
export function estimate(topic: i32, length: i32): f64 { return spread.estimateAt(topic, KEYS, length); }
export function recentMessages(topic: i32): f64 { return spread.recentMessages(topic); }
