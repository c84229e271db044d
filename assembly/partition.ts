// The six librdkafka partitioners (rd_kafka_msg_partitioner_* in src/rdkafka_msg.c, v2.12),
// all one-liners on top of their hash. Their codes (PARTITIONER_*) and families are in abi.ts:
// bit 0 set = the deterministic variant, bits 1.. = the hash family.

import { murmur2 } from "./murmur2";
import { crc32 } from "./crc32";
import { fnv1a } from "./fnv1a";
import { NULL_KEY, FAMILY_MURMUR2, FAMILY_CRC32, UNDECIDED, PARTITIONER_FAMILY_SHIFT, PARTITIONER_DETERMINISTIC } from "./abi";

// @ts-ignore: decorator
@inline
export function familyOf(algorithm: i32): i32 {
  return algorithm >> PARTITIONER_FAMILY_SHIFT;
}

/** Hash of [ptr, ptr + length) in the given family, as the 32 bits the partitioner uses. */
// @ts-ignore: decorator
@inline
export function hashOf(family: i32, ptr: usize, length: i32): i32 {
  if (family == FAMILY_MURMUR2) return murmur2(ptr, length);
  if (family == FAMILY_CRC32) return <i32>crc32(ptr, length);
  return <i32>fnv1a(ptr, length);
}

/**
 * Partition of a hash. Java: Utils.toPositive(murmur2) % n, toPositive being a mask, not
 * abs(). librdkafka: rd_crc32() and rd_fnv1a() are uint32_t, so `% partition_cnt` is unsigned.
 */
// @ts-ignore: decorator
@inline
export function partitionOfHash(family: i32, hash: i32, partitions: i32): i32 {
  const positive = family == FAMILY_MURMUR2 ? <u32>(hash & 0x7fffffff) : <u32>hash;
  return <i32>(positive % <u32>partitions);
}

/**
 * Partition of one key (length NULL_KEY for a null key). The `*_random` variants do not
 * decide a null key, and `consistent_random` does not decide an empty one either: UNDECIDED.
 * The deterministic variants hash a null key as the empty key (rd_crc32(NULL, 0) == 0).
 */
// @ts-ignore: decorator
@inline
export function partitionOf(algorithm: i32, ptr: usize, length: i32, partitions: i32): i32 {
  if (undecided(algorithm, length)) return UNDECIDED;
  if (length < 0) length = 0;
  const family = familyOf(algorithm);
  return partitionOfHash(family, hashOf(family, ptr, length), partitions);
}

/**
 * Whether a partitioner leaves a key of this length (NULL_KEY for a null key) undecided: a
 * null key for the `*_random` variants, and the empty key too for `consistent_random`.
 */
// @ts-ignore: decorator
@inline
export function undecided(algorithm: i32, length: i32): bool {
  return length <= 0 && (algorithm & PARTITIONER_DETERMINISTIC) == 0 && (length == NULL_KEY || familyOf(algorithm) == FAMILY_CRC32);
}
