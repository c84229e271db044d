// Resequencer: fed the messages a consumer reads (any set of partitions, each in offset
// order), it releases each spread key's messages in the order their producer sent them and
// lets every other message through at once. It reads the order header of src/partitioner/headers.ts; the
// rule and its proof are in docs/ordering.md. In short, per key:
//
// - a *line* is a key's held messages on one partition that are unmarked, ANCHORs or RETURNs
//   (the messages a producer puts on the key's normal partition). A line member waits behind
//   the line members held before it: the cold messages after a RETURN stay behind it, and an
//   ANCHOR behind its producer's earlier cold messages (which cannot be told apart from other
//   producers' messages, so all of them wait);
// - a SPREAD or RETURN also waits for the message its `previous` names (same producer, same
//   key): its *chain*. SPREAD messages are never line members: they are ordered by their
//   chain alone. This is what keeps several producers spreading the same key from waiting on
//   each other in a cycle: a line only ever waits for lower offsets of the same partition, and
//   a chain leads back to its ANCHOR at a lower offset of that partition.
//
// A consumer of a group does not read every partition. When the group's members commit
// handled records (useRecords(); DynamicConsumer on the native engine does), a chained message
// whose predecessor is on a partition another member owns waits until that partition's record
// (setRecord(), src/delivery/handled-record.ts) shows the predecessor handled: by its offset
// (a handoff) or by its producer and sequence. Without records, with the predecessor's offset it
// waits until the group's committed offset of that partition has passed it (setCommitted());
// without the offset, it is released at once with `ordered: false, reason: 'unowned'`.
//
// Memory is bounded (maxBufferedMessages / maxBufferedBytes): past the bound the oldest held
// message is released with `ordered: false`; so is a message held longer than maxWaitMs (its
// predecessor was read before a restart, or is lost). When that message waits for another held
// one, the first of those it waits behind goes instead, and the rest follow it in order.
// Nothing is ever dropped, and nothing is released twice.
//
// This file is what a consumer calls (push, assign, setCommitted, the handled records, expire,
// flush, forget); how a held message waits and how a release lets go what waited for it is the
// class it extends, ReleaseRule (release-rule.ts), over the tables of held-messages.ts,
// partition-states.ts and released-chains.ts.

import type { OrderHeader } from '../partitioner/headers';
import type { ConsumedMessage, Release, ResequencerOptions } from './resequencer-types';
import { chainName, keyText, orderOf } from './message-order';
import { type Held, inheritRecord, noteRead, type PartitionState, recordOfState } from './partition-states';
import { ReleaseRule } from './release-rule';
import { InvalidArgTypeError } from '../core/errors';
import { checkKey } from '../core/key';
import { RESEQUENCER_DEFAULTS, resolveResequencerOptions } from '../core/options';
import { type HandledRecord, RecordView } from './handled-record';

export type { ConsumedMessage, Release, ReleaseReason, ResequencerOptions } from './resequencer-types';
export { RESEQUENCER_DEFAULTS };
export { keyText, ORDER_VALUE } from './message-order';

/** The release of a message read() let go at once (null): in order, with no order header. */
export function goesAsIs<M extends ConsumedMessage>(message: M): Release<M> {
  return { message, ordered: true, outOfOrder: false, order: null };
}

export class Resequencer<M extends ConsumedMessage = ConsumedMessage> extends ReleaseRule<M> {
  /** Each producer's highest sequence read per partition is kept, for recordOf() (keepRecords(), useRecords()). */
  private recording = false;
  /** Messages not handed out because the record their partition's previous owner committed counts them handled. */
  skipped = 0;

  constructor(options: ResequencerOptions = {}, now: () => number = Date.now) {
    const o = resolveResequencerOptions(options);
    if (typeof now !== 'function') throw new InvalidArgTypeError('now', 'a function returning ms', now);
    super(o, now);
  }

  /** Messages held now. */
  get held(): number {
    return this.holding.count;
  }

  /** Messages of a partition held now. */
  heldIn(topic: string, partition: number): number {
    return this.topics.get(topic)?.partitions.get(partition)?.held.size ?? 0;
  }

  /** Chains (producer and key) known now. */
  get chainCount(): number {
    return this.chains.size;
  }

  /**
   * @internal The size of each of its tables, for bench/soak/tables.js (read at sampling
   * time, never on the message path; heldOrder counts released entries not yet skipped).
   */
  tableSizes(): Record<'held' | 'heldBytes' | 'chains' | 'lines' | 'waitingFor' | 'heldBySequence' | 'heldOrder' | 'partitionStates', number> {
    const { lines, waitingFor, bySequence, order } = this.holding.sizes();
    let partitionStates = 0;
    for (const t of this.topics.values()) partitionStates += t.partitions.size;
    return { held: this.holding.count, heldBytes: this.holding.bytes, chains: this.chains.size, lines, waitingFor, heldBySequence: bySequence, heldOrder: order, partitionStates };
  }

  /**
   * Takes one consumed message; returns the messages released by it, in release order (it
   * may be among them, and it may release others that waited for it). A message that is not
   * a consumed message (topic, integer partition and offset; a string, Buffer or null key)
   * gets an InvalidArgTypeError; headers it cannot read make it an unmarked message.
   */
  push(message: M): Release<M>[] {
    if (typeof message !== 'object' || message === null || typeof message.topic !== 'string' ||
      !Number.isInteger(message.partition) || message.partition < 0 || !Number.isInteger(message.offset) || message.offset < 0) {
      throw new InvalidArgTypeError('message', 'a consumed message with topic, partition and offset', message);
    }
    checkKey('message.key', message.key);
    return this.read(message) ?? [goesAsIs(message)];
  }

  /**
   * @internal push() for a consumer that made the message itself (its fields are not checked
   * again): null when the message is unmarked and goes at once with nothing before it (the
   * common case, for which no Release is made: it is handed out ordered, with no order).
   */
  read(message: M): Release<M>[] | null {
    const key = message.key;
    const state = this.topics.partition(message.topic, message.partition);
    if (message.offset >= state.next) state.next = message.offset + 1;
    if (state.first < 0) this.firstSeen(state, message.offset);
    const order = orderOf(message);
    if (order !== null && this.recording) noteRead(state, order);
    // Handled by this partition's previous owner, as its last commit's record says: not again.
    const inherited = state.inherited;
    if (inherited !== null && message.offset < inherited.record.end && inherited.handledOffset(message.offset)) return this.skip(state, message, order);
    // Cold fast path: nothing is held in any line, so an unmarked message has nothing to wait behind.
    if (order === null && !this.holding.lined && this.releasedMeanwhile.length === 0) return null;

    const text = keyText(key);
    const member = order === null || order.kind === 'anchor' || order.kind === 'return';
    const line = member ? `${message.topic}\u0000${message.partition}\u0000${text}` : '';
    const chain = order === null ? '' : chainName(message.topic, order.producerId, text);
    const h: Held<M> = {
      message, order, chain, line, state, at: 0, bytes: 0,
      waitsChain: false, waitsLine: member && this.holding.lineHasBefore(line, message.offset), unowned: false, released: false,
    };
    if (order !== null && order.kind !== 'anchor' && order.previous !== 0 && !this.chains.follows(chain, order)) this.placeWait(h, order);
    const out: Release<M>[] = this.releasedMeanwhile.length > 0 ? this.releasedMeanwhile.splice(0) : [];
    if (!h.waitsChain && !h.waitsLine) {
      this.release(h, !h.unowned, h.unowned ? 'unowned' : undefined, out);
    } else {
      this.holding.hold(h, this.now());
      this.enforceBounds(out);
    }
    return out;
  }

  /**
   * Partitions of `topic` this consumer owns (incremental: call it on every assignment).
   * Before the first call for a topic, every partition of it counts as owned.
   */
  assign(topic: string, partitions: readonly number[]): void {
    if (typeof topic !== 'string') throw new InvalidArgTypeError('topic', 'a string', topic);
    if (!Array.isArray(partitions) || !partitions.every((p) => Number.isInteger(p) && p >= 0)) {
      throw new InvalidArgTypeError('partitions', 'an array of partition numbers', partitions);
    }
    this.topics.assign(topic, partitions);
  }

  /**
   * Partitions this consumer does not own whose group-committed offset a held message waits
   * for: read the group's committed offsets of these now and then and pass them to
   * setCommitted().
   */
  awaited(): Array<{ topic: string; partition: number }> {
    const out: Array<{ topic: string; partition: number }> = [];
    for (const t of this.topics.values()) {
      for (const s of t.partitions.values()) {
        if (s.watchers.length === 0) continue;
        s.watchers = s.watchers.filter((h) => !h.released && h.waitsChain);
        if (s.watchers.length > 0 && !this.topics.owns(t, s.partition)) out.push({ topic: t.name, partition: s.partition });
      }
    }
    return out;
  }

  /**
   * The group's committed offset of a partition (another consumer's, typically): held
   * messages whose predecessor is below it go, in order. Returns what it released.
   */
  setCommitted(topic: string, partition: number, offset: number): Release<M>[] {
    if (typeof topic !== 'string') throw new InvalidArgTypeError('topic', 'a string', topic);
    if (!Number.isInteger(partition) || partition < 0) throw new InvalidArgTypeError('partition', 'a partition number', partition);
    if (typeof offset !== 'number' || !Number.isInteger(offset)) throw new InvalidArgTypeError('offset', 'an integer offset', offset);
    const out: Release<M>[] = [];
    const state = this.topics.partition(topic, partition);
    if (offset > state.committed) {
      state.committed = offset;
      this.passed(state, offset, out);
    }
    return out;
  }

  /**
   * The group's members commit handled records (DynamicConsumer on the native engine does): a
   * message whose predecessor is on a partition another member owns waits until setRecord()
   * gives a record of that partition showing it handled (or maxWaitMs), instead of going out
   * flagged 'unowned'. Read awaited() for the partitions to read records of.
   */
  useRecords(): void {
    this.records = true;
    this.recording = true;
  }

  /** Whether the group's members wait for each other's handled records (useRecords()). */
  get waitsForRecords(): boolean {
    return this.records;
  }

  /**
   * This consumer commits handled records (recordOf()), whether or not it waits for others':
   * each producer's highest sequence read on each partition is kept for them.
   */
  keepRecords(): void {
    this.recording = true;
  }

  /**
   * The latest handled record of a partition another member owns (its last commit's): held
   * messages whose predecessor it shows handled go, in order; its offset counts as
   * setCommitted()'s. Returns what it released.
   */
  setRecord(topic: string, partition: number, record: HandledRecord): Release<M>[] {
    if (typeof topic !== 'string') throw new InvalidArgTypeError('topic', 'a string', topic);
    if (!Number.isInteger(partition) || partition < 0) throw new InvalidArgTypeError('partition', 'a partition number', partition);
    const state = this.topics.partition(topic, partition);
    state.record = new RecordView(record);
    if (record.offset > state.committed) state.committed = record.offset;
    const out: Release<M>[] = [];
    this.passed(state, state.committed, out);
    return out;
  }

  /**
   * A partition another member owns was committed without a handled record (its record did
   * not fit the broker's limit, or its member commits none): what waits there for a predecessor
   * of unknown offset goes now, flagged 'unowned', as without records; a handoff keeps waiting
   * for the committed offset. Returns what it released.
   */
  withoutRecord(topic: string, partition: number): Release<M>[] {
    const state = this.topics.partition(topic, partition);
    state.record = null;
    const out: Release<M>[] = [];
    let kept = 0;
    const watchers = state.watchers;
    const ready: Held<M>[] = [];
    for (const h of watchers) {
      if (h.released || !h.waitsChain) continue;
      if (h.order!.afterOffset < 0 && !this.topics.owns(state.topic, partition)) ready.push(h);
      else watchers[kept++] = h;
    }
    watchers.length = kept;
    for (const h of ready) {
      if (h.released) continue;
      h.unowned = true;
      h.waitsChain = false;
      this.holding.dropWaiter(h);
      if (!h.waitsLine) this.release(h, false, 'unowned', out);
    }
    return out;
  }

  /**
   * The record the previous owner of a partition coming to this consumer committed, before its
   * first message is read: what it counts handled is not handed out again (skipped), and what
   * waits for a predecessor it shows handled goes. Returns what it released.
   */
  inherit(topic: string, partition: number, record: HandledRecord): Release<M>[] {
    const state = this.topics.partition(topic, partition);
    inheritRecord(state, record);
    const out: Release<M>[] = [];
    this.passed(state, state.committed, out);
    return out;
  }

  /**
   * The handled record to commit with `offset` for a partition this consumer owns: `unhandled`,
   * the offsets released and not handled yet, and `marked`, the order headers of those that
   * are marked (the Dispatcher's); held messages and what an inherited record still counts
   * unhandled are added here.
   */
  recordOf(topic: string, partition: number, offset: number, unhandled: Iterable<number>, marked: Iterable<OrderHeader>): HandledRecord {
    return recordOfState(this.topics.partition(topic, partition), offset, unhandled, marked);
  }

  /**
   * Releases, out of order, what has waited longer than maxWaitMs, and forgets chains idle
   * longer than maxChainIdleMs; call it now and then (DynamicConsumer does).
   */
  expire(): Release<M>[] {
    const out: Release<M>[] = [];
    const now = this.now();
    this.chains.expire(now - this.options.maxChainIdleMs);
    const limit = now - this.options.maxWaitMs;
    for (;;) {
      const oldest = this.holding.oldest();
      if (!oldest || oldest.at > limit) break;
      this.release(this.root(oldest), false, 'timeout', out);
    }
    return out;
  }

  /** Releases everything held, oldest first, out of order (e.g. when a partition is revoked). */
  flush(): Release<M>[] {
    const out: Release<M>[] = [];
    for (let oldest = this.holding.oldest(); oldest; oldest = this.holding.oldest()) this.release(this.root(oldest), false, 'flush', out);
    return out;
  }

  /**
   * Drops what is held of a partition and what is known of its offsets and ownership,
   * without releasing anything (when it is revoked: its next owner reads it again from the
   * committed offset). Returns how many held messages were dropped.
   */
  forget(topic: string, partition: number): number {
    const t = this.topics.get(topic);
    if (t === undefined) return 0;
    t.owned?.delete(partition);
    const state = t.partitions.get(partition);
    if (state === undefined) return 0;
    let dropped = 0;
    for (const h of [...state.held]) {
      this.holding.unhold(h);
      h.released = true;
      dropped++;
    }
    // What waits for this partition to pass an offset keeps waiting (now for the group's commits).
    // What waited here for a predecessor that would be read on it now waits for its next owner's
    // record (or, a handoff, for the group's committed offset past it).
    const watching = new Set(state.watchers);
    for (const other of t.partitions.values()) {
      for (const h of other.held) {
        const order = h.order;
        if (h.waitsChain && order !== null && order.afterPartition === partition && (this.records || order.afterOffset >= 0) && !watching.has(h)) {
          state.watchers.push(h);
        }
      }
    }
    state.next = -1;
    state.first = -1;
    state.inherited = null;
    state.inheritedMarked = null;
    state.producers.clear();
    return dropped;
  }

  /**
   * A marked message this resequencer released was not handled (it left with its partition,
   * or its consumer stopped): its chain no longer counts it as released, so that a successor
   * read here later waits for it again (for the group's commit past it, or maxWaitMs) instead
   * of going ordered before it. Its predecessor is not counted again either (it may be
   * unhandled too): a successor of that one waits for the commit past it.
   */
  unreleased(message: M, order: OrderHeader): void {
    this.chains.unreleased(chainName(message.topic, order.producerId, keyText(message.key)), order.sequence);
  }

  /**
   * A marked message released here, and not handled yet, is taken back (its consumer's handler
   * queue gives it back, to be pushed again), after every message taken back with it was
   * unreleased(): its predecessor, released here and not itself taken back or left unhandled,
   * counts as released again, so that the message follows it when pushed.
   */
  takeBack(message: M, order: OrderHeader): void {
    const chain = chainName(message.topic, order.producerId, keyText(message.key));
    if (order.kind !== 'anchor' && order.previous !== 0 && !this.chains.unhandledHere(chain, order.previous)) this.chains.restore(chain, order.previous, this.now());
  }

  /**
   * The offset a consumer may commit for a partition: below the lowest message still held
   * (at-least-once), or past the last one seen. undefined before any message of it.
   */
  committable(topic: string, partition: number): number | undefined {
    const state = this.topics.get(topic)?.partitions.get(partition);
    if (state === undefined || state.next < 0) return undefined;
    let lowest = state.next;
    for (const h of state.held) if (h.message.offset < lowest) lowest = h.message.offset;
    return lowest;
  }

  /**
   * The first message this consumer reads of a partition it owns: what is below it was handled
   * by the group before (a consumer starts at the committed offset), so messages waiting for
   * an offset below it go.
   */
  private firstSeen(state: PartitionState, offset: number): void {
    state.first = offset;
    if (state.watchers.length > 0 && this.topics.owns(state.topic, state.partition)) {
      const out: Release<M>[] = [];
      this.passed(state, offset, out);
      // Released by the first message of a partition: push() returns them ahead of it.
      for (const r of out) this.releasedMeanwhile.push(r);
    }
  }

  /**
   * A message the partition's previous owner handled (its record says so): not handed out. A
   * marked one counts as released for its chain, so what waits for it here goes.
   */
  private skip(state: PartitionState, message: M, order: OrderHeader | null): Release<M>[] {
    this.skipped++;
    const out: Release<M>[] = this.releasedMeanwhile.length > 0 ? this.releasedMeanwhile.splice(0) : [];
    if (order === null) return out;
    const h: Held<M> = {
      message, order, chain: chainName(message.topic, order.producerId, keyText(message.key)), line: '', state, at: 0, bytes: 0,
      waitsChain: false, waitsLine: false, unowned: false, released: false,
    };
    const at = out.length;
    this.release(h, true, undefined, out);
    out.splice(at, 1); // its own release: it is not handed out
    return out;
  }

  /** Releases found by firstSeen(), returned by the push() that found them. */
  private readonly releasedMeanwhile: Release<M>[] = [];
}
