// DynamicPartitioner: Kafka's partition for every cold key; for each hot one, a partition
// with room for it whole, else the least loaded of a few allowed partitions. The decision is one WebAssembly call
// (assembly/decide.ts), whose by-products come back in one decision record (decide() and
// Decision); this facade keeps the partitioner's methods and events, and composes its parts:
// the parameters (params.ts), where it reads the core (regions.ts), the topics and their slots
// (topic-slots.ts), the hot keys and their events (hot-keys.ts), the decision record
// (decision.ts), stats (stats.ts) and the clock of time horizons (clock.ts).

import { EventEmitter } from 'node:events';
import { instantiate, Core } from '../core/wasm';
import { writeKey, notAKey, packBatches, Key, DOES_NOT_FIT } from '../core/key';
import { partitionerCode, partitionOfLongKey } from '../core/hash';
import { resolveOptions, DynamicPartitionerOptions, ResolvedOptions } from '../core/options';
import { CallbackError, InvalidArgTypeError, OutOfRangeError, TopicCapacityError } from '../core/errors';
import { PARAMS_SIZE } from '../core/abi';
import { writeParams } from './params';
import { Regions } from './regions';
import { TopicSlots, TopicState } from './topic-slots';
import { HotKeyTable, HotKey, Emitted } from './hot-keys';
import { Decision, DecisionRecord, writeStaticDecision } from './decision';
import { readStats, loadPerPartition, PartitionerStats } from './stats';
import { startClock, startRunClock } from './clock';

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
  /**
   * The options resolved (defaults filled in), for the producers that share them.
   * @internal
   */
  readonly options: ResolvedOptions;
  /**
   * The most keys the table of tracked keys holds (its size for maxTopics topics with state):
   * a tracked-key entry (Decision.entry) is below it.
   */
  readonly trackedKeysBound: number;
  private readonly core: Core;
  private readonly code: number;
  private readonly regions: Regions;
  private readonly slots: TopicSlots;
  private readonly hot: HotKeyTable;
  /** TopicCapacityErrors to emit as 'warning' at the end of the call. */
  private readonly warnings: TopicCapacityError[] = [];
  private readonly record = new DecisionRecord();
  // Fixed indexes, read on every message (regions.ts).
  private readonly eventCell: number;
  private readonly decisionAt: number;
  private readonly timer: NodeJS.Timeout | undefined;
  /** A true private field: a Timeout is circular, and the partitioner (within a producer) must stay serialisable. */
  readonly #runTimer: NodeJS.Timeout | undefined;

  constructor(options: DynamicPartitionerOptions = {}) {
    super();
    const o = resolveOptions(options);
    this.options = o;
    this.code = partitionerCode(o.partitioner, 'options.partitioner');
    this.core = instantiate((x) => {
      writeParams(new Float64Array(x.memory.buffer, x.paramsPtr(), PARAMS_SIZE >> 3), o);
      x.configure();
    });
    this.regions = new Regions(this.core);
    this.eventCell = this.regions.eventCell;
    this.decisionAt = this.regions.decisionAt;
    this.trackedKeysBound = this.core.exports.trackedKeysBound();
    this.slots = new TopicSlots(this.core, this.regions, o, this.warnings, () => this.drainEvents(undefined, undefined, 0));
    this.hot = new HotKeyTable(this.core, this.regions, this.slots, o);
    if ('ms' in o.horizon || 'ms' in o.loadHorizon) this.timer = startClock(this.core, o.horizon, o.loadHorizon);
    if (o.splitRunMs > 0) this.#runTimer = startRunClock(this.core, o.splitRunMs);
  }

  /**
   * @internal A producer's stream is live from the start: a burst sent before the run clock's
   * first tick (a synchronous loop) ends a split key's runs by their bound (a quarter of a
   * partition's recent fair share), not every hotRun messages as a stream with no time does (a
   * simulation). Long runs are fewer hops of the key's chain for a consumer group catching up.
   */
  live(): void {
    if (this.options.splitRunMs > 0) this.core.exports.runTick();
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
    const p = this.partitionOf(topic, key, numPartitions);
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
    const p = this.partitionOf(topic, key, numPartitions);
    const i32 = this.core.i32;
    const record = this.record;
    record.read(i32, this.decisionAt);
    if (i32[this.eventCell] === 0 && this.warnings.length === 0) return p;
    // A listener may decide again (a producer's send() from a 'hot' listener): this call's
    // record is what its caller reads after.
    const mine = Object.assign(new DecisionRecord(), record);
    if (i32[this.eventCell] !== 0) this.drainEvents(key, undefined, 0);
    if (this.warnings.length !== 0) this.flushWarnings();
    Object.assign(record, mine);
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
    const slots = this.slots;
    const t = slots.get(topic, numPartitions);
    if (t.partitions !== numPartitions) slots.resize(t, numPartitions);
    if (t.slot < 0 && !slots.claim(t)) {
      // Without state: each key on its own (Kafka's partition), as partition() does.
      const statically = new Int32Array(keys.length);
      for (let i = 0; i < keys.length; i++) statically[i] = this.partitionOf(topic, keys[i], numPartitions);
      this.flushWarnings();
      return statically;
    }
    t.lastUsed = ++slots.clock;
    const out = new Int32Array(keys.length);
    const x = this.core.exports;
    // Events of a packed batch whose log had to be drained before its end, emitted once the
    // batch's results are out (a listener may call partition(), which reuses the key region).
    const early: Emitted[] = [];
    packBatches(this.core, keys, out,
      (count, start) => {
        for (let done = x.decideBatch(t.slot, this.code, 0, count, numPartitions); done < count;
          done = x.decideBatch(t.slot, this.code, done, count, numPartitions)) {
          this.hot.collect(undefined, keys, start, early);
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
    this.slots.hold(entry, held);
    this.core.exports.hold(entry, held ? 1 : 0);
  }

  /**
   * Recent messages per partition of `topic` on the load clock (for turning queue depths and
   * lags into penalties: DynamicProducer, LagMonitor).
   * @internal
   */
  recentMessagesPerPartition(topic: string): number {
    return loadPerPartition(this.core, this.regions, this.slots.find(topic));
  }

  /**
   * The estimated share (0..1) of `key` in `topic`'s recent messages, without counting a
   * message: exact for tracked keys, else the sketch's estimate, which never falls below
   * the true share. 0 for a topic not seen.
   */
  share(topic: string, key: Key | null | undefined): number {
    const core = this.core;
    const length = writeKey(core, core.keys, core.keyCapacity, key, 'key');
    const t = this.slots.find(topic);
    if (t === undefined || t.slot < 0) return 0;
    if (length === DOES_NOT_FIT) throw new OutOfRangeError('key', `at most ${core.keyCapacity} bytes`, key);
    // Keys the base partitioner does not decide by (null for the *_random ones) are not counted.
    if (core.exports.partition(this.code, length, 1) < 0) return 0;
    const total = core.exports.recentMessages(t.slot);
    return total > 0 ? core.exports.estimate(t.slot, length) / total : 0;
  }

  /** The keys of `topic` that are hot now, hottest first. */
  hotKeys(topic: string): HotKey[] {
    return this.hot.list(topic);
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
    const t = this.slots.find(topic);
    if (!Number.isInteger(partition) || partition < 0 || partition >= (t ? t.partitions : this.options.maxPartitions)) {
      throw new OutOfRangeError('partition', `an integer in [0, ${(t ? t.partitions : this.options.maxPartitions) - 1}]`, partition);
    }
    const state = t ?? this.slots.get(topic, partition + 1);
    this.flushWarnings();
    if (state.slot < 0) return; // without state: no spreading, nothing a penalty would move
    this.core.f64[this.regions.pageOf(state.slot) + this.options.maxPartitions + partition] = value;
  }

  /** Per-topic load and imbalance over the horizon. */
  stats(): PartitionerStats {
    return readStats(this.core, this.regions, this.options, this.slots, this.hot);
  }

  /** Stops the clocks (a time horizon's, split keys' runs); the partitioner stays usable (counts stop fading, runs end by count). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.#runTimer) clearInterval(this.#runTimer);
  }

  /** The decision for one message, its by-products left in the core's decision record; events not drained. */
  private partitionOf(topic: string, key: Key | null | undefined, numPartitions: number): number {
    const core = this.core;
    // The key first, written once: a bad one throws before any state changes.
    const length = writeKey(core, core.keys, core.keyCapacity, key, 'key');
    const slots = this.slots;
    let t = slots.last;
    if (t === undefined || t.name !== topic) t = slots.get(topic, numPartitions);
    if (t.partitions !== numPartitions) slots.resize(t, numPartitions);
    t.lastUsed = ++slots.clock;
    if (t.slot < 0 && !slots.claim(t)) return this.placeStatically(t, key, length, numPartitions);
    if (length !== DOES_NOT_FIT) return core.exports.decide(t.slot, this.code, length, numPartitions);
    const p = partitionOfLongKey(core, this.code, key as Key, numPartitions);
    core.exports.account(t.slot, p);
    return p;
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
    writeStaticDecision(core.i32, this.decisionAt, p);
    return p;
  }

  private flushWarnings(): void {
    for (const w of this.warnings.splice(0)) this.emit('warning', w);
  }

  /**
   * Turns the WebAssembly event log into 'hot' / 'cooled' events (after `before`, events
   * collected earlier) and the table of hot keys. A 'hot' event's key is `single`, or
   * `batch[offset + its index in the batch call]`.
   */
  private drainEvents(single: unknown, batch: ReadonlyArray<unknown> | undefined, offset: number, before: Emitted[] = []): void {
    this.hot.collect(single, batch, offset, before);
    for (const [event, key] of before) this.emit(event, key);
  }
}
