// What the Resequencer (src/consumer/resequencer.ts) knows of each topic and partition it is
// fed: which partitions this consumer owns, the offsets seen and committed, and its held
// messages by partition (the Held record itself is the Resequencer's, declared here with the
// states it points at).

import type { Buffer } from 'node:buffer';
import type { OrderHeader } from '../partitioner/headers';
import { allowedPartitions } from '../partitioner/allowed';
import { PARTITIONERS } from '../core/hash';
import type { ConsumedMessage } from './resequencer-types';
import type { RecordView } from './handled-record';

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
  /**
   * The latest handled record known of this partition (handled-record.ts): read from its
   * owner's commits while something waits for it, or committed by its previous owner when it
   * came here. null: none.
   */
  record: RecordView | null;
  /** The record committed by this partition's previous owner when it came here: what it says is handled is not handed out again. */
  inherited: RecordView | null;
  /** Marked messages the inherited record counts pending and that were not read again yet ("id:sequence"). */
  inheritedMarked: Set<string> | null;
  /** Per producer, the highest sequence of its marked messages read here (this consumer's, and the inherited record's); most recent last. */
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
  /** topic + partition + key for a lane member (unmarked, ANCHOR, RETURN); '' for a SPREAD. */
  readonly lane: string;
  readonly state: PartitionState;
  at: number;
  bytes: number;
  /** Still waiting for its chain's previous message (or for a partition to pass its offset). */
  waitsChain: boolean;
  /** Not yet first in its lane. */
  waitsLane: boolean;
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
      topic: t, partition, next: -1, first: -1, committed: -1, held: new Set(), watchers: [], record: null, inherited: null, inheritedMarked: null,
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
