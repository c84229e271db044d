// What the Resequencer (resequencer.ts) knows of each topic and partition it is fed: the
// partitions owned, the offsets seen and committed, the records known, and the held messages.
// The Held record, the Resequencer's, is declared here beside the states it points at.

import type { Buffer } from 'node:buffer';
import type { OrderHeader } from '../partitioner/headers';
import { allowedPartitions } from '../partitioner/allowed';
import { PARTITIONERS } from '../core/hash';
import type { ConsumedMessage } from './resequencer-types';
import { type HandledRecord, RECORD_MAX_PRODUCERS, RecordView } from './handled-record';

/** What is known of one partition of a topic. */
export interface PartitionState {
  readonly topic: TopicState;
  readonly partition: number;
  /** The offset after the last one seen, and the first seen (since assignment); -1 before any. */
  next: number;
  first: number;
  /** The group's committed offset, as last given to setCommitted(); -1 unknown. */
  committed: number;
  /** Held messages of this partition. */
  readonly held: Set<Held<any>>;
  /** Held messages (of any partition) waiting for this partition to pass an offset, or for its record to show their predecessor handled. */
  watchers: Held<any>[];
  /** The latest handled record known of it: its owner's, while something waits for it, or its previous owner's; null: none. */
  record: RecordView | null;
  /** The record committed by this partition's previous owner when it came here: what it says is handled is not handed out again. */
  inherited: RecordView | null;
  /** Marked messages the inherited record counts unhandled and that were not read again yet ("id:sequence"). */
  inheritedMarked: Set<string> | null;
  /** While a record is inherited: per producer, the highest sequence read here since. */
  readHere: Map<string, number> | null;
  /** Per producer, the highest sequence of its marked messages read here or in the inherited record; most recent last. */
  readonly producers: Map<string, number>;
}

export interface TopicState {
  readonly name: string;
  readonly partitions: Map<number, PartitionState>;
  /** Partitions this consumer owns; null: all of them (no assign() for the topic). */
  owned: Set<number> | null;
}

/** A message the Resequencer holds (or is about to release). */
export interface Held<M extends ConsumedMessage> {
  readonly message: M;
  readonly order: OrderHeader | null;
  /** topic + producer + key; '' for an unmarked message. */
  readonly chain: string;
  /** topic + partition + key for a line member (unmarked, ANCHOR, RETURN); '' for a SPREAD. */
  readonly line: string;
  readonly state: PartitionState;
  at: number;
  bytes: number;
  /** Still waiting for its chain's previous message (or for a partition to pass its offset). */
  waitsChain: boolean;
  /** Not yet first in its line. */
  waitsLine: boolean;
  /** Goes out with ordered: false (its predecessor is another consumer's, offset unknown). */
  unowned: boolean;
  released: boolean;
}

type Key = Buffer | string | null | undefined;

export class PartitionStates {
  private readonly topics = new Map<string, TopicState>();

  values(): IterableIterator<TopicState> {
    return this.topics.values();
  }

  /** A topic's state, if it has one. */
  get(topic: string): TopicState | undefined {
    return this.topics.get(topic);
  }

  /** A topic's state, made when it has none. */
  topic(topic: string): TopicState {
    let t = this.topics.get(topic);
    if (t === undefined) this.topics.set(topic, (t = { name: topic, partitions: new Map(), owned: null }));
    return t;
  }

  /** A partition's state, made when it has none. */
  partition(topic: string, partition: number): PartitionState {
    const t = this.topic(topic);
    let s = t.partitions.get(partition);
    if (s === undefined) t.partitions.set(partition, (s = {
      topic: t, partition, next: -1, first: -1, committed: -1, held: new Set(), watchers: [], record: null, inherited: null, inheritedMarked: null, readHere: null,
      producers: new Map(),
    }));
    return s;
  }

  /** Partitions of `topic` this consumer owns, added to those it did. */
  assign(topic: string, partitions: readonly number[]): void {
    const t = this.topic(topic);
    if (t.owned === null) t.owned = new Set();
    for (const p of partitions) t.owned.add(p);
  }

  owns(t: TopicState, partition: number): boolean {
    return t.owned === null || t.owned.has(partition);
  }

  /** Whether this consumer owns every partition a version-1 header's key may have used. */
  ownsAllowed(t: TopicState, key: Key, order: OrderHeader): boolean {
    if (t.owned === null) return true;
    const name = PARTITIONERS[order.partitioner];
    if (name === undefined || order.partitions < 1 || order.width < 1) return false;
    let all = true;
    for (let p = 0; p < order.partitions && all; p++) all = t.owned.has(p);
    if (all) return true;
    try {
      return allowedPartitions(key, order.partitions, Math.min(order.width, order.partitions), name).every((p) => t.owned!.has(p));
    } catch {
      return false;
    }
  }
}

/** The handled record to commit with `offset`: the ledger's `unhandled` and `marked`, plus the held and the inherited unhandled. */
export function recordOfState(state: PartitionState, offset: number, unhandled: Iterable<number>, marked: Iterable<OrderHeader>): HandledRecord {
  const inheritedView = state.inherited;
  const inherited = inheritedView?.record;
  const end = Math.max(offset, state.next, inherited?.end ?? -1);
  // What the previous owner's record did not tell, and was not read here again, is not told here either.
  const pending = inheritedView !== null && state.next < inheritedView.record.end;
  const known = Math.max(offset, pending ? Math.min(end, Math.max(state.next, inheritedView.known)) : end);
  const offsets = new Set<number>();
  const orders: OrderHeader[] = [];
  for (const o of unhandled) if (o >= offset && o < known) offsets.add(o);
  for (const o of marked) orders.push(o);
  for (const h of state.held) {
    if (h.message.offset >= offset && h.message.offset < known) offsets.add(h.message.offset);
    if (h.order !== null) orders.push(h.order);
  }
  if (inherited !== undefined) for (const o of inherited.unhandled) if (o >= offset && o >= state.next && o < known) offsets.add(o);
  if (known > offset) offsets.add(offset);
  // The producers most recently read, with every unhandled marked message of theirs: a producer
  // left out is not known there, so its messages are never counted handled by mistake.
  const ids = [...state.producers.keys()].slice(-RECORD_MAX_PRODUCERS);
  const index = new Map(ids.map((id, i) => [id, i]));
  // A producer's sequences the previous owner read and did not tell are above what was read
  // here since (a producer's messages reach a partition in sequence order): those up to the
  // higher of the two are known.
  const told = ids.map((id) => {
    const read = state.producers.get(id)!;
    const before = pending ? inheritedView.toldOf(id) : undefined;
    return before === undefined ? read : Math.min(read, Math.max(before, state.readHere?.get(id) ?? 0));
  });
  // Per producer kept, its sequences listed already (no name made per message).
  const seen: Array<Set<number> | undefined> = [];
  const out: Array<{ producer: number; sequence: number }> = [];
  const add = (id: string, sequence: number): void => {
    const i = index.get(id);
    if (i === undefined || sequence > told[i]) return;
    const listed = (seen[i] ??= new Set());
    if (listed.has(sequence)) return;
    listed.add(sequence);
    out.push({ producer: i, sequence });
  };
  for (const o of orders) add(o.producerId, o.sequence);
  if (state.inheritedMarked !== null) {
    for (const name of state.inheritedMarked) {
      const at = name.lastIndexOf(':');
      add(name.slice(0, at), Number(name.slice(at + 1)));
    }
  }
  return {
    offset, end, known, unhandled: [...offsets].sort((a, b) => a - b),
    producers: ids.map((id, i) => ({ id, read: state.producers.get(id)!, told: told[i] })), marked: out,
  };
}

/** The record a partition's previous owner committed, taken as this state's before its first message. */
export function inheritRecord(state: PartitionState, record: HandledRecord): void {
  const view = new RecordView(record);
  state.record = view;
  state.inherited = view;
  state.readHere = new Map();
  state.inheritedMarked = record.marked.length > 0 ? new Set(record.marked.map((m) => `${record.producers[m.producer].id}:${m.sequence}`)) : null;
  for (const p of record.producers) {
    const read = state.producers.get(p.id);
    if (read === undefined || p.read > read) state.producers.set(p.id, p.read);
  }
  if (record.offset > state.committed) state.committed = record.offset;
}

/** A marked message read on `state`'s partition: the producer's highest sequence read there, most recent last. */
export function noteRead(state: PartitionState, order: OrderHeader): void {
  const producers = state.producers;
  const read = producers.get(order.producerId);
  if (read !== undefined) producers.delete(order.producerId);
  producers.set(order.producerId, read === undefined || order.sequence > read ? order.sequence : read);
  if (state.inheritedMarked !== null) state.inheritedMarked.delete(`${order.producerId}:${order.sequence}`);
  const here = state.readHere;
  if (here !== null && order.sequence > (here.get(order.producerId) ?? 0)) here.set(order.producerId, order.sequence);
}
