// Resequencer: fed the messages a consumer reads (any set of partitions, each in offset
// order), it releases each spread key's messages in the order their producer sent them and
// lets every other message through at once. It reads the order header of src/headers.ts:
//
// - a message without the header is released at once, unless an earlier message of the same
//   key on the same partition is being held: then it waits behind it (this is how the cold
//   messages that follow a key's RETURN stay behind it);
// - an ANCHOR (prev 0) is released at once (its predecessors are the earlier messages of its
//   partition, already released in order);
// - a SPREAD or RETURN is released once the message its `previous` names (same producer, same
//   key) has been released.
//
// Memory is bounded (maxBufferedMessages / maxBufferedBytes): past the bound the oldest held
// message is released with `outOfOrder: true`; so is a message held longer than maxWaitMs
// (its predecessor may be on a partition this consumer is not assigned, or was consumed
// before a restart). When that message waits for another held one, the first of those it
// waits behind goes instead (flagged), and the rest follow it in order. Nothing is ever dropped.

import { decodeOrderHeader, ORDER_HEADER, OrderHeader } from './headers';
import { InvalidOptionError, InvalidArgTypeError } from './errors';

/** A consumed message as node-rdkafka's KafkaConsumer gives it (only these fields are read). */
export interface ConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly key?: Buffer | string | null;
  readonly value?: Buffer | null;
  readonly size?: number;
  readonly headers?: ReadonlyArray<Record<string, Buffer | string | Uint8Array>>;
}

export interface Release<M extends ConsumedMessage = ConsumedMessage> {
  readonly message: M;
  /** True when released before its predecessor: the bound on buffering or on waiting was hit. */
  readonly outOfOrder: boolean;
  /** Why it was released out of order. */
  readonly reason?: 'capacity' | 'timeout' | 'flush';
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
}

export const RESEQUENCER_DEFAULTS = Object.freeze({
  maxBufferedMessages: 10_000,
  maxBufferedBytes: 64 * 1024 * 1024,
  maxWaitMs: 30_000,
  maxChainIdleMs: 3_600_000,
});

/** What is known of one chain: the sequences of its last and newest released marked messages. */
interface ChainState {
  last: number;
  newest: number;
  /** When one of its messages was last released. */
  at: number;
}

interface Held<M extends ConsumedMessage> {
  readonly message: M;
  readonly order: OrderHeader | null;
  readonly chain: string;
  /** partition + key: the FIFO of this key on this partition. */
  readonly lane: string;
  readonly at: number;
  readonly bytes: number;
  released: boolean;
}

function keyText(key: Buffer | string | null | undefined): string {
  if (key === null || key === undefined) return '\u0000null';
  return typeof key === 'string' ? `s${key}` : `b${key.toString('latin1')}`;
}

function orderOf(message: ConsumedMessage): OrderHeader | null {
  const headers = message.headers;
  if (!headers) return null;
  for (const h of headers) {
    const v = h[ORDER_HEADER];
    if (v !== undefined) return decodeOrderHeader(v);
  }
  return null;
}

export class Resequencer<M extends ConsumedMessage = ConsumedMessage> {
  readonly options: Required<ResequencerOptions>;
  /**
   * Per chain (topic, producer, key): the sequence of its last released marked message, and
   * the highest one released. They differ when an older message went out of order (e.g. one
   * read again after a restart) after newer ones: a message waiting for that newest one may
   * still go. In order of last release (a release moves its chain to the end), so idle ones
   * are found first.
   */
  private readonly chains = new Map<string, ChainState>();
  /** Held marked messages by what they wait for: chain + previous sequence. */
  private readonly waitingFor = new Map<string, Held<M>>();
  /** Held marked messages by chain + their own sequence (to find what a held one waits for). */
  private readonly heldBySequence = new Map<string, Held<M>>();
  /** Per lane (topic, partition, key): held messages in arrival (offset) order. */
  private readonly lanes = new Map<string, Held<M>[]>();
  /** Every held message, oldest first (entries of released ones are skipped lazily). */
  private heldOrder: Held<M>[] = [];
  private heldHead = 0;
  private heldCount = 0;
  private heldBytes = 0;
  /** Per topic-partition: offsets held, for the committable offset. */
  private readonly heldOffsets = new Map<string, Set<number>>();
  private readonly nextOffset = new Map<string, number>();

  constructor(options: ResequencerOptions = {}, private readonly now: () => number = Date.now) {
    if (typeof options !== 'object' || options === null) throw new InvalidOptionError('options', 'an object', options);
    for (const name of Object.keys(options)) {
      if (!(name in RESEQUENCER_DEFAULTS)) throw InvalidOptionError.unknown(`options.${name}`, Object.keys(RESEQUENCER_DEFAULTS));
    }
    const o = { ...RESEQUENCER_DEFAULTS, ...options };
    for (const [name, v] of Object.entries(o)) {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new InvalidOptionError(`options.${name}`, 'an integer >= 0', v);
    }
    this.options = Object.freeze(o);
  }

  /** Messages held now. */
  get held(): number {
    return this.heldCount;
  }

  /**
   * Takes one consumed message; returns the messages released by it, in release order (it
   * may be among them, and it may release others that waited for it).
   */
  push(message: M): Release<M>[] {
    if (typeof message !== 'object' || message === null || typeof message.topic !== 'string' ||
      !Number.isInteger(message.partition) || !Number.isInteger(message.offset)) {
      throw new InvalidArgTypeError('message', 'a consumed message with topic, partition and offset', message);
    }
    const out: Release<M>[] = [];
    const tp = `${message.topic}\u0000${message.partition}`;
    const next = this.nextOffset.get(tp);
    if (next === undefined || message.offset + 1 > next) this.nextOffset.set(tp, message.offset + 1);
    const order = orderOf(message);
    const key = keyText(message.key);
    const lane = `${tp}\u0000${key}`;
    const queue = this.lanes.get(lane);
    const chain = order ? `${message.topic}\u0000${order.producerId}\u0000${key}` : '';
    const waitsForLane = queue !== undefined && queue.length > 0;
    const releasable = !waitsForLane && (order === null || order.kind === 'anchor' || this.follows(chain, order));
    if (releasable) {
      this.release({ message, order, chain, lane, at: 0, bytes: 0, released: false }, false, undefined, out);
    } else {
      this.hold({ message, order, chain, lane, at: this.now(), bytes: (message.size ?? message.value?.length ?? 0) + (message.key?.length ?? 0), released: false });
      this.enforceBounds(out);
    }
    return out;
  }

  /** Chains (producer and key) known now. */
  get chainCount(): number {
    return this.chains.size;
  }

  /**
   * Releases, out of order, what has waited longer than maxWaitMs, and forgets chains idle
   * longer than maxChainIdleMs; call it now and then.
   */
  expire(): Release<M>[] {
    const out: Release<M>[] = [];
    const now = this.now();
    const idle = now - this.options.maxChainIdleMs;
    for (const [chain, state] of this.chains) {
      if (state.at > idle) break;
      this.chains.delete(chain);
    }
    const limit = now - this.options.maxWaitMs;
    for (;;) {
      const oldest = this.oldest();
      if (!oldest || oldest.at > limit) break;
      this.release(this.root(oldest), true, 'timeout', out);
    }
    return out;
  }

  /** Releases everything held, oldest first, out of order (e.g. when a partition is revoked). */
  flush(): Release<M>[] {
    const out: Release<M>[] = [];
    for (let oldest = this.oldest(); oldest; oldest = this.oldest()) this.release(this.root(oldest), true, 'flush', out);
    return out;
  }

  /**
   * Drops what is held of a partition and what is known of its offsets, without releasing
   * anything (when it is revoked: its next owner reads it again from the committed offset).
   * Returns how many held messages were dropped.
   */
  forget(topic: string, partition: number): number {
    const tp = `${topic}\u0000${partition}`;
    const prefix = `${tp}\u0000`;
    let dropped = 0;
    for (const [lane, queue] of this.lanes) {
      if (!lane.startsWith(prefix)) continue;
      for (const h of queue) {
        h.released = true;
        this.heldCount--;
        this.heldBytes -= h.bytes;
        if (h.order) {
          const waits = `${h.chain}\u0000${h.order.previous}`;
          if (this.waitingFor.get(waits) === h) this.waitingFor.delete(waits);
          const own = `${h.chain}\u0000${h.order.sequence}`;
          if (this.heldBySequence.get(own) === h) this.heldBySequence.delete(own);
        }
        dropped++;
      }
      this.lanes.delete(lane);
    }
    this.heldOffsets.delete(tp);
    this.nextOffset.delete(tp);
    return dropped;
  }

  /**
   * The offset a consumer may commit for a partition: below the lowest message still held
   * (at-least-once), or past the last one seen. undefined before any message of it.
   */
  committable(topic: string, partition: number): number | undefined {
    const tp = `${topic}\u0000${partition}`;
    const held = this.heldOffsets.get(tp);
    if (held && held.size > 0) {
      let lowest = Infinity;
      for (const o of held) if (o < lowest) lowest = o;
      return lowest;
    }
    return this.nextOffset.get(tp);
  }

  private hold(h: Held<M>): void {
    let queue = this.lanes.get(h.lane);
    if (!queue) this.lanes.set(h.lane, (queue = []));
    queue.push(h);
    // A marked message that is first in its lane waits for its predecessor; one behind
    // others in its lane is woken when it reaches the front.
    if (h.order && h.order.kind !== 'anchor' && queue.length === 1) this.waitingFor.set(`${h.chain}\u0000${h.order.previous}`, h);
    if (h.order) this.heldBySequence.set(`${h.chain}\u0000${h.order.sequence}`, h);
    this.heldOrder.push(h);
    this.heldCount++;
    this.heldBytes += h.bytes;
    const tp = `${h.message.topic}\u0000${h.message.partition}`;
    let offsets = this.heldOffsets.get(tp);
    if (!offsets) this.heldOffsets.set(tp, (offsets = new Set()));
    offsets.add(h.message.offset);
  }

  private enforceBounds(out: Release<M>[]): void {
    while (this.heldCount > this.options.maxBufferedMessages || this.heldBytes > this.options.maxBufferedBytes) {
      const oldest = this.oldest();
      if (!oldest) break;
      this.release(this.root(oldest), true, 'capacity', out);
    }
  }

  /**
   * What must go first for `h` to go in order: the head of its lane, or the held message it
   * waits for, and so on back to one whose predecessor is not here. Releasing that one (out of
   * order) releases the rest behind it in order, instead of h overtaking held predecessors.
   */
  private root(h: Held<M>): Held<M> {
    for (let steps = 0; steps <= this.heldCount; steps++) {
      const lane = this.lanes.get(h.lane);
      if (lane !== undefined && lane.length > 0 && lane[0] !== h) {
        h = lane[0];
        continue;
      }
      const before = h.order && h.order.kind !== 'anchor' ? this.heldBySequence.get(`${h.chain}\u0000${h.order.previous}`) : undefined;
      if (before === undefined || before.released) break;
      h = before;
    }
    return h;
  }

  private oldest(): Held<M> | undefined {
    while (this.heldHead < this.heldOrder.length && this.heldOrder[this.heldHead].released) this.heldHead++;
    if (this.heldHead > 1024 && this.heldHead * 2 > this.heldOrder.length) {
      this.heldOrder = this.heldOrder.slice(this.heldHead);
      this.heldHead = 0;
    }
    return this.heldOrder[this.heldHead];
  }

  /** Whether the message `order` names as its predecessor has been released (the last or the newest of its chain). */
  private follows(chain: string, order: OrderHeader): boolean {
    const state = this.chains.get(chain);
    return state !== undefined && (state.last === order.previous || state.newest === order.previous);
  }

  /** Releases h (held or new) and then everything that was waiting only for it, in order. */
  private release(first: Held<M>, outOfOrder: boolean, reason: Release<M>['reason'], out: Release<M>[]): void {
    const work: Array<[Held<M>, boolean, Release<M>['reason']]> = [[first, outOfOrder, reason]];
    while (work.length > 0) {
      const [h, ooo, why] = work.shift()!;
      if (h.released) continue;
      h.released = true;
      const queue = this.lanes.get(h.lane);
      const wasHeld = queue !== undefined && queue.indexOf(h) !== -1;
      if (wasHeld) this.unhold(h, queue!);
      out.push(ooo ? { message: h.message, outOfOrder: true, reason: why } : { message: h.message, outOfOrder: false });
      if (h.order) {
        this.noteReleased(h.chain, h.order);
        if (h.order.kind !== 'anchor') this.waitingFor.delete(`${h.chain}\u0000${h.order.previous}`);
        const successor = this.waitingFor.get(`${h.chain}\u0000${h.order.sequence}`);
        if (successor) work.push([successor, false, undefined]);
      }
      // The lane's next message may go now if nothing else holds it.
      const lane = this.lanes.get(h.lane);
      if (lane && lane.length > 0) {
        const head = lane[0];
        const ready = head.order === null || head.order.kind === 'anchor' || this.follows(head.chain, head.order);
        if (ready) work.push([head, false, undefined]);
        else if (head.order) this.waitingFor.set(`${head.chain}\u0000${head.order.previous}`, head);
      }
    }
  }

  /** A marked message of `chain` went: its chain moves to the end; a RETURN ends the chain. */
  private noteReleased(chain: string, order: OrderHeader): void {
    const state = this.chains.get(chain);
    this.chains.delete(chain);
    // After a RETURN the producer starts the key's next chain with an ANCHOR, which needs nothing.
    if (order.kind === 'return') return;
    const newest = state !== undefined && state.newest > order.sequence ? state.newest : order.sequence;
    this.chains.set(chain, { last: order.sequence, newest, at: this.now() });
  }

  private unhold(h: Held<M>, queue: Held<M>[]): void {
    queue.splice(queue.indexOf(h), 1);
    if (queue.length === 0) this.lanes.delete(h.lane);
    this.heldCount--;
    this.heldBytes -= h.bytes;
    const tp = `${h.message.topic}\u0000${h.message.partition}`;
    const offsets = this.heldOffsets.get(tp);
    offsets?.delete(h.message.offset);
    if (h.order && h.order.kind !== 'anchor') {
      const k = `${h.chain}\u0000${h.order.previous}`;
      if (this.waitingFor.get(k) === h) this.waitingFor.delete(k);
    }
    if (h.order) {
      const k = `${h.chain}\u0000${h.order.sequence}`;
      if (this.heldBySequence.get(k) === h) this.heldBySequence.delete(k);
    }
  }
}
