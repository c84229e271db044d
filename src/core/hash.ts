// Kafka-exact partition functions: the partition each of librdkafka's six built-in
// partitioners (rd_kafka_msg_partitioner_* in src/rdkafka_msg.c, v2.12) picks for a key,
// and Java's Utils.murmur2. The work happens in WebAssembly (assembly/partition.ts); the key
// gets there through key.ts.

import { shared, Core } from './wasm';
import { writeKey, writeKeyChunks, keyBytes, notAKey, packBatches, Key, DOES_NOT_FIT, NULL_LENGTH } from './key';
import { InvalidArgTypeError, InvalidValueError, checkPartitionCount } from './errors';
import {
  FAMILY_MURMUR2, PARTITIONER_FAMILY_SHIFT, PARTITIONER_MURMUR2_RANDOM, PARTITIONER_MURMUR2, PARTITIONER_CONSISTENT_RANDOM, PARTITIONER_CONSISTENT,
  PARTITIONER_FNV1A_RANDOM, PARTITIONER_FNV1A,
} from './abi';

/** librdkafka's `partitioner` names, in the order of their codes (PARTITIONER_* in assembly/abi.ts). */
export const PARTITIONERS = Object.freeze([
  'murmur2_random',
  'murmur2',
  'consistent_random',
  'consistent',
  'fnv1a_random',
  'fnv1a',
] as const);

export type PartitionerName = (typeof PARTITIONERS)[number];

/** A hash family: FAMILY_* in assembly/abi.ts. */
export type Family = number;

/** The partition returned where the partitioner does not decide by the key. */
export { UNDECIDED } from './abi';

/** The code of a partitioner name; throws InvalidValueError listing the valid names. */
export function partitionerCode(name: unknown, argument = 'partitioner'): number {
  switch (name) {
    case 'murmur2_random': return PARTITIONER_MURMUR2_RANDOM;
    case 'murmur2': return PARTITIONER_MURMUR2;
    case 'consistent_random': return PARTITIONER_CONSISTENT_RANDOM;
    case 'consistent': return PARTITIONER_CONSISTENT;
    case 'fnv1a_random': return PARTITIONER_FNV1A_RANDOM;
    case 'fnv1a': return PARTITIONER_FNV1A;
    default: throw new InvalidValueError(argument, PARTITIONERS, name);
  }
}

/** Hash of a key too long for the key region, fed through it in chunks. */
function streamHash(core: Core, family: Family, key: Key): number {
  const bytes = keyBytes(key);
  const { exports } = core;
  exports.streamStart(family, bytes.length);
  return exports.streamFinish(writeKeyChunks(core, bytes, exports.streamUpdate));
}

/**
 * Partition, under partitioner `code` among `n`, of a key writeKey found too long for the key
 * region (never null: a long key is always decided by).
 */
export function partitionOfLongKey(core: Core, code: number, key: Key, n: number): number {
  const family: Family = code >> PARTITIONER_FAMILY_SHIFT;
  return core.exports.hashPartition(family, streamHash(core, family, key), n);
}

/**
 * Java's `Utils.murmur2(key)` (kafka-clients), as a signed int32. A string is hashed as its
 * UTF-8 bytes.
 */
export function murmur2(key: Key): number {
  const core = shared;
  const length = writeKey(core, core.keys, core.keyCapacity, key, 'key');
  if (length === NULL_LENGTH) throw notAKey('key', key, true);
  if (length !== DOES_NOT_FIT) return core.exports.hash(FAMILY_MURMUR2, length);
  return streamHash(core, FAMILY_MURMUR2, key);
}

/**
 * The partition librdkafka's `partitioner` (default 'murmur2_random', the Java producer's
 * choice for keyed records) picks for `key` among `numPartitions`, or -1 where that
 * partitioner does not decide by the key (a null key for the `*_random` ones, and also
 * the empty key for 'consistent_random').
 */
export function partitionForKey(
  key: Key | null | undefined,
  numPartitions: number,
  partitioner: PartitionerName = 'murmur2_random',
): number {
  // The common case (a small positive int32, the default partitioner) costs a few comparisons.
  if (typeof numPartitions !== 'number' || (numPartitions | 0) !== numPartitions || numPartitions < 1) checkPartitionCount(numPartitions);
  const code = partitioner === 'murmur2_random' ? PARTITIONER_MURMUR2_RANDOM : partitionerCode(partitioner);
  const core = shared;
  const length = writeKey(core, core.keys, core.keyCapacity, key, 'key');
  if (length !== DOES_NOT_FIT) return core.exports.partition(code, length, numPartitions);
  return partitionOfLongKey(core, code, key as Key, numPartitions);
}

/** partitionForKey for many keys, one WebAssembly call per batch of packed keys. */
export function partitionForKeys(
  keys: ReadonlyArray<Key | null | undefined>,
  numPartitions: number,
  partitioner: PartitionerName = 'murmur2_random',
): Int32Array {
  if (!Array.isArray(keys)) throw new InvalidArgTypeError('keys', 'an array of keys', keys);
  checkPartitionCount(numPartitions);
  const code = partitionerCode(partitioner);
  const core = shared;
  const out = new Int32Array(keys.length);
  packBatches(core, keys, out, (count) => core.exports.partitionBatch(code, count, numPartitions),
    (i) => partitionOfLongKey(core, code, keys[i] as Key, numPartitions));
  return out;
}
