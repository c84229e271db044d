// The shapes wrapKafkaJsConsumer (consumer.ts) takes and gives, and what it uses of the consumers it wraps: Confluent's KafkaJS
// consumer (and its internal client) and KafkaJS 2.x's (with a KafkaJS admin client).

import type { ConsumedMessage } from '../delivery/resequencer';
import type { DeliveryOptions } from '../delivery/options';
import type { HandledInfo, PartitionOffset } from '../delivery/dispatch';
import type { KafkaJsConsumerAdmin } from '../core/group-options';

/** The engine's options (src/delivery/options.ts; concurrency is run()'s partitionsConsumedConcurrently), and the admin client KafkaJS 2.x's consumer needs. */
export interface KafkaJsConsumerOptions extends DeliveryOptions<KafkaJsEachMessagePayload> {
  /**
   * KafkaJS 2.x's consumer only (required there, refused with Confluent's): an admin client of the same cluster (`kafka.admin()`) that
   * reads the group's committed offsets and records, that consumer having no committed(). connect() connects it; the application disconnects it.
   */
  readonly admin?: KafkaJsAdminClient;
  /**
   * The group protocol the consumer joins with, when the application wants it checked: 'consumer' (KIP-848) is refused with
   * KafkaJS 2.x's consumer (it has none); with Confluent's, connect() refuses a value its configuration's 'group.protocol' does not give.
   */
  readonly groupProtocol?: 'classic' | 'consumer';
}

/** A message as the KafkaJS API hands it over (the fields read here; the others are passed on). */
export interface KafkaJsConsumedMessage {
  key: Buffer | null;
  value: Buffer | null;
  /** A decimal string, as in KafkaJS. */
  offset: string;
  timestamp?: string;
  size?: number;
  headers?: Record<string, unknown>;
  [field: string]: unknown;
}

/** What the application's eachMessage gets first (as KafkaJS's), in restored order. */
export interface KafkaJsEachMessagePayload {
  readonly topic: string;
  readonly partition: number;
  readonly message: KafkaJsConsumedMessage;
  /** A no-op: Confluent's client heartbeats by itself (librdkafka); KafkaJS's from its fetch loop, and the wrapper's eachBatch while it waits for the queue. */
  heartbeat(): Promise<void>;
}

/** The application's handler: `info` is what DynamicConsumer's handler gets ({ ordered, outOfOrder, reason?, order }). */
export type KafkaJsEachMessage = (payload: KafkaJsEachMessagePayload, info: HandledInfo) => void | Promise<void>;

export interface KafkaJsRunConfig {
  eachMessage: KafkaJsEachMessage;
  /** eachMessage calls under way at once (default 1), ordered by the `ordering` option. */
  partitionsConsumedConcurrently?: number;
}

export interface KafkaJsSubscription {
  topic?: string | RegExp;
  topics?: Array<string | RegExp>;
  replace?: boolean;
  /** KafkaJS 2.x's: where a partition without a committed offset starts (Confluent's takes it in the consumer's config). */
  fromBeginning?: boolean;
}

/** The batch the consumer's eachBatch gets (the fields read here). */
export interface KafkaJsBatchPayload {
  batch: { topic: string; partition: number; messages: KafkaJsConsumedMessage[] };
  resolveOffset(offset: string): void;
  /** KafkaJS's heartbeats (when its interval has passed), rejecting once the group rebalances; Confluent's does nothing. */
  heartbeat?(): Promise<void>;
}

/** A consumer of the KafkaJS API wrapKafkaJsConsumer takes: Confluent's, or KafkaJS 2.x's. */
export type KafkaJsConsumerLike = ConfluentConsumerLike | KafkaJs2ConsumerLike;

/** What is used of Confluent's KafkaJS.Consumer. */
export interface ConfluentConsumerLike {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  subscribe(subscription: KafkaJsSubscription): Promise<void>;
  run(config: { eachBatch: (payload: KafkaJsBatchPayload) => Promise<void>; eachBatchAutoResolve: boolean }): Promise<void>;
  commitOffsets(offsets: Array<{ topic: string; partition: number; offset: string; metadata?: string }>): Promise<void>;
  committed(partitions: Array<{ topic: string; partition: number }>, timeout?: number):
    Promise<Array<{ topic: string; partition: number; offset: string | null; metadata?: string | null }>>;
  /** Confluent's: the node-rdkafka-style client, set from connect() on. */
  _getInternalClient(): InternalClient | null;
}

/** What is used of KafkaJS 2.x's consumer (`new Kafka({...}).consumer({ groupId })`). */
export interface KafkaJs2ConsumerLike {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  stop(): Promise<void>;
  subscribe(subscription: KafkaJsSubscription): Promise<void>;
  run(config: { autoCommit: boolean; eachBatchAutoResolve: boolean; eachBatch: (payload: KafkaJsBatchPayload) => Promise<void> }): Promise<void>;
  commitOffsets(offsets: Array<{ topic: string; partition: number; offset: string; metadata?: string }>): Promise<void>;
  /** An instrumentation event's listener; returns its remover. */
  on(event: string, listener: (event: any) => void): () => void;
  readonly events: { readonly REBALANCING: string; readonly GROUP_JOIN: string; readonly CRASH: string; readonly [name: string]: string };
}

/** What is used of a KafkaJS admin client (`kafka.admin()`). */
export type KafkaJsAdminClient = KafkaJsConsumerAdmin;

export interface InternalClient {
  on(event: 'rebalance', listener: (err: { code?: number } | undefined, assignment: Array<{ topic: string; partition: number }>) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
  isConnected?(): boolean;
  globalConfig?: Record<string, unknown>;
  /** node-rdkafka's: commits and returns once the group has the offsets (throws on failure). */
  commitSync?(offsets: PartitionOffset[]): unknown;
}

/** A consumed message as the Resequencer reads it, with the KafkaJS message it came as. */
export interface Consumed extends ConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly message: KafkaJsConsumedMessage;
}
