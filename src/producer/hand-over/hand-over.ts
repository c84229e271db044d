// The one place a message is given to the client: the last step of the send path (after
// place/placement.ts chose its partition), and of the backlog's and the handoffs' retries. Through a
// native binding when there is one (the native engine's client, or node-rdkafka's binding of a
// producer we own: an error code, no exception and its stack trace), else the public produce()
// of a wrapped producer, its exception turned into the code. Answers librdkafka's error code:
// ERR_QUEUE_FULL also while as many messages are in flight as librdkafka's queue holds; a stale
// partition count sends the message unassigned (librdkafka places it) and asks for the count again.

import type { Key } from '../../core/key';
import { ERR_QUEUE_FULL } from '../../core/rdkafka-codes';
import type { HighLevelLike, NativeProducer } from './client-fields';
import type { Delivery } from '../settle/delivery';
import type { Link } from '../hold/key-handoffs';
import type { Metadata } from '../place/metadata';
import type { Headers, Pending, ProducerLike } from '../types';

// librdkafka error codes (rdkafka.h) that say the partition count the message was placed by is stale.
export const ERR_UNKNOWN_PARTITION = -190;
export const ERR_UNKNOWN_TOPIC = -188;
/** Not a librdkafka code: a produce() that threw something without one (what it threw: `lastError`). */
export const ERR_UNKNOWN_FAILURE = -1_000_000;

export class HandOver {
  /** The binding produced through, from connect() on (undefined: the client's public produce()). */
  native: NativeProducer | undefined;
  /** What the last produce() answered ERR_UNKNOWN_FAILURE for threw. */
  lastError: unknown;

  constructor(
    private readonly client: ProducerLike,
    /** A wrapped HighLevelProducer: produced through its plain produce() (its serializers were applied already). */
    private readonly highLevel: boolean,
    private readonly delivery: Delivery,
    private readonly metadata: Metadata,
    /** Messages in flight (handed over, report not yet taken) beyond which a message waits as on a full queue. */
    private readonly maxInflight: number,
  ) {}

  /**
   * Gives a message to librdkafka; returns librdkafka's error code (0 on success). The opaque
   * it goes with: its handoff link if it has one, else `pending`.
   */
  produce(topic: string, partition: number, value: Buffer | null, key: Key | null | undefined,
    timestamp: number | null | undefined, pending: Pending | undefined, headers: Headers | undefined, link?: Link): number {
    if (this.delivery.inflight >= this.maxInflight) return ERR_QUEUE_FULL;
    const opaque = link ?? pending;
    const code = this.native !== undefined
      ? this.native.produce(topic, partition, value, key, timestamp, opaque, headers)
      : this.produceThrowing(topic, partition, value, key, timestamp, opaque, headers);
    if ((code === ERR_UNKNOWN_PARTITION || code === ERR_UNKNOWN_TOPIC) && partition !== -1) {
      this.metadata.request(topic, true);
      return this.produce(topic, -1, value, key, timestamp, pending, headers, link);
    }
    if (code === 0) this.delivery.handedOver(pending);
    return code;
  }

  /** The public produce() of a wrapped producer, its exception turned into the error code. */
  private produceThrowing(topic: string, partition: number, value: Buffer | null, key: Key | null | undefined,
    timestamp: number | null | undefined, pending: unknown, headers: Headers | undefined): number {
    try {
      if (this.highLevel) (this.client as HighLevelLike)._oldProduce(topic, partition, value, key, timestamp, pending, headers);
      else this.client.produce(topic, partition, value, key, timestamp, pending, headers);
      return 0;
    } catch (err: any) {
      if (typeof err?.code === 'number' && err.code !== 0) return err.code;
      this.lastError = err;
      return ERR_UNKNOWN_FAILURE;
    }
  }
}
