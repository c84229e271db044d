// DynamicPartitioner: Kafka's partition for every cold key; for each hot one, a partition
// with room for it whole, else the least loaded of a few allowed partitions. The decision is one WebAssembly call
// (assembly/decide.ts), whose by-products come back in one decision record (decide() and
// Decision); this facade maps topics to slots, names hot keys, and reports.

import { EventEmitter } from 'node:events';
import { instantiate, refreshViews, Core, shared } from '../core/wasm';
import { writeKey, notAKey, packBatches, Key, DOES_NOT_FIT, NULL_LENGTH } from '../core/key';
import { partitionerCode, partitionOfLongKey, PartitionerName } from '../core/hash';
import { resolveOptions, DynamicPartitionerOptions, ResolvedOptions, Horizon } from '../core/options';
import { CallbackError, InternalError, InvalidArgTypeError, OutOfRangeError, TopicCapacityError, checkPartitionCount } from '../core/errors';
import { leastRecentQuarter, topicsKept } from '../core/topic-table';
import {
  STATE_RELIEF, EVENT_HOT, EVENT_COOLED, EVENT_SIZE, EVENT_KIND, EVENT_ENTRY, EVENT_BATCH_INDEX,
  CELL_EVENT_COUNT, D_PARTITION, D_ORDER, D_ENTRY, D_WIDTH, D_ZERO, ORDER_NONE,
  TOPIC_SHIFT, T_TOTAL, T_LOAD_TOTAL, T_MESSAGES, T_WEIGHT, T_SPREAD_MESSAGES, T_MOVED_MESSAGES, T_PAGE, ENTRY_SHIFT, E_TOPIC, E_COUNT, E_STATE, E_WIDTH, E_SIZE,
  PARAMS_SIZE, P_SKETCH_WIDTH, P_SKETCH_DEPTH, P_ENTRIES, P_TOPICS, P_PARTITIONS, P_GROWTH, P_LOAD_GROWTH, P_HOT, P_COOL,
  P_ADMIT, P_MIN_HOT, P_WARMUP, P_SPREAD_FACTOR, P_MAX_SPREAD, P_SPREAD, P_STICKY_RUN, P_WIDEN_ABOVE, P_RELIEF,
  P_SAMPLING, P_HOT_RUN, P_RELOCATE, P_ASK_ON_HOT, E_RETURN, CHAIN_PINNED,
} from '../core/abi';

/** A hot key as hotKeys() and the 'hot' / 'cooled' events report it. */
export interface HotKey {
  readonly topic: string;
  /** The key as it was given: a string, or a copy of the Buffer / Uint8Array. */
  readonly key: Key | null;
  /** Its share of the topic's recent messages, 0..1. */
  readonly share: number;
  /** How many partitions it may use now: 1 when relocated whole (and until its next message after turning hot, or with spread: false). */
  readonly partitions: number;
  /**
   * 'share': its share is above hotThreshold; 'relief': below it, made hot to relieve its
   * overloaded normal partition (reliefThreshold).
   */
  readonly reason: 'share' | 'relief';
  /** false: options.spreadable refused it; it stays on its own partition, unmarked. */
  readonly spreadable: boolean;
}

export interface TopicStats {
  readonly partitions: number;
  /** Recent messages: the decayed count the shares are relative to. */
  readonly recentMessages: number;
  /** Each partition's share of the topic's recent messages. */
  readonly load: readonly number[];
  /** The most loaded partition's load over the mean (1 = perfectly even). */
  readonly imbalance: number;
  readonly hotKeys: number;
  /** Each partition's penalty, in fair shares (setPartitionPenalty). */
  readonly penalty: readonly number[];
  /**
   * Messages decided for the topic, counted since it got its state (the partitioner's
   * construction, or its return after the topic was evicted beyond maxTopics).
   */
  readonly messages: number;
  /**
   * Of them, messages of spread keys: those marked with an order marker (that carry an order
   * header, or would with orderHeaders on). A hot key on its own partition is not marked.
   */
  readonly spreadMessages: number;
  /** Of them, messages placed on another partition than their key's normal one. */
  readonly movedMessages: number;
}

export interface TrackedKeyStats {
  /** Keys tracked exactly now (hot ones and candidates), of `capacity`. */
  readonly tracked: number;
  /**
   * The table's size now: maxTrackedKeys for up to 16 topics with state, doubled each time the
   * topics with state pass twice as many (32, 64, ...), up to its size for maxTopics topics.
   */
  readonly capacity: number;
  /** Hot keys now, all topics. */
  readonly hot: number;
  /**
   * Keys not admitted because the table was full of stronger keys, since construction. When
   * this grows while hot keys are missing from hotKeys(), raise maxTrackedKeys.
   */
  readonly refused: number;
}

export interface PartitionerStats {
  /** The topics with state (at most maxTopics). */
  readonly topics: Readonly<Record<string, TopicStats>>;
  /**
   * Topics partitioned now without state, beyond maxTopics: each message goes to its key's
   * partition (Kafka's), a null key to a sticky run; no detection, no spreading. A topic gets
   * a slot when one frees (a topic with state idle for a while: see evictions). At most
   * max(1024, 16 x maxTopics) are kept, as DynamicProducer keeps its topics: a new one beyond
   * makes the partitioner forget the least recently used quarter of them at once.
   */
  readonly topicsWithoutState: number;
  /**
   * Topics whose state was given up for another topic since construction: only a topic idle
   * for at least max(16384, 16 x maxTopics) decisions, and at most one every 1024 decisions.
   */
  readonly evictions: number;
  readonly trackedKeys: TrackedKeyStats;
  /**
   * Bytes of WebAssembly memory now. It grows (never per message) as topics get state: a page
   * of partition loads per topic slot, and the shared tables (tracked keys, sketch) doubling
   * with every 16, 32, 64, ... topics with state.
   */
  readonly memoryBytes: number;
  /** The most bytes memoryBytes can reach, from the options (maxTopics topics with state). */
  readonly memoryBoundBytes: number;
}

type Emitted = ['hot' | 'cooled', HotKey] | ['warning', CallbackError | TopicCapacityError];

/**
 * A topic the partitioner knows. One without state (slot -1) holds only its partition count and
 * its sticky run of null keys; beyond topicsKept(maxTopics) of them, the least recently used
 * quarter is forgotten at once (forgetWithoutState). A forgotten topic's next message makes it
 * new again: its null keys start a new sticky run, and it gets a new 'warning'; its keys go to
 * Kafka's partition either way, and topics with state are never forgotten this way.
 */
interface TopicState {
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

/**
 * What DynamicPartitioner.decide() decided for one message besides its partition, read once
 * per decision from the WebAssembly core's decision record (D_* in assembly/abi.ts). Each
 * partitioner has one, `partitioner.decision`, overwritten by each decide(): read its fields
 * before the next decide() (partition() and partitionBatch() leave it as it is).
 */
export interface Decision {
  /** The partition: what decide() returned. */
  readonly partition: number;
  /**
   * The order marker (docs/ordering.md): ORDER_NONE, or ORDER_ANCHOR / ORDER_MOVED (relocated
   * whole to one partition) / ORDER_SPREAD (split over several) / ORDER_RETURN for a message of
   * a key that is (or just was) hot. With spread: false, always ORDER_NONE.
   */
  readonly order: number;
  /**
   * The key's tracked-key entry, an index below trackedKeysBound that names the key while it is
   * tracked (a key that is or was just hot always is), or -1.
   */
  readonly entry: number;
  /** How many partitions the key is split over now: its width with ORDER_SPREAD, else 1. */
  readonly width: number;
  /**
   * Whether the key has a zero byte (a string key with U+0000, which node-rdkafka would cut):
   * 0 no, 1 yes, -1 not known (a key too long for the key region is not looked at).
   */
  readonly keyZero: number;
}

/** The writable Decision behind `partitioner.decision`: one object per partitioner, filled in place. */
class DecisionRecord implements Decision {
  partition = -1;
  order = ORDER_NONE;
  entry = -1;
  width = 1;
  keyZero = -1;
}

// Record strides in typed-array elements.
const EVENT_I32 = EVENT_SIZE >> 2;
const TOPIC_F64 = (1 << TOPIC_SHIFT) >> 3;
const TOPIC_I32 = (1 << TOPIC_SHIFT) >> 2;
const ENTRY_I32 = (1 << ENTRY_SHIFT) >> 2;
const ENTRY_F64 = (1 << ENTRY_SHIFT) >> 3;
// Admission to exact tracking happens at this fraction of the lowest hot line.
const ADMIT_OF_HOT = 0.5;

/** The configuration the WebAssembly core reads in configure(): `params` is its f64 parameter region. */
function writeParams(params: Float64Array, o: ResolvedOptions): void {
  const perMessage = (h: Horizon): number => ('messages' in h ? Math.pow(2, 1 / h.messages) : 1);
  const set = (at: number, value: number): void => {
    params[at >> 3] = value;
  };
  set(P_SKETCH_WIDTH, o.sketch.width);
  set(P_SKETCH_DEPTH, o.sketch.depth);
  set(P_ENTRIES, o.maxTrackedKeys);
  set(P_TOPICS, o.maxTopics);
  set(P_PARTITIONS, o.maxPartitions);
  set(P_GROWTH, perMessage(o.horizon));
  set(P_LOAD_GROWTH, perMessage(o.loadHorizon));
  set(P_HOT, o.hotThreshold);
  set(P_COOL, o.coolThreshold);
  set(P_ADMIT, ADMIT_OF_HOT * Math.min(o.hotThreshold, o.reliefThreshold || Infinity));
  set(P_MIN_HOT, o.minHotMessages);
  set(P_WARMUP, o.warmupMessages);
  set(P_SPREAD_FACTOR, o.spreadFactor);
  set(P_MAX_SPREAD, o.maxSpread);
  set(P_SPREAD, o.spread ? 1 : 0);
  set(P_STICKY_RUN, o.stickyRun);
  set(P_WIDEN_ABOVE, 1 + o.balanceTolerance);
  set(P_RELIEF, o.reliefThreshold);
  set(P_SAMPLING, o.sketch.sampling);
  set(P_HOT_RUN, o.hotRun);
  set(P_RELOCATE, o.relocate ? 1 : 0);
  set(P_ASK_ON_HOT, o.spreadable ? 1 : 0);
}

export declare interface DynamicPartitioner {
  on(event: 'hot', listener: (key: HotKey) => void): this;
  on(event: 'cooled', listener: (key: HotKey) => void): this;
  /** A CallbackError: options.spreadable threw (the key was kept on its own partition). */
  on(event: 'warning', listener: (err: CallbackError) => void): this;
  /**
   * A TopicCapacityError: a topic is partitioned without state (maxTopics topics busy); once per
   * topic, and again when a topic forgotten beyond max(1024, 16 x maxTopics) topics without state comes back.
   */
  on(event: 'warning', listener: (err: TopicCapacityError) => void): this;
  once(event: 'hot' | 'cooled', listener: (key: HotKey) => void): this;
  off(event: 'hot' | 'cooled', listener: (key: HotKey) => void): this;
}

export class DynamicPartitioner extends EventEmitter {
  readonly options: ResolvedOptions;
  /**
   * The most keys the table of tracked keys holds (its size for maxTopics topics with state):
   * a tracked-key entry (Decision.entry) is below it.
   */
  readonly trackedKeysBound: number;
  private readonly core: Core;
  private readonly code: number;
  private readonly topics = new Map<string, TopicState>();
  private readonly freeSlots: number[] = [];
  /** The topic holding each slot. */
  private readonly slotOwners: (TopicState | undefined)[];
  /** The most topics without state kept: beyond, the least recently used quarter is forgotten. */
  private readonly keptWithoutState: number;
  /** TopicCapacityErrors to emit as 'warning' at the end of the call. */
  private readonly warnings: TopicCapacityError[] = [];
  private evicted = 0;
  /** No eviction before this decision (EVICTION_EVERY apart). */
  private nextEviction = 0;
  private readonly idleDecisions: number;
  private readonly hot = new Map<number, { topic: TopicState; key: Key | null }>();
  private lastTopic: TopicState | undefined;
  private useClock = 0;
  private readonly record = new DecisionRecord();
  // Indexes into the core's typed arrays (i32 or f64, as the field is) of the cells, the
  // event log and the fields of the first topic and entry records (layouts: assembly/abi.ts).
  private readonly eventCell: number;
  private readonly decisionAt: number;
  private readonly topicTotal: number;
  private readonly topicLoadTotal: number;
  private readonly topicMessages: number;
  private readonly topicWeight: number;
  private readonly topicPage: number;
  // The entries and the event log move when the shared tables grow (entryPointers).
  private events = 0;
  private entryTopic = 0;
  private entryCount = 0;
  private entryWidth = 0;
  private entryChain = 0;
  private entryState = 0;
  private entrySize = 0;
  private readonly timer: NodeJS.Timeout | undefined;
  /** Per topic slot: its entries held (hold()); such a slot is not given to another topic. */
  private readonly heldInSlot: Int32Array;

  constructor(options: DynamicPartitionerOptions = {}) {
    super();
    const o = resolveOptions(options);
    this.options = o;
    this.code = partitionerCode(o.partitioner, 'options.partitioner');
    this.core = instantiate((x) => {
      writeParams(new Float64Array(x.memory.buffer, x.paramsPtr(), PARAMS_SIZE >> 3), o);
      x.configure();
    });
    const x = this.core.exports;
    const cells = x.cellsPtr();
    this.eventCell = (cells + CELL_EVENT_COUNT) >> 2;
    this.decisionAt = x.decisionPtr() >> 2;
    const topics = x.topicRecordsPtr();
    this.topicTotal = (topics + T_TOTAL) >> 3;
    this.topicLoadTotal = (topics + T_LOAD_TOTAL) >> 3;
    this.topicMessages = (topics + T_MESSAGES) >> 3;
    this.topicWeight = (topics + T_WEIGHT) >> 3;
    this.topicPage = (topics + T_PAGE) >> 2;
    this.entryPointers();
    this.trackedKeysBound = x.trackedKeysBound();
    for (let slot = o.maxTopics - 1; slot >= 0; slot--) this.freeSlots.push(slot);
    this.slotOwners = new Array(o.maxTopics).fill(undefined);
    this.heldInSlot = new Int32Array(o.maxTopics);
    this.idleDecisions = Math.max(IDLE_DECISIONS, 16 * o.maxTopics);
    this.keptWithoutState = topicsKept(o.maxTopics);
    if ('ms' in o.horizon || 'ms' in o.loadHorizon) this.timer = this.startClock(o.horizon, o.loadHorizon);
  }

  /**
   * The Decision that decide() fills: one object, reused for every message (no allocation
   * per message).
   */
  get decision(): Decision {
    return this.record;
  }

  /** The partition for one message of `key` to `topic`, which has `numPartitions` partitions. */
  partition(topic: string, key: Key | null | undefined, numPartitions: number): number {
    const p = this.place(topic, key, numPartitions);
    if (this.core.i32[this.eventCell] !== 0) this.drainEvents(key, undefined, 0);
    if (this.warnings.length !== 0) this.flushWarnings();
    return p;
  }

  /**
   * partition(), and what was decided besides the partition in `partitioner.decision` (its
   * order marker, tracked-key entry, width, zero byte): the producers' way to one message's
   * decision. The record is read before any 'hot' / 'cooled' listener runs.
   */
  decide(topic: string, key: Key | null | undefined, numPartitions: number): number {
    const p = this.place(topic, key, numPartitions);
    const i32 = this.core.i32;
    const at = this.decisionAt;
    const d = this.record;
    d.partition = i32[at + (D_PARTITION >> 2)];
    d.order = i32[at + (D_ORDER >> 2)];
    d.entry = i32[at + (D_ENTRY >> 2)];
    d.width = i32[at + (D_WIDTH >> 2)];
    d.keyZero = i32[at + (D_ZERO >> 2)];
    if (i32[this.eventCell] !== 0) this.drainEvents(key, undefined, 0);
    if (this.warnings.length !== 0) this.flushWarnings();
    return p;
  }

  /** partition() for many messages of one topic, in one WebAssembly call per packed batch. */
  partitionBatch(topic: string, keys: ReadonlyArray<Key | null | undefined>, numPartitions: number): Int32Array {
    if (!Array.isArray(keys)) throw new InvalidArgTypeError('keys', 'an array of keys', keys);
    // Every key is checked before any is counted, so a bad one changes nothing.
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (typeof k !== 'string' && !(k instanceof Uint8Array) && k !== null && k !== undefined) {
        throw notAKey(i, k);
      }
    }
    const t = this.topic(topic, numPartitions);
    if (t.partitions !== numPartitions) this.resize(t, numPartitions);
    if (t.slot < 0 && !this.claimSlot(t)) {
      // Without state: each key on its own (Kafka's partition), as partition() does.
      const statically = new Int32Array(keys.length);
      for (let i = 0; i < keys.length; i++) statically[i] = this.place(topic, keys[i], numPartitions);
      this.flushWarnings();
      return statically;
    }
    t.lastUsed = ++this.useClock;
    const out = new Int32Array(keys.length);
    const x = this.core.exports;
    // Events of a packed batch whose log had to be drained before its end, emitted once the
    // batch's results are out (a listener may call partition(), which reuses the key region).
    const early: Emitted[] = [];
    packBatches(this.core, keys, out,
      (count, start) => {
        for (let done = x.decideBatch(t.slot, this.code, 0, count, numPartitions); done < count;
          done = x.decideBatch(t.slot, this.code, done, count, numPartitions)) {
          this.collectEvents(undefined, keys, start, early);
        }
      },
      (i) => this.partition(topic, keys[i], numPartitions),
      (start) => {
        if (early.length !== 0 || this.core.i32[this.eventCell] !== 0) this.drainEvents(undefined, keys, start, early.splice(0));
      });
    return out;
  }

  /**
   * Messages of tracked entry `entry`'s key wait in the producer (`held`) or no longer: while
   * they do, the entry is never freed (the producer finds them by entry: a key given another
   * entry, or none, would overtake them), and its topic keeps its slot.
   * @internal
   */
  hold(entry: number, held: boolean): void {
    const slot = this.core.i32[this.entryTopic + entry * ENTRY_I32];
    this.heldInSlot[slot] += held ? 1 : -1;
    this.core.exports.hold(entry, held ? 1 : 0);
  }

  /**
   * Recent messages per partition of `topic` on the load clock (for turning queue depths and
   * lags into penalties: DynamicProducer, LagMonitor).
   * @internal
   */
  recentMessagesPerPartition(topic: string): number {
    const t = this.topics.get(topic);
    if (!t || t.slot < 0) return 0;
    return this.core.f64[this.topicLoadTotal + t.slot * TOPIC_F64] / this.core.exports.currentLoadWeight(t.slot) / t.partitions;
  }

  /**
   * The estimated share (0..1) of `key` in `topic`'s recent messages, without counting a
   * message: exact for tracked keys, else the sketch's estimate, which never falls below
   * the true share. 0 for a topic not seen.
   */
  share(topic: string, key: Key | null | undefined): number {
    const core = this.core;
    const length = writeKey(core, core.keys, core.keyCapacity, key, 'key');
    const t = this.topics.get(topic);
    if (t === undefined || t.slot < 0) return 0;
    if (length === DOES_NOT_FIT) throw new OutOfRangeError('key', `at most ${core.keyCapacity} bytes`, key);
    // Keys the base partitioner does not decide by (null for the *_random ones) are not counted.
    if (core.exports.partition(this.code, length, 1) < 0) return 0;
    const total = core.exports.recentMessages(t.slot);
    return total > 0 ? core.exports.estimate(t.slot, length) / total : 0;
  }

  /** The keys of `topic` that are hot now, hottest first. */
  hotKeys(topic: string): HotKey[] {
    const out: HotKey[] = [];
    for (const [entry, h] of this.hot) if (h.topic.name === topic) out.push(this.describeEntry(entry, h.topic, h.key));
    return out.sort((a, b) => b.share - a.share);
  }

  /**
   * Makes `partition` of `topic` look fuller to hot keys (and to null-key runs) by `value`
   * fair shares of the topic's recent traffic: 0 = no penalty, 1 = as if it had already received
   * one more partition's worth. Cold keys never move. Feed it broker queue depth or
   * consumer lag, normalised.
   */
  setPartitionPenalty(topic: string, partition: number, value: number): void {
    if (typeof topic !== 'string') throw new InvalidArgTypeError('topic', 'a string', topic);
    if (typeof partition !== 'number') throw new InvalidArgTypeError('partition', 'an integer >= 0', partition);
    if (typeof value !== 'number') throw new InvalidArgTypeError('value', 'a finite number >= 0', value);
    if (!(value >= 0) || value === Infinity) throw new OutOfRangeError('value', 'a finite number >= 0', value);
    const t = this.topics.get(topic);
    if (!Number.isInteger(partition) || partition < 0 || partition >= (t ? t.partitions : this.options.maxPartitions)) {
      throw new OutOfRangeError('partition', `an integer in [0, ${(t ? t.partitions : this.options.maxPartitions) - 1}]`, partition);
    }
    const state = t ?? this.topic(topic, partition + 1);
    this.flushWarnings();
    if (state.slot < 0) return; // without state: no spreading, nothing a penalty would move
    this.core.f64[this.pageOf(state.slot) + this.options.maxPartitions + partition] = value;
  }

  /** Per-topic load and imbalance over the horizon. */
  stats(): PartitionerStats {
    const topics: Record<string, TopicStats> = {};
    for (const t of this.slotOwners) {
      if (t === undefined) continue;
      const weight = this.core.f64[this.topicWeight + t.slot * TOPIC_F64];
      const total = this.core.f64[this.topicLoadTotal + t.slot * TOPIC_F64];
      const at = this.pageOf(t.slot);
      const load = Array.from(this.core.f64.subarray(at, at + t.partitions), (l) => (total > 0 ? l / total : 0));
      const max = Math.max(...load);
      let hotKeys = 0;
      for (const h of this.hot.values()) if (h.topic === t) hotKeys++;
      topics[t.name] = {
        partitions: t.partitions,
        recentMessages: this.core.f64[this.topicTotal + t.slot * TOPIC_F64] / weight,
        load,
        imbalance: total > 0 ? max * t.partitions : 1,
        hotKeys,
        penalty: Array.from(this.core.f64.subarray(at + this.options.maxPartitions, at + this.options.maxPartitions + t.partitions)),
        messages: this.core.f64[this.topicMessages + t.slot * TOPIC_F64],
        spreadMessages: this.core.f64[this.topicMessages + t.slot * TOPIC_F64 + ((T_SPREAD_MESSAGES - T_MESSAGES) >> 3)],
        movedMessages: this.core.f64[this.topicMessages + t.slot * TOPIC_F64 + ((T_MOVED_MESSAGES - T_MESSAGES) >> 3)],
      };
    }
    const x = this.core.exports;
    const trackedKeys = { tracked: x.trackedKeys(), capacity: x.trackedKeysCapacity(), hot: this.hot.size, refused: x.refusedAdmissions() };
    return {
      topics, topicsWithoutState: this.withoutState(), evictions: this.evicted, trackedKeys,
      memoryBytes: x.memory.buffer.byteLength, memoryBoundBytes: x.memoryBound(),
    };
  }

  /** Stops the clock of a time horizon; the partitioner stays usable (counts stop fading). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The decision for one message, its by-products left in the core's decision record; events not drained. */
  private place(topic: string, key: Key | null | undefined, numPartitions: number): number {
    const core = this.core;
    // The key first, written once: a bad one throws before any state changes.
    const length = writeKey(core, core.keys, core.keyCapacity, key, 'key');
    let t = this.lastTopic;
    if (t === undefined || t.name !== topic) t = this.topic(topic, numPartitions);
    if (t.partitions !== numPartitions) this.resize(t, numPartitions);
    t.lastUsed = ++this.useClock;
    if (t.slot < 0 && !this.claimSlot(t)) return this.placeStatically(t, key, length, numPartitions);
    if (length !== DOES_NOT_FIT) return core.exports.decide(t.slot, this.code, length, numPartitions);
    const p = partitionOfLongKey(core, this.code, key as Key, numPartitions);
    core.exports.account(t.slot, p);
    return p;
  }

  private topic(name: string, numPartitions: number): TopicState {
    let t = this.topics.get(name);
    if (t === undefined) {
      if (typeof name !== 'string') throw new InvalidArgTypeError('topic', 'a string', name);
      this.checkCount(numPartitions);
      // Only when a topic is new, never per message: a quarter at once, one sort per quarter.
      if (this.withoutState() >= this.keptWithoutState) this.forgetWithoutState();
      t = { name, slot: -1, partitions: numPartitions, lastUsed: 0, sticky: 0, stickyLeft: 0 };
      this.topics.set(name, t);
      // Emitted once the call's decision is made (a listener may call partition() again).
      if (!this.claimSlot(t)) this.warnings.push(new TopicCapacityError(name, this.options.maxTopics));
    }
    this.lastTopic = t;
    return t;
  }

  /** Topics without state now: every topic known holds a slot or is one of them. */
  private withoutState(): number {
    return this.topics.size - (this.options.maxTopics - this.freeSlots.length);
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
    const last = this.lastTopic;
    if (last !== undefined && this.topics.get(last.name) !== last) this.lastTopic = undefined;
  }

  /**
   * Gives topic `t` (without state) a slot: a free one, else the least recently used topic's
   * if that one has been idle for idleDecisions, holds no entry the producer holds messages
   * of (hold()), and no topic was given up in the last EVICTION_EVERY decisions (so never an
   * eviction per message). False: still without state.
   */
  private claimSlot(t: TopicState): boolean {
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      if (this.useClock < this.nextEviction) return false;
      this.nextEviction = this.useClock + EVICTION_EVERY;
      let victim: TopicState | undefined;
      for (const o of this.slotOwners) if (o !== undefined && (!victim || o.lastUsed < victim.lastUsed)) victim = o;
      if (!victim || this.useClock - victim.lastUsed < this.idleDecisions || this.heldInSlot[victim.slot] > 0) return false;
      slot = victim.slot;
      this.topics.delete(victim.name);
      if (this.lastTopic === victim) this.lastTopic = undefined;
      this.slotOwners[slot] = undefined;
      this.evicted++;
      this.core.exports.topicReset(slot, 1);
      this.drainEvents(undefined, undefined, 0);
    }
    t.slot = slot;
    this.slotOwners[slot] = t;
    this.core.exports.topicReset(slot, t.partitions);
    const grew = this.core.exports.setTopicsWithState(this.options.maxTopics - this.freeSlots.length);
    refreshViews(this.core); // a new slot's page, or the shared tables, may have grown the memory
    if (grew) this.entryPointers();
    this.drainEvents(undefined, undefined, 0);
    return true;
  }

  /** Reads where the entries and the event log are (again: the shared tables grew). */
  private entryPointers(): void {
    const x = this.core.exports;
    this.events = x.eventsPtr() >> 2;
    const entries = x.entriesPtr();
    this.entryTopic = (entries + E_TOPIC) >> 2;
    this.entryCount = (entries + E_COUNT) >> 3;
    this.entryWidth = (entries + E_WIDTH) >> 2;
    this.entryChain = (entries + E_RETURN) >> 2;
    this.entryState = (entries + E_STATE) >> 2;
    this.entrySize = (entries + E_SIZE) >> 2;
  }

  /** The f64 index of slot `slot`'s page: its loads, then maxPartitions penalties (assembly/topics.ts). */
  private pageOf(slot: number): number {
    return this.core.i32[this.topicPage + slot * TOPIC_I32] >> 3;
  }

  private flushWarnings(): void {
    for (const w of this.warnings.splice(0)) this.emit('warning', w);
  }

  /**
   * A message of a topic without state: Kafka's partition for its key, a null key of a random
   * partitioner to a sticky run (stickyRun messages on a partition, then the next one).
   */
  private placeStatically(t: TopicState, key: Key | null | undefined, length: number, n: number): number {
    const core = this.core;
    let p = length === DOES_NOT_FIT ? partitionOfLongKey(core, this.code, key as Key, n) : core.exports.partition(this.code, length, n);
    if (p < 0) {
      if (t.stickyLeft <= 0 || t.sticky >= n) {
        t.sticky = (t.sticky + 1) % n;
        t.stickyLeft = this.options.stickyRun;
      }
      t.stickyLeft--;
      p = t.sticky;
    }
    const at = this.decisionAt;
    const i32 = core.i32;
    i32[at + (D_PARTITION >> 2)] = p;
    i32[at + (D_ORDER >> 2)] = ORDER_NONE;
    i32[at + (D_ENTRY >> 2)] = -1;
    i32[at + (D_WIDTH >> 2)] = 1;
    i32[at + (D_ZERO >> 2)] = -1; // the key was not looked at
    return p;
  }

  private resize(t: TopicState, numPartitions: number): void {
    this.checkCount(numPartitions);
    t.partitions = numPartitions;
    // A topic without state has no record in the core (its sticky run starts over when it no longer fits: placeStatically).
    if (t.slot >= 0) this.core.exports.topicResize(t.slot, numPartitions);
  }

  private checkCount(n: number): void {
    checkPartitionCount(n);
    if (n > this.options.maxPartitions) {
      throw new OutOfRangeError('numPartitions', `at most options.maxPartitions (${this.options.maxPartitions})`, n);
    }
  }

  /**
   * Turns the WebAssembly event log into 'hot' / 'cooled' events (after `before`, events
   * collected earlier) and the table of hot keys. A 'hot' event's key is `single`, or
   * `batch[offset + its index in the batch call]`.
   */
  private drainEvents(single: unknown, batch: ReadonlyArray<unknown> | undefined, offset: number, before: Emitted[] = []): void {
    this.collectEvents(single, batch, offset, before);
    for (const [event, key] of before) this.emit(event, key);
  }

  /** Empties the event log into `into` and updates the table of hot keys. */
  private collectEvents(single: unknown, batch: ReadonlyArray<unknown> | undefined, offset: number, into: Emitted[]): void {
    const i32 = this.core.i32;
    const count = i32[this.eventCell];
    i32[this.eventCell] = 0;
    for (let i = 0; i < count; i++) {
      const at = this.events + i * EVENT_I32;
      const kind = i32[at + (EVENT_KIND >> 2)];
      const entry = i32[at + (EVENT_ENTRY >> 2)];
      if (kind === EVENT_HOT) {
        const given = batch ? batch[offset + i32[at + (EVENT_BATCH_INDEX >> 2)]] : single;
        const key = given == null ? null : typeof given === 'string' ? given : Buffer.from(given as Uint8Array);
        const topic = this.topicOfSlot(i32[this.entryTopic + entry * ENTRY_I32]);
        if (this.options.spreadable && key !== null && i32[this.entryChain + entry * ENTRY_I32] !== CHAIN_PINNED) this.ask(entry, key, topic, into);
        this.hot.set(entry, { topic, key });
        into.push(['hot', this.describeEntry(entry, topic, key)]);
      } else if (kind === EVENT_COOLED) {
        const h = this.hot.get(entry);
        if (!h) continue;
        this.hot.delete(entry);
        into.push(['cooled', { ...this.describeEntry(entry, h.topic, h.key), partitions: 1 }]);
      }
    }
  }

  /** Asks options.spreadable about a key just hot; pins it to its own partition unless it says true. */
  private ask(entry: number, key: Key, topic: TopicState, into: Emitted[]): void {
    let spreadable = false;
    try {
      spreadable = this.options.spreadable!(key as string | Buffer, topic.name) === true;
    } catch (err) {
      into.push(['warning', new CallbackError('options.spreadable', err)]);
    }
    if (!spreadable) this.core.exports.pin(entry);
  }

  private topicOfSlot(slot: number): TopicState {
    const t = this.slotOwners[slot];
    if (t !== undefined) return t;
    throw new InternalError(`no topic in slot ${slot}`);
  }

  private describeEntry(entry: number, topic: TopicState, key: Key | null): HotKey {
    const total = this.core.f64[this.topicTotal + topic.slot * TOPIC_F64];
    const at = entry * ENTRY_I32;
    const sized = this.core.i32[this.entrySize + at] === topic.partitions;
    return {
      topic: topic.name,
      key,
      share: total > 0 ? this.core.f64[this.entryCount + entry * ENTRY_F64] / total : 0,
      partitions: sized && this.options.spread ? this.core.i32[this.entryWidth + at] : 1,
      reason: this.core.i32[this.entryState + at] === STATE_RELIEF ? 'relief' : 'share',
      spreadable: this.core.i32[this.entryChain + at] !== CHAIN_PINNED,
    };
  }

  /** The clock of time horizons: every few milliseconds, the weights grow by the time passed. */
  private startClock(keys: Horizon, loads: Horizon): NodeJS.Timeout {
    const halfLife = (h: Horizon): number => ('ms' in h ? h.ms : Infinity);
    const keyHalfLife = halfLife(keys);
    const loadHalfLife = halfLife(loads);
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      this.core.exports.tick(Math.pow(2, (now - last) / keyHalfLife), Math.pow(2, (now - last) / loadHalfLife));
      last = now;
    }, Math.max(1, Math.min(1000, Math.min(keyHalfLife, loadHalfLife) / 32)));
    timer.unref();
    return timer;
  }
}

/**
 * The partitions a hot `key` may use among `numPartitions` when allowed `width` of them, in
 * order: its normal partition (partitionForKey) first. The same for every producer, so a
 * consumer can tell where a spread key's messages may be. Empty for a key the partitioner
 * does not decide by (see partitionForKey).
 */
export function allowedPartitions(
  key: Key | null | undefined,
  numPartitions: number,
  width: number,
  partitioner: PartitionerName = 'murmur2_random',
): number[] {
  checkPartitionCount(numPartitions);
  if (typeof width !== 'number') throw new InvalidArgTypeError('width', 'an integer >= 1', width);
  if (!Number.isInteger(width) || width < 1) throw new OutOfRangeError('width', 'an integer >= 1', width);
  const code = partitionerCode(partitioner);
  const core = shared;
  const length = writeKey(core, core.keys, core.keyCapacity, key, 'key');
  if (length === DOES_NOT_FIT) throw new OutOfRangeError('key', `at most ${core.keyCapacity} bytes`, key);
  const base = core.exports.partition(code, length, numPartitions);
  if (base < 0) return [];
  const step = core.exports.spreadStep(length === NULL_LENGTH ? 0 : length, numPartitions);
  const out = new Array<number>(Math.min(width, numPartitions));
  for (let i = 0, p = base; i < out.length; i++) {
    out[i] = p;
    p += step;
    if (p >= numPartitions) p -= numPartitions;
  }
  return out;
}
