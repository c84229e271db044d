// What a DynamicConsumer (src/consumer/consumer.ts) is given: its options, and the handlers
// run() and runBatches() call.

import type * as Kafka from 'node-rdkafka';
import type { ResequencerOptions } from '../delivery/resequencer';
import type { HandledInfo } from '../delivery/dispatch';

export interface DynamicConsumerOptions {
  readonly resequencer?: ResequencerOptions;
  /**
   * Committed offsets are written this often (ms). Also how soon another member of the group
   * can hand on a relocated key whose earlier messages this consumer handled (it waits for
   * this commit), so keep it short.
   */
  readonly commitIntervalMs?: number;
  /** At most this many messages per consume call (it takes what librdkafka has queued). */
  readonly batchSize?: number;
  /** Pause fetching while this many released messages wait for the handler; resume at half. */
  readonly maxPending?: number;
  /**
   * How long a consume call after one that found nothing waits for a message (ms). The call
   * holds a libuv threadpool thread meanwhile (node-rdkafka 3.6, KafkaConsumer#consume(n, cb)).
   */
  readonly fetchTimeoutMs?: number;
  /** A message whose handler throws or rejects is handed to it again this many times before the consumer stops. */
  readonly handlerRetries?: number;
  /** Wait before each new attempt (ms). */
  readonly retryBackoffMs?: number;
  /**
   * Handler calls under way at once (default 1: one message at a time). Above 1, `ordering`
   * says which calls may overlap; commits stay below the lowest offset of each partition not
   * yet handled, whatever was handled above it.
   */
  readonly concurrency?: number;
  /**
   * 'key' (the default): one call at a time per key, in the order the resequencer releases its
   * messages (a spread key's across its partitions), different keys at once; messages without
   * a key are independent. 'partition': one call at a time per partition (KafkaJS's model).
   * 'none': any messages at once, in no order at all.
   */
  readonly ordering?: 'key' | 'partition' | 'none';
  /**
   * On revoke, how long handler calls under way for the partitions leaving may take before
   * they are given up (ms): the commit and the hand-over to the next owner wait for them.
   */
  readonly revokeTimeoutMs?: number;
  /** At most this many messages per runBatches() handler call (default 100). */
  readonly handlerBatchSize?: number;
  /**
   * A spread key's message whose predecessor is on a partition another member of the group
   * owns, at an offset not known: 'wait' waits until that member's handled record shows the
   * predecessor handled (docs/ordering.md, "Order in a group"); 'flag' hands it out at once,
   * flagged `reason: 'unowned'`. 'auto' (the default) is 'wait' on the native engine, whose
   * commits carry the records, and 'flag' on engine 'client' (node-rdkafka commits no
   * metadata), where 'wait' is refused. Each change of a split key to another member's
   * partition costs a commit and a read: DynamicProducer's splitRunMs keeps those changes to
   * one per run.
   */
  readonly groupOrder?: 'auto' | 'flag' | 'wait';
}

export type MessageHandler = (message: Kafka.Message, info: HandledInfo) => void | Promise<void>;
/** runBatches()' handler: consecutive released messages of one key (or partition), in order, each with its info. */
export type BatchHandler = (messages: Kafka.Message[], infos: HandledInfo[]) => void | Promise<void>;
