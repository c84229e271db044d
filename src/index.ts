// kafka-dynamic-partitioner: Kafka-exact partitioning in WebAssembly.

export { murmur2, partitionForKey, partitionForKeys, PARTITIONERS, UNDECIDED } from './hash';
export type { PartitionerName } from './hash';
export type { Key } from './key';
export { InvalidArgTypeError, OutOfRangeError, InvalidValueError } from './errors';
export type { ErrorCode } from './errors';
