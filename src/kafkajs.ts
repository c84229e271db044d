// The partitioner as KafkaJS takes it: `new Kafka(...).producer({ createPartitioner })`.
// KafkaJS calls createPartitioner() once per producer and the returned function once per
// message without an explicit partition: ({ topic, partitionMetadata, message }) → partition.

import { DynamicPartitioner, ORDER_NONE } from './partitioner';
import { DynamicPartitionerOptions } from './options';
import { partitionerCode } from './hash';
import { OrderChains, newProducerId } from './headers';
import { InvalidArgTypeError, InvalidOptionError } from './errors';

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

/**
 * A KafkaJS createPartitioner backed by a DynamicPartitioner. The base partitioner defaults
 * to 'murmur2_random', which is KafkaJS's DefaultPartitioner (and Java's) for keyed messages.
 * For a spread key it adds the order header (see README) to `message.headers`.
 */
export function createKafkaJsPartitioner(options: KafkaJsPartitionerOptions = {}): KafkaJsPartitionerFactory {
  if (typeof options !== 'object' || options === null) throw new InvalidOptionError('options', 'an object', options);
  const { orderHeaders = 'spread', ...rest } = options;
  if (orderHeaders !== 'spread' && orderHeaders !== 'none') throw new InvalidOptionError('options.orderHeaders', "'spread' or 'none'", orderHeaders);
  const partitioner = new DynamicPartitioner({ partitioner: 'murmur2_random', ...rest });
  const code = partitionerCode(partitioner.options.partitioner);
  const orders = new OrderChains(partitioner, newProducerId(), code);

  const partition: KafkaJsPartitioner = ({ topic, partitionMetadata, message }) => {
    if (!Array.isArray(partitionMetadata) || partitionMetadata.length === 0) {
      throw new InvalidArgTypeError('partitionMetadata', 'a non-empty array of partitions', partitionMetadata);
    }
    // An explicit partition wins, as in KafkaJS's own partitioners.
    if (typeof message.partition === 'number') return message.partition;
    const n = partitionMetadata.length;
    const p = partitioner.partition(topic, message.key, n);
    const order = partitioner.lastOrder();
    if (order !== ORDER_NONE && orderHeaders === 'spread') message.headers = { ...(message.headers ?? {}), ...orders.header(order, n) };
    return p;
  };
  const factory = (() => partition) as KafkaJsPartitionerFactory;
  Object.defineProperty(factory, 'partitioner', { value: partitioner, enumerable: true });
  return factory;
}
