// What every consumer of the package is to the application, whatever its client: an
// EventEmitter with the engine's events, its Resequencer, the offset a partition may be
// committed at, and stop(). Each client's consumer extends it and makes its engine with deliver().

import { EventEmitter } from 'node:events';
import type { DeadLetterError, HandlerError, KafkaError } from '../core/errors';
import { Delivery, type DeliveryHooks, type DeliverySettings } from './delivery';
import type { PartitionOffset } from './dispatch-types';
import type { ConsumerPort, TopicPartition } from './port';
import type { RecordCounts } from './records';
import type { FailureCounts } from './failures';
import type { RejoinCounts } from './assignment';
import type { ConsumedMessage, Resequencer } from './resequencer';
import type { BlockedKey } from './resequencer-types';
import type { HotKeyLag } from './hot-key-lag';

/** `Payload`: what a 'handlerError' listener gets with the error; `Stopped`: what a 'stopped' listener gets. */
export declare interface OrderedConsumer<M extends ConsumedMessage, Payload, Stopped extends unknown[]> {
  /** One failed call of the handler (what becomes of the message: options.onFailure, handlerRetries, deadLetter). */
  on(event: 'handlerError', listener: (err: HandlerError, payload: Payload) => void): this;
  /** A message was written to the dead-letter topic (acknowledged): `err` is the handler's last failure on it. */
  on(event: 'deadLettered', listener: (payload: Payload, err: HandlerError) => void): this;
  /** The run ended: stop(), the handler's retries used up on a message, or the client's run failing for good. */
  on(event: 'stopped', listener: (...args: Stopped) => void): this;
  on(event: 'assigned' | 'revoked', listener: (partitions: TopicPartition[]) => void): this;
  on(event: 'committed', listener: (offsets: PartitionOffset[]) => void): this;
  /**
   * A KafkaError: a commit refused while the group rebalances or its coordinator moves, or a failed read of committed offsets;
   * a DeadLetterError: a dead-letter write failed (the message's key stays parked, written again after a backoff).
   */
  on(event: 'warning', listener: (err: KafkaError | DeadLetterError) => void): this;
  /** A KafkaError: a commit refused for another reason (made again next time), or the client failing. */
  on(event: 'error', listener: (err: KafkaError) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

// biome-ignore lint/correctness/noUnusedVariables: Payload and Stopped type the events (the interface above).
export abstract class OrderedConsumer<M extends ConsumedMessage, Payload, Stopped extends unknown[]> extends EventEmitter {
  /** The engine, made by deliver() once the consumer's port is. */
  protected delivery!: Delivery<M>;

  /** The engine over `port`; its events are this consumer's. */
  protected deliver(port: ConsumerPort, settings: DeliverySettings, hooks: Omit<DeliveryHooks<M>, 'emit' | 'listenerCount'>): Delivery<M> {
    this.delivery = new Delivery(port, settings, { ...hooks, emit: (event, ...args) => this.emit(event, ...args), listenerCount: (event) => this.listenerCount(event) });
    return this.delivery;
  }

  /** Restores each spread key's order (docs/ordering.md). */
  get resequencer(): Resequencer<M> {
    return this.delivery.resequencer;
  }

  /**
   * Messages held by the resequencer, waiting for a handler call and in calls; the handled
   * records' costs (null where commits carry none); what an eager group's rejoins did; the keys
   * whose messages wait longest now, and why (blockedKeys, at most 20).
   */
  metrics(): { held: number; waiting: number; inFlight: number; failures: FailureCounts; records: RecordCounts | null; rejoins: RejoinCounts; blockedKeys: BlockedKey[]; hotKeys: HotKeyLag[] } {
    return this.delivery.metrics();
  }

  /** The offset that may be committed for a partition: below every message held or unhandled. */
  safeOffset(topic: string, partition: number): number | undefined {
    return this.delivery.safeOffset(topic, partition);
  }

  /**
   * Ends the run once the handler has finished what was released (up to `timeoutMs`; the rest is
   * read again next start), commits the safe offsets, and ends the client's run; rejects if that commit fails.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    return this.delivery.stop(timeoutMs);
  }
}
