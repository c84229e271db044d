// The topics a partitioner knows and the core's topic slots they hold. A topic with state
// holds a slot (its loads, penalties and counts in the core: assembly/topics.ts); beyond
// maxTopics, a topic is partitioned without state until a slot frees: a free one, or the
// least recently used topic's once that has been idle long enough (eviction).

import type { Core } from '../core/wasm';
import { refreshViews } from '../core/wasm';
import type { ResolvedOptions } from '../core/options';
import { InternalError, InvalidArgTypeError, OutOfRangeError, TopicCapacityError, checkPartitionCount } from '../core/errors';
import { leastRecentQuarter, topicsKept } from '../core/topic-table';
import type { Regions } from './regions';

/**
 * A topic the partitioner knows. One without state (slot -1) holds only its partition count and
 * its sticky run of null keys; beyond topicsKept(maxTopics) of them, the least recently used
 * quarter is forgotten at once (forgetWithoutState). A forgotten topic's next message makes it
 * new again: its null keys start a new sticky run, and it gets a new 'warning'; its keys go to
 * Kafka's partition either way, and topics with state are never forgotten this way.
 */
export interface TopicState {
  readonly name: string;
  /** Its slot in the core, or -1: partitioned without state (beyond maxTopics). */
  slot: number;
  partitions: number;
  lastUsed: number;
  /** Without state: the partition of the current sticky run of null keys, and messages left in it. */
  sticky: number;
  stickyLeft: number;
}

/** A topic idle for this many decisions (or 16 x maxTopics, if more) may give its slot to a topic without one. */
const IDLE_DECISIONS = 16384;
/** At most one topic is given up every this many decisions, and a topic without state looks for a slot as often. */
const EVICTION_EVERY = 1024;

export class TopicSlots {
  /** The topic of the last message: most messages in a row go to the same topic. */
  last: TopicState | undefined;
  /** Counts decisions: a topic's lastUsed is its value at the topic's last message. */
  clock = 0;
  /** Topics whose state was given up for another since construction. */
  evictions = 0;
  /** The topic holding each slot. */
  readonly owners: (TopicState | undefined)[];
  private readonly topics = new Map<string, TopicState>();
  private readonly free: number[] = [];
  /** The most topics without state kept: beyond, the least recently used quarter is forgotten. */
  private readonly keptWithoutState: number;
  private readonly idleDecisions: number;
  /** No eviction before this decision (EVICTION_EVERY apart). */
  private nextEviction = 0;
  /** Per slot: its entries held (hold()); such a slot is not given to another topic. */
  private readonly held: Int32Array;

  /**
   * `warnings` gets a TopicCapacityError for each topic new without state (the partitioner emits
   * them once its call is done); `reset` runs after the core resets a slot (it may log events).
   */
  constructor(
    private readonly core: Core,
    private readonly regions: Regions,
    private readonly options: ResolvedOptions,
    private readonly warnings: TopicCapacityError[],
    private readonly reset: () => void,
  ) {
    const maxTopics = options.maxTopics;
    for (let slot = maxTopics - 1; slot >= 0; slot--) this.free.push(slot);
    this.owners = new Array(maxTopics).fill(undefined);
    this.held = new Int32Array(maxTopics);
    this.idleDecisions = Math.max(IDLE_DECISIONS, 16 * maxTopics);
    this.keptWithoutState = topicsKept(maxTopics);
  }

  /** The topic named `name`, if known. */
  find(name: string): TopicState | undefined {
    return this.topics.get(name);
  }

  /** The topic named `name` (of `numPartitions` if new: it gets a slot if it can), now the last one. */
  get(name: string, numPartitions: number): TopicState {
    let t = this.topics.get(name);
    if (t === undefined) {
      if (typeof name !== 'string') throw new InvalidArgTypeError('topic', 'a string', name);
      this.checkCount(numPartitions);
      // Only when a topic is new, never per message: a quarter at once, one sort per quarter.
      if (this.withoutState() >= this.keptWithoutState) this.forgetWithoutState();
      t = { name, slot: -1, partitions: numPartitions, lastUsed: 0, sticky: 0, stickyLeft: 0 };
      this.topics.set(name, t);
      // Emitted once the call's decision is made (a listener may call partition() again).
      if (!this.claim(t)) this.warnings.push(new TopicCapacityError(name, this.options.maxTopics));
    }
    this.last = t;
    return t;
  }

  /** The topic holding slot `slot`. */
  ownerOf(slot: number): TopicState {
    const t = this.owners[slot];
    if (t !== undefined) return t;
    throw new InternalError(`no topic in slot ${slot}`);
  }

  /** Topics without state now: every topic known holds a slot or is one of them. */
  withoutState(): number {
    return this.topics.size - (this.options.maxTopics - this.free.length);
  }

  /**
   * Gives topic `t` (without state) a slot: a free one, else the least recently used topic's
   * if that one has been idle for idleDecisions, holds no entry the producer holds messages
   * of (hold()), and no topic was given up in the last EVICTION_EVERY decisions (so never an
   * eviction per message). False: still without state.
   */
  claim(t: TopicState): boolean {
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.clock < this.nextEviction) return false;
      this.nextEviction = this.clock + EVICTION_EVERY;
      let victim: TopicState | undefined;
      for (const o of this.owners) if (o !== undefined && (!victim || o.lastUsed < victim.lastUsed)) victim = o;
      if (!victim || this.clock - victim.lastUsed < this.idleDecisions || this.held[victim.slot] > 0) return false;
      slot = victim.slot;
      this.topics.delete(victim.name);
      if (this.last === victim) this.last = undefined;
      this.owners[slot] = undefined;
      this.evictions++;
      this.core.exports.topicReset(slot, 1);
      this.reset();
    }
    t.slot = slot;
    this.owners[slot] = t;
    this.core.exports.topicReset(slot, t.partitions);
    const grew = this.core.exports.setTopicsWithState(this.options.maxTopics - this.free.length);
    refreshViews(this.core); // a new slot's page, or the shared tables, may have grown the memory
    if (grew) this.regions.moved();
    this.reset();
    return true;
  }

  /** Topic `t` has `numPartitions` partitions now. */
  resize(t: TopicState, numPartitions: number): void {
    this.checkCount(numPartitions);
    t.partitions = numPartitions;
    // A topic without state has no record in the core (its sticky run starts over when it no longer fits: placeStatically).
    if (t.slot >= 0) this.core.exports.topicResize(t.slot, numPartitions);
  }

  /** Tracked entry `entry`'s messages wait in the producer (`held`) or no longer: its topic keeps its slot while any does. */
  hold(entry: number, held: boolean): void {
    this.held[this.regions.slotOfEntry(entry)] += held ? 1 : -1;
  }

  /**
   * Forgets the least recently used quarter of the topics without state (never a topic with
   * state): what they held (a partition count, a sticky run of null keys) is made anew at their
   * next message, which goes to the same partition for a key (Kafka's) as before.
   */
  private forgetWithoutState(): void {
    const without: Array<[string, TopicState]> = [];
    for (const entry of this.topics) if (entry[1].slot < 0) without.push(entry);
    for (const name of leastRecentQuarter(without)) this.topics.delete(name);
    const last = this.last;
    if (last !== undefined && this.topics.get(last.name) !== last) this.last = undefined;
  }

  private checkCount(n: number): void {
    checkPartitionCount(n);
    if (n > this.options.maxPartitions) {
      throw new OutOfRangeError('numPartitions', `at most options.maxPartitions (${this.options.maxPartitions})`, n);
    }
  }
}
