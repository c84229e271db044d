// allowedPartitions(): the partitions a spread key may use, computed as the core computes them
// (its normal partition, then steps of spreadStep through the others: assembly/spread.ts), so
// that a consumer can tell where a spread key's messages may be without a partitioner.

import { shared } from '../core/wasm';
import { writeKey, Key, DOES_NOT_FIT, NULL_LENGTH } from '../core/key';
import { partitionerCode, PartitionerName } from '../core/hash';
import { InvalidArgTypeError, OutOfRangeError, checkPartitionCount } from '../core/errors';

/**
 * The partitions a hot `key` may use among `numPartitions` when allowed `width` of them, in
 * order: its normal partition (partitionForKey) first. The same for every producer, so a
 * consumer can tell where a spread key's messages may be. Empty for a key the partitioner
 * does not decide by (see partitionForKey).
 */
export function allowedPartitions(
  key: Key | null | undefined,
  numPartitions: number,
  width: number,
  partitioner: PartitionerName = 'murmur2_random',
): number[] {
  checkPartitionCount(numPartitions);
  if (typeof width !== 'number') throw new InvalidArgTypeError('width', 'an integer >= 1', width);
  if (!Number.isInteger(width) || width < 1) throw new OutOfRangeError('width', 'an integer >= 1', width);
  const code = partitionerCode(partitioner);
  const core = shared;
  const length = writeKey(core, core.keys, core.keyCapacity, key, 'key');
  if (length === DOES_NOT_FIT) throw new OutOfRangeError('key', `at most ${core.keyCapacity} bytes`, key);
  const base = core.exports.partition(code, length, numPartitions);
  if (base < 0) return [];
  const step = core.exports.spreadStep(length === NULL_LENGTH ? 0 : length, numPartitions);
  const out = new Array<number>(Math.min(width, numPartitions));
  for (let i = 0, p = base; i < out.length; i++) {
    out[i] = p;
    p += step;
    if (p >= numPartitions) p -= numPartitions;
  }
  return out;
}
