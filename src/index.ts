// kafka-dynamic-partitioner: Kafka-exact partitioning in WebAssembly.

export { murmur2, partitionForKey, partitionForKeys, PARTITIONERS, UNDECIDED } from './core/hash';
export type { PartitionerName } from './core/hash';
export type { Key } from './core/key';
export { KdpError, InvalidArgTypeError, OutOfRangeError, InvalidValueError, InvalidOptionError } from './core/errors';
export type { ErrorCode } from './core/errors';
export { DynamicPartitioner, allowedPartitions } from './partitioner/partitioner';
export type { HotKey, TopicStats, PartitionerStats, TrackedKeyStats, Decision } from './partitioner/partitioner';
export { DEFAULTS } from './core/options';
export type { DynamicPartitionerOptions, Horizon, SketchOptions } from './core/options';
export { DynamicProducer, wrapProducer, PRODUCER_DEFAULTS } from './producer/producer';
export type { DynamicProducerOptions, DeliveryReport, Value, Headers, ProducerLike } from './producer/producer';
export { ORDER_HEADER, decodeOrderHeader, encodeOrderHeader } from './partitioner/headers';
export type { OrderHeader, OrderKind } from './partitioner/headers';
export type { ProducerMetrics, TopicMetrics } from './producer/metrics';
export { KafkaError, StateError, UndeliveredError, HandlerError, CallbackError, TopicCapacityError, InternalError } from './core/errors';
export { createKafkaJsPartitioner } from './partitioner/kafkajs';
export type { KafkaJsPartitionerFactory, KafkaJsPartitioner, KafkaJsPartitionerOptions, KafkaJsPartitionerArgs } from './partitioner/kafkajs';
export { ORDER_NONE, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED } from './partitioner/partitioner';
export { Resequencer, RESEQUENCER_DEFAULTS } from './consumer/resequencer';
export type { ResequencerOptions, Release, ConsumedMessage } from './consumer/resequencer';
export { DynamicConsumer, CONSUMER_DEFAULTS } from './consumer/consumer';
export type { DynamicConsumerOptions, MessageHandler, HandledInfo } from './consumer/consumer';
export { LagMonitor } from './consumer/lag';
export type { LagMonitorOptions, Lag } from './consumer/lag';
export { wrapKafkaJsProducer, KafkaJsDynamicProducer } from './producer/kafkajs-producer';
export type { KafkaJsProducerOptions, KafkaJsProducerLike, KafkaJsAdminLike, KafkaJsMessage, KafkaJsRecord, KafkaJsBatch } from './producer/kafkajs-producer';
export type { KafkaLibrary } from './core/library';
