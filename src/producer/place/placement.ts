// Where a message goes: the middle of the send path (take/intake.ts → here → hold/ or
// hand-over/hand-over.ts). A message taken is checked and made a payload, then
// waits for its topic's partition count (place/unplaced.ts), or is decided (one WebAssembly call,
// DynamicPartitioner.decide) and given a spread key's order header; it is then held for an
// ordered handoff (hold/key-handoffs.ts), behind the backlog (hold/backlog.ts), or handed over at once. The
// messages those parts held come back here to be placed or handed over in their turn.

// Node's global Buffer is a getter on globalThis, called at each read: the module's is a plain binding.
import { Buffer } from 'node:buffer';
import { ORDER_NONE } from '../../core/abi';
import { InvalidArgTypeError } from '../../core/errors';
import { checkKey } from '../../core/key';
import type { Key } from '../../core/key';
import type { OrderChains } from '../../partitioner/headers';
import type { DynamicPartitioner } from '../../partitioner/partitioner';
import type { Backlog } from '../hold/backlog';
import { ERR_QUEUE_FULL } from '../../core/rdkafka-codes';
import type { HighLevelLike } from '../hand-over/client-fields';
import type { KeyHandoffs, Link } from '../hold/key-handoffs';
import type { HandOver } from '../hand-over/hand-over';
import { badTimestamp, checkHeaders, serialize, timestampError, withoutForwarded } from '../take/input';
import type { Metadata, TopicInfo } from './metadata';
import type { Outcomes } from '../settle/outcomes';
import { CurrentSend } from '../take/send-promise';
import type { Unplaced, UnplacedMessage } from './unplaced';
import type { Headers, Pending, ProducerLike, Queued, Value, Waiting } from '../types';

export interface PlacementParts {
  readonly client: ProducerLike;
  /** A wrapped HighLevelProducer: its serializers are applied here, before partitioning. */
  readonly highLevel: boolean;
  /** orderHeaders 'spread': spread and moved messages carry an order header. */
  readonly marking: boolean;
  readonly maxQueued: number;
  readonly partitioner: DynamicPartitioner;
  readonly orders: OrderChains;
  readonly metadata: Metadata;
  readonly unplaced: Unplaced;
  readonly backlog: Backlog<Queued>;
  /** Relocated keys' ordered handoffs; none without order headers or delivery reports. */
  readonly handoffs: KeyHandoffs<Waiting> | undefined;
  /** The opaque of fire-and-forget messages: none on a client we own, OURS on a wrapped one (settle/delivery.ts). */
  readonly fireAndForget: Pending | undefined;
  readonly handOver: HandOver;
  readonly outcomes: Outcomes;
  /** A fault placing a fire-and-forget message that waited (the producer's 'error'). */
  error(err: unknown): void;
}

export class Placement {
  private readonly client: ProducerLike;
  private readonly highLevel: boolean;
  private readonly marking: boolean;
  private readonly maxQueued: number;
  private readonly partitioner: DynamicPartitioner;
  private readonly orders: OrderChains;
  private readonly metadata: Metadata;
  private readonly unplaced: Unplaced;
  private readonly backlog: Backlog<Queued>;
  private readonly handoffs: KeyHandoffs<Waiting> | undefined;
  private readonly fireAndForget: Pending | undefined;
  private readonly handOver: HandOver;
  private readonly outcomes: Outcomes;
  private readonly error: (err: unknown) => void;
  /** Whether the message being placed took an order header (given back if it is refused). */
  private marked = false;
  /** The order header object of the message being placed (when marked). */
  private lastHeader: Record<string, string> | undefined;
  /** Where the last message refused at hand-over went, and its key as handed over: read at once, after place(). */
  private readonly lastRefused: { partition: number; key: Key | null | undefined } = { partition: -1, key: undefined };

  constructor(parts: PlacementParts) {
    this.client = parts.client;
    this.highLevel = parts.highLevel;
    this.marking = parts.marking;
    this.maxQueued = parts.maxQueued;
    this.partitioner = parts.partitioner;
    this.orders = parts.orders;
    this.metadata = parts.metadata;
    this.unplaced = parts.unplaced;
    this.backlog = parts.backlog;
    this.handoffs = parts.handoffs;
    this.fireAndForget = parts.fireAndForget;
    this.handOver = parts.handOver;
    this.outcomes = parts.outcomes;
    this.error = parts.error;
  }

  /** Messages taken and not yet handed to librdkafka: the backlog, those waiting for a handoff or for their topic's count. */
  held(): number {
    return this.backlog.size + (this.handoffs?.held ?? 0) + this.unplaced.size;
  }

  /**
   * Takes one message of a connected producer (the caller checked its state): true when it was
   * handed over or is held for its turn, false when it was held behind librdkafka's full queue
   * or maxQueued messages are held (produce()'s answer). Throws on a bad argument, and on a
   * refusal for good of a message without a send() (`pending`) to reject.
   */
  enqueue(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined, pending: Pending | undefined): boolean {
    const metadata = this.metadata;
    let info = metadata.last;
    if (topic !== metadata.lastName || info === undefined) info = metadata.entry(topic);
    if (this.highLevel) {
      // What the HighLevelProducer's own produce() would send: its serializers' output.
      const client = this.client as HighLevelLike;
      value = serialize(client.valueSerializer, value, 'value') as Value;
      key = serialize(client.keySerializer, key, 'key') as Key | null | undefined;
      if (pending !== undefined) pending.key = key ?? null;
    }
    let payload: Buffer | null;
    if (typeof value === 'string') payload = Buffer.from(value);
    else if (value === null || value === undefined) payload = null;
    else if (Buffer.isBuffer(value)) payload = value;
    // node-rdkafka takes only a Buffer: a view of the same memory, not a copy.
    else if (value instanceof Uint8Array) payload = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else throw new InvalidArgTypeError('value', 'a Buffer, Uint8Array, string or null', value);
    // A kdp-order header among the caller's (copied from a consumed message) is never sent as
    // ours: a Resequencer would read it, stale, or find two. Ours replaces it, or it goes.
    let forwarded = -1;
    if (headers === null) headers = undefined;
    else if (headers !== undefined) forwarded = checkHeaders(headers);
    if (timestamp !== undefined && timestamp !== null && badTimestamp(timestamp)) throw timestampError(timestamp);
    if (info.partitions <= 0 || this.unplaced.size > 0) {
      checkKey('key', key);
      if (this.unplaced.holds(topic) || (info.partitions <= 0 && !info.unassigned)) {
        // Its topic's count is not known yet: it waits here for it (place/unplaced.ts), behind the
        // topic's messages already waiting, and is placed when it comes. Taken.
        this.metadata.request(topic);
        const m: UnplacedMessage = { topic, value: payload, key, timestamp, headers, forwarded, pending: kept(pending, undefined) };
        if (this.held() < this.maxQueued / 2) {
          this.unplaced.hold(m);
          return true;
        }
        // Too much held: the topic's messages go unassigned, in call order, this one last.
        this.unplaced.hold(m);
        this.unplaced.giveUp(topic);
        return !this.backlog.holding;
      }
    }
    const code = this.place(topic, info, payload, key, headers, forwarded, timestamp, pending);
    if (code === 0) return true;
    if (code === ERR_QUEUE_FULL) return false;
    // Refused for good at once: produce() throws, a send()'s promise rejects.
    return this.outcomes.refusedAtOnce(code, topic, pending);
  }

  /** A message whose topic's count it waited for: placed now (unassigned if the count did not come). */
  placeUnplaced(m: UnplacedMessage): void {
    const info = this.metadata.topics.get(m.topic) ?? this.metadata.entry(m.topic);
    try {
      const code = this.place(m.topic, info, m.value, m.key, m.headers, m.forwarded, m.timestamp, m.pending);
      // Refused for good after its call returned: its promise rejects, or 'delivery' tells.
      if (code !== 0 && code !== ERR_QUEUE_FULL) this.outcomes.failed(code, m.topic, this.lastRefused.partition, this.lastRefused.key, m.pending);
    } catch (err) {
      // Not a refusal: a fault here; its caller is told.
      if (m.pending !== undefined && m.pending !== this.fireAndForget) m.pending.reject(err as Error);
      else this.error(err);
    }
  }

  /**
   * A message held for a handoff whose turn came: produced now, or behind the backlog. A marked
   * one takes its sequence now (OrderChains.renumber()), so that it reaches its partition in
   * sequence order with the producer's other marked messages.
   */
  released(m: Waiting): void {
    if (m.header !== undefined && m.link !== undefined) this.orders.renumber(m.link.entry, m.header);
    const code = this.backlog.holding
      ? ERR_QUEUE_FULL
      : this.handOver.produce(m.topic, m.partition, m.value, m.key, m.timestamp, m.pending, m.headers, m.link);
    if (code === ERR_QUEUE_FULL) this.backlog.hold(m);
    else if (code !== 0) this.outcomes.refused(code, m);
  }

  /**
   * The partitioning decision, and the message handed over: the partition (-1: the count is
   * unknown, and librdkafka places it), the order header of a marked message, and its handoff.
   * Answers as the hand-over does: 0 taken (handed over, or held for its turn), ERR_QUEUE_FULL
   * held (produce() says false), or librdkafka's refusal for good, its order sequence given back
   * and where it went in `lastRefused`: the caller tells its caller (it throws only on its own call).
   * The message comes as arguments: an object per message would weigh on produce() (docs/performance.md).
   */
  private place(topic: string, info: TopicInfo, value: Buffer | null, key: Key | null | undefined, headers: Headers | undefined,
    forwarded: number, timestamp: number | null | undefined, pending: Pending | undefined): number {
    let partition = -1;
    let zero = -1; // whether a string key has U+0000: -1 not known yet
    let entry = -1;
    let link: Link | undefined;
    let after: Link | undefined;
    this.marked = false;
    if (info.partitions > 0) {
      partition = this.partitioner.decide(topic, key, info.partitions);
      // A 'hot' listener's send() placed meanwhile may have marked its own message.
      this.marked = false;
      const decision = this.partitioner.decision;
      zero = decision.keyZero;
      const order = decision.order;
      if (order !== ORDER_NONE && this.marking) {
        headers = this.orderHeaders(order, info.partitions, partition, headers, forwarded);
        forwarded = -1;
        if (this.handoffs !== undefined) {
          entry = decision.entry;
          after = this.handoffs.waitFor(entry, order, topic, partition, this.lastHeader!);
          link = this.handoffs.track(entry, order, partition, pending ?? this.fireAndForget);
        }
      } else if (this.handoffs !== undefined && this.handoffs.held > 0) {
        entry = decision.entry;
      }
    } else {
      this.metadata.request(topic);
    }
    if (forwarded !== -1) headers = withoutForwarded(headers!, forwarded);
    // node-rdkafka sends an empty Buffer key as a null key and cuts a string key at its first
    // U+0000: hand both over in a form that survives.
    if (typeof key === 'string') {
      if (zero !== 0 && key.indexOf('\u0000') !== -1) key = Buffer.from(key);
    } else if (key instanceof Uint8Array) {
      if (key.length === 0) key = '';
      else if (!Buffer.isBuffer(key)) key = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
    }
    info.produced++;
    pending = pending ?? this.fireAndForget;
    if (after !== undefined || (entry >= 0 && this.handoffs!.busy(entry))) {
      // An ordered handoff: it goes once its predecessor's offset is known (and behind the
      // key's messages already waiting). Taken: it is sent, or its caller told.
      pending = kept(pending, link);
      this.handoffs!.hold(entry, { topic, partition, value, key, timestamp, headers, pending, link, header: this.lastHeader, after });
      if (this.held() < this.maxQueued) return 0;
      // The memory bound: produce() says false as on a full queue, and 'drain' follows.
      this.backlog.owe();
      return ERR_QUEUE_FULL;
    }
    if (this.backlog.holding) {
      this.backlog.hold({ topic, partition, value, key, timestamp, headers, pending: kept(pending, link), link });
      return ERR_QUEUE_FULL;
    }
    const code = this.handOver.produce(topic, partition, value, key, timestamp, pending, headers, link);
    if (code === 0) return 0;
    if (code === ERR_QUEUE_FULL) {
      this.backlog.hold({ topic, partition, value, key, timestamp, headers, pending: kept(pending, link), link });
      return ERR_QUEUE_FULL;
    }
    // Refused for good: give its order sequence back, so the key's chain has no gap.
    if (this.marked) this.orders.undo();
    if (link !== undefined) this.handoffs!.undo();
    this.lastRefused.partition = partition;
    this.lastRefused.key = key;
    return code;
  }

  /** The caller's headers with ours added, or in place of the first `kdp-order` among them (at `forwarded`, -1: none). */
  private orderHeaders(order: number, partitions: number, partition: number, headers: Headers | undefined, forwarded: number): Headers {
    const header = this.orders.header(order, partitions, partition);
    this.marked = true;
    this.lastHeader = header;
    if (headers === undefined) return [header];
    return forwarded === -1 ? headers.concat(header) : withoutForwarded(headers, forwarded, header);
  }
}

/**
 * The opaque a held message keeps: a send() still on its CurrentSend (take/send-promise.ts) gets a
 * SendPending of its own here, its link's opaque too.
 */
function kept(pending: Pending | undefined, link: Link | undefined): Pending | undefined {
  if (!(pending instanceof CurrentSend)) return pending;
  const own = pending.own();
  if (link !== undefined && link.opaque === pending) link.opaque = own;
  return own;
}
