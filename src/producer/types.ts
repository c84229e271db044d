// The public shapes of DynamicProducer (messages, reports, options, the client it drives) and
// the records its parts pass one another.

import type { Key } from '../core/key';
import type { DynamicPartitionerOptions } from '../core/options';
import type { Config } from '../core/config';
import type { Link } from './hold/key-handoffs';

export type Value = Buffer | Uint8Array | string | null;
export type Headers = Array<Record<string, string | Buffer>>;

/** One message of sendBatch(). */
export interface OutgoingMessage {
  readonly value: Value;
  readonly key?: Key | null;
  readonly headers?: Headers;
  readonly timestamp?: number | null;
}

export interface DeliveryReport {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** send(): the key as the caller gave it (null for none). */
  readonly key?: Key | null;
  readonly timestamp?: number;
  readonly size?: number;
}

/** What DynamicProducer needs of a node-rdkafka-style producer (wrapProducer duck-types it). */
export interface ProducerLike {
  produce(topic: string, partition: number | null, message: Buffer | null, key?: Key | null, timestamp?: number | null, opaque?: unknown, headers?: Headers): unknown;
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
  getMetadata(options: { topic?: string; timeout?: number; allTopics?: boolean }, cb: (err: any, metadata: any) => void): unknown;
  flush(timeout: number, cb: (err: any) => void): unknown;
  poll(): unknown;
  isConnected?(): boolean;
  /** node-rdkafka's copies of the configuration the client was made with. */
  globalConfig?: Config;
  topicConfig?: Config;
}

export interface DynamicProducerOptions extends DynamicPartitionerOptions {
  /** Partition counts are re-read from metadata this often (ms). */
  readonly metadataRefreshMs?: number;
  /** Messages held here (while librdkafka's queue is full, for a handoff, or for a new topic's count: half of it at most) before send() waits (memory bound). */
  readonly maxQueued?: number;
  /** How often librdkafka is polled for delivery reports (ms); 0 = the wrapped producer already polls. */
  readonly pollIntervalMs?: number;
  /** 'spread': order headers on the messages of spread keys (default); 'none': never. */
  readonly orderHeaders?: 'spread' | 'none';
  /** Traced sends: 'keep' (default), a message's own `traceparent` stays; 'replace', the producer span's replaces it. */
  readonly traceHeaders?: 'keep' | 'replace';
  /** Turn librdkafka's per-partition queue depth (statistics.interval.ms) into penalties (default true). */
  readonly queuePenalty?: boolean;
  /** A prom-client Registry to expose metrics in. */
  readonly prometheus?: unknown;
  /** 8 bytes naming this producer in order headers (default: random). */
  readonly producerId?: Buffer;
  /** 'native': the batch engine; 'client': the client library's produce(); 'auto' (default): native when it is built. */
  readonly engine?: 'auto' | 'native' | 'client';
  /**
   * The native engine's librdkafka producer handles (1-16, default 2): partition p always goes
   * through handle p % n, so that more than one produce request is in progress per broker.
   * One with `transactional.id`. Not used by engine 'client' or a wrapped producer.
   */
  readonly nativeHandles?: number;
}

/** Tags the opaque of a send() (to tell our reports from a wrapped producer's app's own). */
export const SEND = Symbol('kdp.send');

/** A send()'s promise handlers, the opaque its message is produced with. */
export interface Pending {
  resolve(report: DeliveryReport): void;
  reject(err: Error): void;
  readonly [SEND]?: true;
  /** A send()'s key as the caller gave it (a HighLevelProducer's: as serialized), for its report. */
  key?: Key | null;
}

/** A message taken and not yet handed to librdkafka. */
export interface Queued {
  topic: string;
  partition: number;
  value: Buffer | null;
  key: Key | null | undefined;
  timestamp: number | null | undefined;
  headers: Headers | undefined;
  pending: Pending | undefined;
  /** A marked message's link (the opaque it is produced with, for a later handoff). */
  link: Link | undefined;
}

/** A message held for an ordered handoff (src/producer/hold/key-handoffs.ts). */
export interface Waiting extends Queued {
  readonly header: Record<string, string> | undefined;
  readonly after: Link | undefined;
}
