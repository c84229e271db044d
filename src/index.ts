// kafka-dynamic-partitioner: Kafka-exact partitioning in WebAssembly.

export { murmur2, partitionForKey, partitionForKeys, PARTITIONERS, UNDECIDED } from './hash';
export type { PartitionerName } from './hash';
export type { Key } from './key';
export { InvalidArgTypeError, OutOfRangeError, InvalidValueError, InvalidOptionError } from './errors';
export type { ErrorCode } from './errors';
export { DynamicPartitioner, allowedPartitions } from './partitioner';
export type { HotKey, TopicStats, PartitionerStats, TrackedKeyStats } from './partitioner';
export { DEFAULTS } from './options';
export type { DynamicPartitionerOptions, Horizon, SketchOptions } from './options';
export { DynamicProducer, wrapProducer, PRODUCER_DEFAULTS } from './producer';
export type { DynamicProducerOptions, DeliveryReport, Value, Headers, ProducerLike } from './producer';
export { ORDER_HEADER, decodeOrderHeader, encodeOrderHeader } from './headers';
export type { OrderHeader, OrderKind } from './headers';
export type { ProducerMetrics, TopicMetrics } from './metrics';
export { KafkaError, StateError, UndeliveredError, HandlerError } from './errors';
export { createKafkaJsPartitioner } from './kafkajs';
export type { KafkaJsPartitionerFactory, KafkaJsPartitioner, KafkaJsPartitionerOptions, KafkaJsPartitionerArgs } from './kafkajs';
export { ORDER_NONE, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED } from './partitioner';
export { Resequencer, RESEQUENCER_DEFAULTS } from './resequencer';
export type { ResequencerOptions, Release, ConsumedMessage } from './resequencer';
export { DynamicConsumer, CONSUMER_DEFAULTS } from './consumer';
export type { DynamicConsumerOptions, MessageHandler, HandledInfo } from './consumer';
export { LagMonitor } from './lag';
export type { LagMonitorOptions, Lag } from './lag';
