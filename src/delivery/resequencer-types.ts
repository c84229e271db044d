// What the Resequencer (resequencer.ts) takes and gives, for every module of the consumer side:
// a consumed message, a release (in order or not, and why not), and the Resequencer's options.

import { Buffer } from 'node:buffer';
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
   * True when its predecessor in its producer's chain of the key was released first (for an
   * ordered handoff: the group's commit passed it), or it has no chain. A run of ordered messages
   * is thus in send order; after one with ordered false, what follows is in order after it only
   * (docs/ordering.md, Limits).
   */
  readonly ordered: boolean;
  /** `!ordered`. */
  readonly outOfOrder: boolean;
  /** Why it went before its predecessor: a bound (`capacity`, `timeout`), `flush`, or `unowned` (offset unknown, another member's). */
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
   * A chain (producer and key) is forgotten this long after its last release, in ms (default
   * 3,600,000), or at once on its RETURN; a successor of a forgotten chain waits maxWaitMs.
   */
  readonly maxChainIdleMs?: number;
  /** At most this many chains are remembered; past it the least recently released is forgotten (default 100,000). */
  readonly maxChains?: number;
}

/** Why a key's messages wait (metrics().blockedKeys): for a predecessor (the resequencer holds them), a failed call's retry, a dead letter that could not be written. */
export type BlockedReason = 'predecessor' | 'retry' | 'parked';

/** A key whose messages wait now, and for how long its longest-waiting one has (ms). */
export interface BlockedKey {
  readonly topic: string;
  /** The key as text (a Buffer's as UTF-8; none: the empty string). */
  readonly key: string;
  readonly reason: BlockedReason;
  readonly waitedMs: number;
}

/** A key as BlockedKey gives it. */
export function keyLabel(key: unknown): string {
  if (key === null || key === undefined) return '';
  if (typeof key === 'string') return key;
  if (key instanceof Uint8Array) return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8');
  return String(key);
}
