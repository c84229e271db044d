// What stats() reports: per topic with state, its loads, imbalance, penalties and message
// counters, read from its record and page in the core; the table of tracked keys; memory.

import type { Core } from '../core/wasm';
import type { ResolvedOptions } from '../core/options';
import { T_MESSAGES, T_SPREAD_MESSAGES, T_MOVED_MESSAGES } from '../core/abi';
import { TOPIC_F64, Regions } from './regions';
import type { TopicSlots, TopicState } from './topic-slots';
import type { HotKeyTable } from './hot-keys';

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

/** One topic with state's figures. */
function topicStats(core: Core, r: Regions, options: ResolvedOptions, t: TopicState, hotKeys: number): TopicStats {
  const f64 = core.f64;
  const record = t.slot * TOPIC_F64;
  const weight = f64[r.topicWeight + record];
  const total = r.topicLoadTotalOf(t.slot);
  const at = r.pageOf(t.slot);
  const load = Array.from(f64.subarray(at, at + t.partitions), (l) => (total > 0 ? l / total : 0));
  const max = Math.max(...load);
  const penalties = at + options.maxPartitions;
  return {
    partitions: t.partitions,
    recentMessages: r.topicTotalOf(t.slot) / weight,
    load,
    imbalance: total > 0 ? max * t.partitions : 1,
    hotKeys,
    penalty: Array.from(f64.subarray(penalties, penalties + t.partitions)),
    messages: f64[r.topicMessages + record],
    spreadMessages: f64[r.topicMessages + record + ((T_SPREAD_MESSAGES - T_MESSAGES) >> 3)],
    movedMessages: f64[r.topicMessages + record + ((T_MOVED_MESSAGES - T_MESSAGES) >> 3)],
  };
}

/** The partitioner's figures now. */
export function readStats(core: Core, r: Regions, options: ResolvedOptions, slots: TopicSlots, hot: HotKeyTable): PartitionerStats {
  const topics: Record<string, TopicStats> = {};
  for (const t of slots.owners) if (t !== undefined) topics[t.name] = topicStats(core, r, options, t, hot.countOf(t));
  const x = core.exports;
  const trackedKeys = { tracked: x.trackedKeys(), capacity: x.trackedKeysCapacity(), hot: hot.size, refused: x.refusedAdmissions() };
  return {
    topics, topicsWithoutState: slots.withoutState(), evictions: slots.evictions, trackedKeys,
    memoryBytes: x.memory.buffer.byteLength, memoryBoundBytes: x.memoryBound(),
  };
}

/**
 * Recent messages per partition of topic `t` on the load clock (for turning queue depths and
 * lags into penalties: DynamicProducer, LagMonitor); 0 for a topic without state.
 */
export function loadPerPartition(core: Core, r: Regions, t: TopicState | undefined): number {
  if (!t || t.slot < 0) return 0;
  return r.topicLoadTotalOf(t.slot) / core.exports.currentLoadWeight(t.slot) / t.partitions;
}
