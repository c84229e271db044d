// Kafka-exact partition functions: the partition each of librdkafka's six built-in
// partitioners (rd_kafka_msg_partitioner_* in src/rdkafka_msg.c, v2.12) picks for a key,
// and Java's Utils.murmur2. The work happens in WebAssembly (assembly/partition.ts).

import { shared, Core } from './wasm';
import { writeKey, keyBytes, notAKey, Key, DOES_NOT_FIT, NULL_LENGTH } from './key';
import { InvalidArgTypeError, InvalidValueError, OutOfRangeError } from './errors';
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

/** Throws unless `n` is a usable partition count: an integer in [1, 2^31 - 1]. */
export function checkPartitionCount(n: unknown, argument = 'numPartitions'): void {
  if (typeof n !== 'number') throw new InvalidArgTypeError(argument, 'an integer >= 1', n);
  if (!(n >= 1 && n <= 0x7fffffff && Math.floor(n) === n)) {
    throw new OutOfRangeError(argument, 'an integer >= 1 and < 2^31', n);
  }
}

/** Hash of a key too long for the key region, fed through it in chunks. */
export function streamHash(core: Core, family: Family, key: Key): number {
  const bytes = keyBytes(key);
  const chunk = core.keyCapacity; // a multiple of 4, as murmur2's blocks need
  const { exports, bytes: memory, keys } = core;
  exports.streamStart(family, bytes.length);
  let offset = 0;
  for (; bytes.length - offset > chunk; offset += chunk) {
    memory.set(bytes.subarray(offset, offset + chunk), keys);
    exports.streamUpdate(chunk);
  }
  memory.set(bytes.subarray(offset), keys);
  return exports.streamFinish(bytes.length - offset);
}

/** Partition of one key in `core`; arguments already checked except the key's type. */
export function partitionIn(core: Core, code: number, key: unknown, n: number, argument: string | number): number {
  const length = writeKey(core, core.keys, core.keyCapacity, key, argument);
  if (length !== DOES_NOT_FIT) return core.exports.partition(code, length, n);
  const family: Family = code >> PARTITIONER_FAMILY_SHIFT;
  return core.exports.hashPartition(family, streamHash(core, family, key as Key), n);
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
  return partitionIn(core, code, key, numPartitions, 'key');
}

/** partitionForKey for many keys, one WebAssembly call per batch of packed keys. */
export function partitionForKeys(
  keys: ReadonlyArray<Key | null | undefined>,
  numPartitions: number,
  partitioner: PartitionerName = 'murmur2_random',
): Int32Array {
  if (!Array.isArray(keys)) throw new InvalidArgTypeError('keys', 'an array of keys', keys);
  checkPartitionCount(numPartitions);
  return partitionBatchIn(shared, partitionerCode(partitioner), keys, numPartitions, new Int32Array(keys.length));
}

/**
 * Fills `out` with the partitions of `keys`; see packBatches. A key longer than the whole
 * key region is hashed on its own, in chunks.
 */
export function partitionBatchIn(
  core: Core,
  code: number,
  keys: ReadonlyArray<unknown>,
  n: number,
  out: Int32Array,
): Int32Array {
  packBatches(core, keys, out, (count) => core.exports.partitionBatch(code, count, n), (i) => partitionIn(core, code, keys[i], n, i));
  return out;
}

/**
 * The batch loop shared by partitionForKeys and DynamicPartitioner.partitionBatch: keys are
 * packed back to back into the key region with their lengths in the lengths table; each
 * full region (or full lengths table) is one WebAssembly call, `call(count, start)` (`start`:
 * the index in `keys` of the first key packed), whose results go to `out` (then
 * `after(start, count)`). A run of ASCII string keys is written with one
 * join and one native write; other keys one by one. A key too long for the region goes
 * through `single(i)`.
 */
export function packBatches(
  core: Core,
  keys: ReadonlyArray<unknown>,
  out: Int32Array,
  call: (count: number, start: number) => void,
  single: (index: number) => number,
  after?: (start: number, count: number) => void,
): void {
  const { i32, keys: base, keyCapacity, lengths, results, batchCapacity } = core;
  let start = 0; // index of the first key of the pending call
  let count = 0;
  let used = 0;
  const flush = (): void => {
    if (count === 0) return;
    call(count, start);
    out.set(i32.subarray(results, results + count), start);
    after?.(start, count);
    start += count;
    count = 0;
    used = 0;
  };
  const total = keys.length;
  let i = 0;
  while (i < total) {
    // The longest run of string keys from i that fits what is left of the region and table.
    let end = i;
    let bytes = 0;
    const most = Math.min(total, i + batchCapacity - count);
    for (; end < most; end++) {
      const key = keys[end];
      if (typeof key !== 'string' || bytes + key.length > keyCapacity - used) break;
      bytes += key.length;
    }
    if (end - i >= RUN && writeAsciiRun(core, base + used, bytes, keys, i, end)) {
      for (let j = i; j < end; j++) i32[lengths + count++] = (keys[j] as string).length;
      used += bytes;
      i = end;
      if (count === batchCapacity) flush();
      continue;
    }
    // One key at a time: not a string, not ASCII, or a short run.
    const key = keys[i];
    let length = writeKey(core, base + used, keyCapacity - used, key, i);
    if (length === DOES_NOT_FIT) {
      flush();
      length = writeKey(core, base, keyCapacity, key, i);
      if (length === DOES_NOT_FIT) {
        out[i] = single(i);
        start = i + 1;
        i++;
        continue;
      }
    }
    i32[lengths + count] = length;
    count++;
    if (length > 0) used += length;
    if (count === batchCapacity) flush();
    i++;
  }
  flush();
}

// Runs of at least this many string keys are joined and written at once.
const RUN = 8;
const encoder = new TextEncoder();

/**
 * Writes keys[from..to), strings of `bytes` UTF-16 units in all, back to back at `at`: true
 * when every one was ASCII (one byte per unit), false (region contents undefined) otherwise.
 */
function writeAsciiRun(core: Core, at: number, bytes: number, keys: ReadonlyArray<unknown>, from: number, to: number): boolean {
  const joined = (from === 0 && to === keys.length ? keys : keys.slice(from, to)).join('');
  const r = encoder.encodeInto(joined, core.bytes.subarray(at, at + bytes));
  return r.read === bytes && r.written === bytes;
}
