// What a DynamicConsumer (src/consumer/consumer.ts) is given: its options, and the handlers
// run() and runBatches() call.

import type * as Kafka from 'node-rdkafka';
import type { DeliveryOptions } from '../delivery/options';
import type { HandledInfo } from '../delivery/dispatch';
import type { DynamicProducer } from '../producer/producer';

/** The engine's options (src/delivery/options.ts; groupOrder 'wait' on the native engine only), and those of its fetching. */
export interface DynamicConsumerOptions extends DeliveryOptions<Kafka.Message> {
  /** At most this many messages per consume call (it takes what librdkafka has queued). */
  readonly batchSize?: number;
  /**
   * How long a consume call after one that found nothing waits for a message (ms). The call
   * holds a libuv threadpool thread meanwhile (node-rdkafka's KafkaConsumer#consume(n, cb)).
   */
  readonly fetchTimeoutMs?: number;
  /**
   * Handler calls under way at once (default 1: one message at a time). Above 1, `ordering`
   * says which calls may overlap.
   */
  readonly concurrency?: number;
  /**
   * On revoke, how long handler calls under way for the partitions leaving may take before
   * they are given up (ms): the commit and the hand-over to the next owner wait for them.
   */
  readonly revokeTimeoutMs?: number;
  /** At most this many messages per runBatches() handler call (default 100). */
  readonly handlerBatchSize?: number;
  /**
   * Exactly once (consume-transform-produce): what the handlers produce through `producer` (a DynamicProducer
   * with transactional.id, of this consumer only, on its engine) and the offsets of the messages they handled
   * commit together, every `intervalMs` (default: commitIntervalMs), in one transaction (docs/exactly-once.md).
   */
  readonly transaction?: { readonly producer: DynamicProducer; readonly intervalMs?: number };
}

export type MessageHandler = (message: Kafka.Message, info: HandledInfo) => void | Promise<void>;
/** runBatches()' handler: consecutive released messages of one key (or partition), in order, each with its info. */
export type BatchHandler = (messages: Kafka.Message[], infos: HandledInfo[]) => void | Promise<void>;
