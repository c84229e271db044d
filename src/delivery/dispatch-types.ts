// What the Dispatcher (dispatch.ts) gives and asks, for the engine that owns it (delivery.ts):
// what a handler gets with a message, an offset to commit, which calls may overlap, the hooks.

import type { HandlerError } from '../core/errors';
import type { FailedRunError } from './failures';
import type { OrderHeader } from '../partitioner/headers';
import type { ConsumedMessage, Release } from './resequencer-types';

/** What the handler gets besides the message (from the Resequencer's Release). */
export interface HandledInfo {
  /**
   * True when its predecessor in its producer's chain of the key was handled first (here, or by
   * another member before an ordered handoff), or it has no chain. See Release.ordered.
   */
  readonly ordered: boolean;
  /** `!ordered`. */
  readonly outOfOrder: boolean;
  /** Why it went before its predecessor: 'capacity', 'timeout', 'flush' or 'unowned'. */
  readonly reason?: Release['reason'];
  /** Its decoded order header (producer id, sequence, previous, ...), or null when it has none. */
  readonly order: OrderHeader | null;
}

/** What the handler gets with a message. */
export function infoOf<M extends ConsumedMessage>(r: Release<M>): HandledInfo {
  if (r.ordered) return r.order === null ? UNMARKED : { ordered: true, outOfOrder: false, order: r.order };
  return { ordered: false, outOfOrder: true, reason: r.reason, order: r.order };
}

/** What the handler gets with a message that carries no order header: one object, frozen (most calls get it). */
export const UNMARKED: HandledInfo = Object.freeze({ ordered: true, outOfOrder: false, order: null });

/** A handler's result that is a promise (or any thenable). */
export function isPromise(result: unknown): result is Promise<void> {
  return result !== null && typeof result === 'object' && typeof (result as Promise<void>).then === 'function';
}

export interface PartitionOffset {
  topic: string;
  partition: number;
  offset: number;
  /** The handled record committed with the offset (src/delivery/handled-record.ts). */
  metadata?: string;
}

/**
 * Which handler calls may overlap: 'key' — never two of one key (its messages in release order,
 * a spread key's across its partitions; messages without a key are independent); 'partition' —
 * never two of one partition (KafkaJS's partitionsConsumedConcurrently); 'none' — any.
 */
export type Ordering = 'key' | 'partition' | 'none';

/** What the dispatcher asks of the consumer that owns it. */
export interface DispatchHooks<M> {
  /** Calls the application's handler. */
  handle(message: M, info: HandledInfo): void | Promise<void>;
  /** Calls the application's batch handler (Dispatcher.batchLimit above 0): consecutive messages of one lane. */
  handleBatch?(messages: M[], infos: HandledInfo[]): void | Promise<void>;
  /** Whether a partition (partitionKey) is still this consumer's: a failed message of a revoked one is left to its next owner. */
  owns(key: string): boolean;
  /** One failed call of the handler (the message is handed to it again unless the retries are used up). */
  handlerError(error: HandlerError, message: M): void;
  /** The run stops on a message (its retries used up, its dead-letter writes failing too long, onFailure's answer): nothing more is handled. */
  fail(error: FailedRunError): void;
  /** The queue got shorter. */
  progress(): void;
  /** A marked message was handled (another member may wait for it; its key's lag, hot-key-lag.ts). */
  handledMarked?(message: M): void;
}
