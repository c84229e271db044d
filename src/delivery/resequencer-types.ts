// What the Resequencer (src/delivery/resequencer.ts) takes and gives, for every module of the
// consumer side: a consumed message (the fields it reads), a release (a message let through,
// in order or not, and why not), and the Resequencer's options.

import type { Buffer } from 'node:buffer';
import type { OrderHeader } from '../partitioner/headers';

/** A consumed message as node-rdkafka's KafkaConsumer gives it (only these fields are read). */
export interface ConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key?: Buffer | string | null;
  readonly value?: Buffer | null;
  readonly size?: number;
  /** node-rdkafka's array of one-name objects; a KafkaJS-style object is read too. */
  readonly headers?: ReadonlyArray<Record<string, Buffer | string | Uint8Array>> | Readonly<Record<string, unknown>>;
}

export type ReleaseReason = 'capacity' | 'timeout' | 'flush' | 'unowned';

export interface Release<M extends ConsumedMessage = ConsumedMessage> {
  readonly message: M;
  /**
   * True when its predecessor in its producer's chain of the key was released first (or, for
   * an ordered handoff, handled by the group: its committed offset passed it); always true for
   * a message of no chain. By induction a run of ordered messages is in send order; a message
   * released with ordered false breaks the run: what follows it is in order after it, not
   * necessarily after everything its producer sent before it (docs/ordering.md, Limits).
   */
  readonly ordered: boolean;
  /** `!ordered` (the name of earlier versions). */
  readonly outOfOrder: boolean;
  /**
   * Why it went without its predecessor: `capacity` or `timeout` (a bound was hit), `flush`,
   * or `unowned` (its predecessor is on a partition another consumer owns, and its offset is
   * not known).
   */
  readonly reason?: ReleaseReason;
  /** Its decoded order header, or null (not a spread key's message). */
  readonly order: OrderHeader | null;
}

export interface ResequencerOptions {
  /** At most this many messages held (default 10,000). */
  readonly maxBufferedMessages?: number;
  /** At most this many bytes of held values and keys (default 64 MiB). */
  readonly maxBufferedBytes?: number;
  /** A message waits at most this long for its predecessor, in ms (default 30,000). */
  readonly maxWaitMs?: number;
  /**
   * What is known of a chain (producer and key) is forgotten after this long without a
   * release of it, in ms (default 3,600,000); a chain is forgotten at once when its RETURN is
   * released. A message of a forgotten chain that names a predecessor waits maxWaitMs.
   */
  readonly maxChainIdleMs?: number;
  /** At most this many chains are remembered; past it the least recently released is forgotten (default 100,000). */
  readonly maxChains?: number;
}
