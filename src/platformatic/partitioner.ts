// The partitioner as @platformatic/kafka's producer takes it: `new Producer({ partitioner })`
// or `send({ messages, partitioner })`. The producer calls it as (message, key, { metadata }) for
// each message without a numeric partition, the key as its key serializer made it, and takes the
// result modulo the topic's partition count. It serializes a message's headers before: this hook
// cannot write order headers (wrapPlatformaticProducer, producer.ts beside it, can). Nothing of
// @platformatic/kafka (an ES module, Node >= 22) is imported: the producer calls in.

import { DynamicPartitioner } from '../partitioner/partitioner';
import { type DynamicPartitionerOptions, resolvePlatformaticPartitionerOptions } from '../core/options';
import { murmur2 } from '../core/hash';
import { InvalidOptionError, OutOfRangeError } from '../core/errors';

/** A message as the producer hands it to its partitioner (the field read here; the others are ignored). */
export interface PlatformaticMessageLike {
  readonly topic: string;
  readonly [field: string]: unknown;
}

/** The producer's metadata (ClusterMetadata): the partition count of each topic it knows. */
export interface PlatformaticMetadataLike {
  readonly topics: { get(topic: string): { readonly partitionsCount: number } | undefined };
}

/** The partitioner's third argument: `{ metadata: producer.currentMetadata }` (undefined before the first read). */
export interface PlatformaticPartitionerContext {
  readonly metadata?: PlatformaticMetadataLike | undefined;
}

export type PlatformaticPartitioner = (message: PlatformaticMessageLike, key: Buffer | string | null | undefined, context?: PlatformaticPartitionerContext) => number;

export interface PlatformaticPartitionerOptions extends Omit<DynamicPartitionerOptions, 'partitioner'> {
  /** Kafka's murmur2 ('murmur2_random', the default: Java's; 'murmur2': null keys hash as empty, as librdkafka's). */
  readonly partitioner?: 'murmur2_random' | 'murmur2';
  /**
   * Only 'none', and required unless spread is false: the hook cannot write headers, so the
   * messages of a spread key carry no order header (wrapPlatformaticProducer writes them).
   */
  readonly orderHeaders?: 'none';
}

/** A @platformatic/kafka partitioner; its `partitioner` property is the DynamicPartitioner behind it (hotKeys(), stats(), events). */
export interface PlatformaticPartitionerFunction extends PlatformaticPartitioner {
  readonly partitioner: DynamicPartitioner;
}

/** Kafka's toPositive(). */
const POSITIVE = 0x7fffffff;

/**
 * Where a message goes while its topic's count is not known (the producer's first send): Kafka's
 * toPositive(murmur2(key)), which the producer reduces `% partitionsCount` as Kafka does; a null
 * key, under 'murmur2', the empty key's; under 'murmur2_random', the next of a round robin.
 */
export function unplacedPartition(key: Uint8Array | string | null, nullKeysHashed: boolean, next: number): number {
  if (key !== null) return murmur2(key) & POSITIVE;
  return nullKeysHashed ? murmur2('') & POSITIVE : next & POSITIVE;
}

/**
 * A partitioner for @platformatic/kafka's producer (its `partitioner` option, or send()'s)
 * backed by a DynamicPartitioner: Kafka's partition (Java's toPositive(murmur2(key)) % n) for
 * every cold key, hot keys spread over the least loaded partitions without order headers. Unlike
 * the producer's defaultPartitioner (`murmur2(key) >>> 0`), it is Kafka-exact for keys whose
 * hash is negative. `options.orderHeaders: 'none'` must be given to spread (or spread: false):
 * a hook cannot write headers, so a spread key's order is not restored by consumers.
 */
export function createPlatformaticPartitioner(options: PlatformaticPartitionerOptions = {}): PlatformaticPartitionerFunction {
  const { producer: settings, partitioner: rest } = resolvePlatformaticPartitionerOptions(options);
  if (settings.orderHeaders === undefined && rest.spread !== false) {
    throw new InvalidOptionError('options.orderHeaders', "'none' (a partitioner hook cannot write order headers: wrapPlatformaticProducer can), or options.spread false", undefined);
  }
  const partitioner = new DynamicPartitioner({ ...(rest as DynamicPartitionerOptions), partitioner: settings.partitioner });
  const nullKeysHashed = settings.partitioner === 'murmur2';
  const max = partitioner.options.maxPartitions;
  const warned = new Set<string>();
  let roundRobin = 0;
  const partition: PlatformaticPartitioner = (message, key, context) => {
    const topic = message.topic;
    const n = context?.metadata?.topics.get(topic)?.partitionsCount;
    // A key serializer's undefined (or anything not bytes) is a null key on the wire.
    const k = typeof key === 'string' || key instanceof Uint8Array ? key : null;
    if (n !== undefined && n > 0 && n <= max) return partitioner.partition(topic, k, n);
    // A throw here would escape the producer's send() synchronously: a topic beyond maxPartitions
    // is partitioned as Kafka does, without hot-key spreading, said once as a 'warning'.
    if (n !== undefined && n > max && !warned.has(topic)) {
      warned.add(topic);
      partitioner.emit('warning', new OutOfRangeError(`partitionsCount of ${topic}`, `at most options.maxPartitions (${max}): its keys are not spread`, n));
    }
    return unplacedPartition(k, nullKeysHashed, roundRobin++);
  };
  Object.defineProperty(partition, 'partitioner', { value: partitioner, enumerable: true });
  return partition as PlatformaticPartitionerFunction;
}
