// Resequencer: fed the messages a consumer reads (any set of partitions, each in offset
// order), it releases each spread key's messages in the order their producer sent them and
// lets every other message through at once. It reads the order header of
// src/partitioner/headers.ts; the rule and its proof are docs/ordering.md's. Per key:
//
// - a *line* (a key's held unmarked, ANCHOR and RETURN messages on one partition) goes in
//   offset order: cold messages stay behind a RETURN, and an ANCHOR behind the cold messages
//   before it (one producer's cannot be told from another's, so all of them wait);
// - a SPREAD or RETURN also waits for the message its `previous` names: its *chain*. SPREADs
//   are in no line, so producers spreading one key never wait on each other in a cycle: a line
//   waits only for lower offsets of its partition, and a chain leads back to its ANCHOR at a
//   lower offset of that partition.
//
// A predecessor on another member's partition is waited for by its handled record
// (useRecords()), else by its committed offset when known (setCommitted()), else not at all
// ('unowned'). Past the bounds or maxWaitMs the oldest held message goes out of order, or the
// first it waits behind, the rest following in order: nothing is dropped or released twice.
// The waiting rule is ReleaseRule's (release-rule.ts); this class is what a consumer calls.

import type { OrderHeader } from '../partitioner/headers';
import { type BlockedKey, type ConsumedMessage, keyLabel, type Release, type ResequencerOptions } from './resequencer-types';
import { chainName, keyText, orderOf } from './message-order';
import { type Held, inheritRecord, noteRead, type PartitionState, recordOfState } from './partition-states';
import { ReleaseRule } from './release-rule';
import { InvalidArgTypeError } from '../core/errors';
import { checkKey } from '../core/key';
import { RESEQUENCER_DEFAULTS, resolveResequencerOptions } from '../core/group-options';
import { type HandledRecord, RecordView } from './handled-record';

export type { ConsumedMessage, Release, ReleaseReason, ResequencerOptions } from './resequencer-types';
export { RESEQUENCER_DEFAULTS };
export { keyText, ORDER_VALUE } from './message-order';

/** The release of a message read() let go at once (null): in order, with no order header. */
export function goesAsIs<M extends ConsumedMessage>(message: M): Release<M> {
  return { message, ordered: true, outOfOrder: false, order: null };
}

export class Resequencer<M extends ConsumedMessage = ConsumedMessage> extends ReleaseRule<M> {
  /** Each producer's highest sequence read per partition is kept, for recordOf(). */
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

  /** The keys whose messages the resequencer holds now (for their predecessors), each with its longest wait so far. */
  heldKeys(now: number): BlockedKey[] {
    const keys = new Map<string, BlockedKey>();
    for (const t of this.topics.values()) {
      const topic = t.name;
      for (const state of t.partitions.values()) {
        for (const h of state.held) {
          const key = keyLabel(h.message.key);
          const name = `${topic}\u0000${key}`;
          const waitedMs = now - h.at;
          if ((keys.get(name)?.waitedMs ?? -1) < waitedMs) keys.set(name, { topic, key, reason: 'predecessor', waitedMs });
        }
      }
    }
    return [...keys.values()];
  }

  /** Chains (producer and key) known now. */
  get chainCount(): number {
    return this.chains.size;
  }

  /** @internal Table sizes for bench/soak/tables.js (heldOrder counts released entries not yet skipped). */
  tableSizes(): Record<'held' | 'heldBytes' | 'chains' | 'lines' | 'waitingFor' | 'heldBySequence' | 'heldOrder' | 'partitionStates', number> {
    const { lines, waitingFor, bySequence, order } = this.holding.sizes();
    let partitionStates = 0;
    for (const t of this.topics.values()) partitionStates += t.partitions.size;
    return { held: this.holding.count, heldBytes: this.holding.bytes, chains: this.chains.size, lines, waitingFor, heldBySequence: bySequence, heldOrder: order, partitionStates };
  }

  /**
   * Takes one consumed message; returns what it releases, in order (itself, and what waited for
   * it). A malformed message gets an InvalidArgTypeError; unreadable headers make it unmarked.
   */
  push(message: M): Release<M>[] {
    if (typeof message !== 'object' || message === null || typeof message.topic !== 'string' ||
      !Number.isInteger(message.partition) || message.partition < 0 || !Number.isInteger(message.offset) || message.offset < 0) {
      throw new InvalidArgTypeError('message', 'a consumed message with topic, partition and offset', message);
    }
    checkKey('message.key', message.key);
    return this.read(message) ?? [goesAsIs(message)];
  }

  /** @internal push() unchecked, for a consumer that made the message: null when it goes at once, unmarked (no Release made). */
  read(message: M): Release<M>[] | null {
    const key = message.key;
    const state = this.topics.partition(message.topic, message.partition);
    if (message.offset >= state.next) state.next = message.offset + 1;
    if (state.first < 0) this.firstSeen(state, message.offset);
    const order = orderOf(message);
    if (order !== null && this.recording) noteRead(state, order);
    // Its partition's previous owner handled it (its record says so).
    const inherited = state.inherited;
    if (inherited !== null && message.offset < inherited.record.end
      && (order === null ? inherited.handledOffset(message.offset) : inherited.handledAt(message.offset, order.producerId, order.sequence))) {
      return this.skip(state, message, order);
    }
    // Nothing held in any line: an unmarked message waits behind nothing.
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

  /** Partitions of `topic` this consumer owns, added on every assignment; before the first, all count as owned. */
  assign(topic: string, partitions: readonly number[]): void {
    if (typeof topic !== 'string') throw new InvalidArgTypeError('topic', 'a string', topic);
    if (!Array.isArray(partitions) || !partitions.every((p) => Number.isInteger(p) && p >= 0)) {
      throw new InvalidArgTypeError('partitions', 'an array of partition numbers', partitions);
    }
    this.topics.assign(topic, partitions);
  }

  /** Partitions not owned here whose committed offset (or record) a held message waits for: read them now and then. */
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

  /** The group's committed offset of a partition: held messages whose predecessor is below it go, in order. */
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
   * The group's members commit handled records: a message whose predecessor is on another
   * member's partition waits for setRecord() to show it handled (or maxWaitMs) instead of going
   * flagged 'unowned'. awaited() names the partitions whose records to read.
   */
  useRecords(): void {
    this.records = true;
    this.recording = true;
  }

  /** Whether the group's members wait for each other's handled records (useRecords()). */
  get waitsForRecords(): boolean {
    return this.records;
  }

  /** This consumer commits handled records (recordOf()), whether or not it waits for others'. */
  keepRecords(): void {
    this.recording = true;
  }

  /** The latest handled record of another member's partition: what it shows handled goes; its offset counts as setCommitted()'s. */
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

  /** Another member's partition was committed without a record: what waits there for an unknown offset goes flagged 'unowned'. */
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

  /** The record a partition coming here was committed with: what it counts handled is skipped, and what waited for that goes. */
  inherit(topic: string, partition: number, record: HandledRecord): Release<M>[] {
    const state = this.topics.partition(topic, partition);
    inheritRecord(state, record);
    const out: Release<M>[] = [];
    this.passed(state, state.committed, out);
    return out;
  }

  /** The record to commit with `offset`: the ledger's `unhandled` and `marked`, plus what is held and an inherited record's unhandled. */
  recordOf(topic: string, partition: number, offset: number, unhandled: Iterable<number>, marked: Iterable<OrderHeader>): HandledRecord {
    return recordOfState(this.topics.partition(topic, partition), offset, unhandled, marked);
  }

  /**
   * Releases, out of order, what waited past maxWaitMs, and forgets chains idle past
   * maxChainIdleMs; call it now and then. What waits behind a predecessor another member's
   * record shows read and not handled yet waits on (from now): it is coming, as behind a call
   * here; maxWaitMs bounds the wait for a predecessor that may never be read.
   */
  expire(): Release<M>[] {
    const out: Release<M>[] = [];
    const now = this.now();
    this.chains.expire(now - this.options.maxChainIdleMs);
    const limit = now - this.options.maxWaitMs;
    for (;;) {
      const oldest = this.holding.oldest();
      if (!oldest || oldest.at > limit) break;
      const root = this.root(oldest);
      if (this.coming(root)) this.holding.renewOldest(oldest, now);
      else this.release(root, false, 'timeout', out);
    }
    return out;
  }

  /** Whether a held message waits for a predecessor another member's record shows read there and not handled yet. */
  private coming(h: Held<M>): boolean {
    const order = h.order;
    if (!h.waitsChain || order === null || order.afterPartition < 0) return false;
    const t = h.state.topic;
    if (this.topics.owns(t, order.afterPartition)) return false;
    return t.partitions.get(order.afterPartition)?.record?.awaitsHandling(order) ?? false;
  }

  /** Releases everything held, oldest first, out of order (e.g. when a partition is revoked). */
  flush(): Release<M>[] {
    const out: Release<M>[] = [];
    for (let oldest = this.holding.oldest(); oldest; oldest = this.holding.oldest()) this.release(this.root(oldest), false, 'flush', out);
    return out;
  }

  /** Drops, unreleased, what is held and known of a revoked partition (its next owner reads it again); returns how many were held. */
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
    // What waited for a predecessor read here now waits for its next owner's record or commit.
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
    state.readHere = null;
    state.producers.clear();
    return dropped;
  }

  /**
   * A marked message released here was not handled (its partition left, or the consumer
   * stopped): a successor read later waits for it again instead of going ordered before it.
   * Its predecessor is not counted released again either: it may be unhandled too.
   */
  unreleased(message: M, order: OrderHeader): void {
    this.chains.unreleased(chainName(message.topic, order.producerId, keyText(message.key)), order.sequence);
  }

  /**
   * An unhandled marked message is taken back to be pushed again, after unreleased() of all
   * taken back with it: its predecessor, if still released here, counts as released again.
   */
  takeBack(message: M, order: OrderHeader): void {
    const chain = chainName(message.topic, order.producerId, keyText(message.key));
    if (order.kind !== 'anchor' && order.previous !== 0 && !this.chains.unhandledHere(chain, order.previous)) this.chains.restore(chain, order.previous, this.now());
  }

  /** The offset a partition may be committed at: the lowest held (at-least-once), else past the last seen; undefined before any. */
  committable(topic: string, partition: number): number | undefined {
    const state = this.topics.get(topic)?.partitions.get(partition);
    if (state === undefined || state.next < 0) return undefined;
    let lowest = state.next;
    for (const h of state.held) if (h.message.offset < lowest) lowest = h.message.offset;
    return lowest;
  }

  /** The first offset read of an owned partition: below it the group handled everything (reads start at the commit). */
  private firstSeen(state: PartitionState, offset: number): void {
    state.first = offset;
    if (state.watchers.length > 0 && this.topics.owns(state.topic, state.partition)) {
      const out: Release<M>[] = [];
      this.passed(state, offset, out);
      // push() returns them ahead of the message.
      for (const r of out) this.releasedMeanwhile.push(r);
    }
  }

  /** A message the partition's previous owner handled: not handed out, but a marked one counts as released for its chain. */
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
