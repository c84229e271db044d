// The partitioner as KafkaJS takes it: `new Kafka(...).producer({ createPartitioner })`.
// KafkaJS calls createPartitioner() once per producer and the returned function once per
// message without an explicit partition: ({ topic, partitionMetadata, message }) → partition.
// Beside it in src/kafkajs/, the other KafkaJS adapters: producer.ts (Confluent's KafkaJS-compatible
// producer), consumer.ts and commits.ts (its consumer).

import { DynamicPartitioner } from '../partitioner/partitioner';
import { ORDER_NONE } from '../core/abi';
import { DynamicPartitionerOptions, resolveKafkaJsOptions } from '../core/options';
import { partitionerCode } from '../core/hash';
import { OrderChains, newProducerId, ORDER_HEADER } from '../partitioner/headers';
import { InvalidArgTypeError } from '../core/errors';

export interface KafkaJsPartitionerArgs {
  readonly topic: string;
  readonly partitionMetadata: ReadonlyArray<{ readonly partitionId: number }>;
  readonly message: { key?: Buffer | string | null; partition?: number | null; headers?: Record<string, unknown> };
}

export type KafkaJsPartitioner = (args: KafkaJsPartitionerArgs) => number;

export interface KafkaJsPartitionerOptions extends DynamicPartitionerOptions {
  /** 'spread' (default): add the order header to the messages of spread keys; 'none': never. */
  readonly orderHeaders?: 'spread' | 'none';
}

/** A KafkaJS `createPartitioner`; its `partitioner` property is the DynamicPartitioner behind it (hotKeys(), stats()). */
export interface KafkaJsPartitionerFactory {
  (): KafkaJsPartitioner;
  readonly partitioner: DynamicPartitioner;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * A message we do not mark loses a `kdp-order` entry among the caller's headers (a copy of a
 * consumed message's, whatever its value: string, Buffer or an array of them): a Resequencer
 * would read it as ours. The caller's headers object is not changed (it may be the consumed
 * message's): message.headers becomes a copy without it.
 */
export function dropForwarded(message: KafkaJsPartitionerArgs['message']): void {
  const headers = message.headers;
  if (headers === undefined || headers === null || !hasOwn.call(headers, ORDER_HEADER)) return;
  const { [ORDER_HEADER]: _forwarded, ...rest } = headers;
  message.headers = rest;
}

/**
 * A KafkaJS createPartitioner backed by a DynamicPartitioner. The base partitioner defaults
 * to 'murmur2_random', which is KafkaJS's DefaultPartitioner (and Java's) for keyed messages.
 * For a spread key it adds the order header (docs/ordering.md) to `message.headers`, in place of
 * a `kdp-order` entry already there; on any other message it removes such an entry.
 */
export function createKafkaJsPartitioner(options: KafkaJsPartitionerOptions = {}): KafkaJsPartitionerFactory {
  const { orderHeaders, partitioner: rest } = resolveKafkaJsOptions(options);
  const partitioner = new DynamicPartitioner({ partitioner: 'murmur2_random', ...(rest as DynamicPartitionerOptions) });
  const code = partitionerCode(partitioner.options.partitioner);
  const orders = new OrderChains(partitioner, newProducerId(), code);

  const partition: KafkaJsPartitioner = ({ topic, partitionMetadata, message }) => {
    if (!Array.isArray(partitionMetadata) || partitionMetadata.length === 0) {
      throw new InvalidArgTypeError('partitionMetadata', 'a non-empty array of partitions', partitionMetadata);
    }
    // An explicit partition wins, as in KafkaJS's own partitioners.
    if (typeof message.partition === 'number') {
      dropForwarded(message);
      return message.partition;
    }
    const n = partitionMetadata.length;
    const p = partitioner.decide(topic, message.key, n);
    const order = partitioner.decision.order;
    // The spread replaces a kdp-order entry among the caller's headers (its value, in its place).
    if (order !== ORDER_NONE && orderHeaders === 'spread') message.headers = { ...(message.headers ?? {}), ...orders.header(order, n, p) };
    else dropForwarded(message);
    return p;
  };
  const factory = (() => partition) as KafkaJsPartitionerFactory;
  Object.defineProperty(factory, 'partitioner', { value: partitioner, enumerable: true });
  return factory;
}
