// The shapes wrapPlatformaticConsumer (consumer.ts) takes and gives, and what it uses of @platformatic/kafka's Consumer, its
// MessagesStream and their messages (typed here: @platformatic/kafka is an ES module for Node >= 22, never imported by this package).

import type { ConsumedMessage } from '../delivery/resequencer';
import type { DeliveryOptions } from '../delivery/options';
import type { HandledInfo, PartitionOffset } from '../delivery/dispatch';

/** The engine's options (src/delivery/options.ts; concurrency is run()'s), groupOrder 'flag' only. */
export interface PlatformaticConsumerOptions extends Omit<DeliveryOptions<PlatformaticConsumedMessage>, 'groupOrder'> {
  /**
   * A spread key's message whose predecessor is on another member's partition, at an offset not known: handed out at once, flagged
   * `reason: 'unowned'` ('auto', the default, is 'flag'). 'wait' is refused: @platformatic/kafka commits no records (docs/consumer.md).
   */
  readonly groupOrder?: 'auto' | 'flag';
}

/** A message as @platformatic/kafka's MessagesStream gives it (the fields read here; the others are passed on). */
export interface PlatformaticConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  /** A bigint, as @platformatic/kafka gives it. */
  readonly offset: bigint;
  readonly key?: unknown;
  readonly value?: unknown;
  /** [name, value] pairs, as deserialized (Buffers by default). */
  readonly headerEntries?: ReadonlyArray<readonly [unknown, unknown]>;
  readonly headers?: Map<unknown, unknown>;
  readonly [field: string]: unknown;
}

/** The application's handler: the stream's message, and what DynamicConsumer's handler gets ({ ordered, outOfOrder, reason?, order }). */
export type PlatformaticMessageHandler = (message: PlatformaticConsumedMessage, info: HandledInfo) => void | Promise<void>;

export interface PlatformaticRunConfig {
  /** The topics to consume (the consumer's group subscribes to them). */
  topics: string[];
  handler: PlatformaticMessageHandler;
  /** Handler calls under way at once (default 1), ordered by the `ordering` option. */
  concurrency?: number;
  /** consume()'s other options (maxWaitTime, maxBytes, mode, ...): `mode` defaults to 'committed', `autocommit` may only be false. */
  consume?: Record<string, unknown>;
}

/** One partition of a commit, as @platformatic/kafka's commit() takes it. */
export interface PlatformaticCommitPartition {
  topic: string;
  partition: number;
  offset: bigint;
  leaderEpoch: number;
}

/** What is used of @platformatic/kafka's MessagesStream. */
export interface PlatformaticStreamLike {
  on(event: 'data', listener: (message: PlatformaticConsumedMessage) => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
  pause(): unknown;
  resume(): unknown;
  close(): Promise<void>;
}

/** What is used of @platformatic/kafka's Consumer (2.x). */
export interface PlatformaticConsumerLike {
  readonly groupId: string;
  /** The group's assignment of this member (null before it joined). */
  readonly assignments: ReadonlyArray<{ topic: string; partitions: number[] }> | null;
  consume(options: Record<string, unknown>): Promise<PlatformaticStreamLike>;
  commit(options: { offsets: PlatformaticCommitPartition[] }): Promise<void>;
  /** The group's committed offsets: per topic, an array by partition (-1n: none). */
  listCommittedOffsets(options: { topics: Array<{ topic: string; partitions: number[] }> }): Promise<Map<string, bigint[]>>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
  close(force?: boolean): Promise<void>;
}

/** A consumed message as the Resequencer reads it, with the stream's message it came as. */
export interface PlatformaticConsumed extends ConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly message: PlatformaticConsumedMessage;
}

export type { HandledInfo, PartitionOffset };
