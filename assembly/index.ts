// The module's exports: numbers in, numbers out. Key bytes travel through the regions
// laid out in memory.ts; see src/wasm.ts for the JS side of the contract.

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
 * Partitions of `count` keys packed back to back at KEYS, their lengths in LENGTHS (-1 for
 * null, taking no bytes), written to RESULTS.
 */
export function partitionBatch(algorithm: i32, count: i32, partitions: i32): void {
  let ptr = KEYS;
  for (let i = 0; i < count; i++) {
    const length = load<i32>(LENGTHS + (<usize>i << 2));
    store<i32>(RESULTS + (<usize>i << 2), partitionOf(algorithm, ptr, length, partitions));
    if (length > 0) ptr += <usize>length;
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
