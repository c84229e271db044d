// The hot keys: the core logs each key that turns hot or cools (the event log: assembly/events.ts);
// here the log becomes 'hot' / 'cooled' events and the table of hot keys hotKeys() reads,
// with the key as the application gave it (the core holds only its hash), and a key just hot
// is put to options.spreadable.

import type { Core } from '../core/wasm';
import type { Key } from '../core/key';
import type { ResolvedOptions } from '../core/options';
import { CallbackError, TopicCapacityError } from '../core/errors';
import { STATE_RELIEF, EVENT_HOT, EVENT_COOLED, EVENT_KIND, EVENT_ENTRY, EVENT_BATCH_INDEX, CHAIN_PINNED } from '../core/abi';
import { EVENT_I32, ENTRY_I32, ENTRY_F64, Regions } from './regions';
import type { TopicSlots, TopicState } from './topic-slots';

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

/** An event to emit, in the order the core logged it. */
export type Emitted = ['hot' | 'cooled', HotKey] | ['warning', CallbackError | TopicCapacityError];

export class HotKeyTable {
  /** The hot keys by tracked entry. */
  private readonly hot = new Map<number, { topic: TopicState; key: Key | null }>();

  constructor(
    private readonly core: Core,
    private readonly regions: Regions,
    private readonly slots: TopicSlots,
    private readonly options: ResolvedOptions,
  ) {}

  /** Hot keys now, all topics. */
  get size(): number {
    return this.hot.size;
  }

  /** Hot keys of topic `t` now. */
  countOf(t: TopicState): number {
    let count = 0;
    for (const h of this.hot.values()) if (h.topic === t) count++;
    return count;
  }

  /** The keys of `topic` that are hot now, hottest first. */
  list(topic: string): HotKey[] {
    const out: HotKey[] = [];
    for (const [entry, h] of this.hot) if (h.topic.name === topic) out.push(this.describe(entry, h.topic, h.key));
    return out.sort((a, b) => b.share - a.share);
  }

  /**
   * Empties the event log into `into` and updates the table of hot keys. A 'hot' event's key
   * is `single`, or `batch[offset + its index in the batch call]`.
   */
  collect(single: unknown, batch: ReadonlyArray<unknown> | undefined, offset: number, into: Emitted[]): void {
    const i32 = this.core.i32;
    const r = this.regions;
    const count = i32[r.eventCell];
    i32[r.eventCell] = 0;
    for (let i = 0; i < count; i++) {
      const at = r.events + i * EVENT_I32;
      const kind = i32[at + (EVENT_KIND >> 2)];
      const entry = i32[at + (EVENT_ENTRY >> 2)];
      if (kind === EVENT_HOT) {
        const given = batch ? batch[offset + i32[at + (EVENT_BATCH_INDEX >> 2)]] : single;
        const key = given == null ? null : typeof given === 'string' ? given : Buffer.from(given as Uint8Array);
        const topic = this.slots.ownerOf(r.slotOfEntry(entry));
        if (this.options.spreadable && key !== null && i32[r.entryChain + entry * ENTRY_I32] !== CHAIN_PINNED) this.ask(entry, key, topic, into);
        this.hot.set(entry, { topic, key });
        into.push(['hot', this.describe(entry, topic, key)]);
      } else if (kind === EVENT_COOLED) {
        const h = this.hot.get(entry);
        if (!h) continue;
        this.hot.delete(entry);
        into.push(['cooled', { ...this.describe(entry, h.topic, h.key), partitions: 1 }]);
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

  private describe(entry: number, topic: TopicState, key: Key | null): HotKey {
    const { i32, f64 } = this.core;
    const r = this.regions;
    const total = r.topicTotalOf(topic.slot);
    const at = entry * ENTRY_I32;
    const sized = i32[r.entrySize + at] === topic.partitions;
    return {
      topic: topic.name,
      key,
      share: total > 0 ? f64[r.entryCount + entry * ENTRY_F64] / total : 0,
      partitions: sized && this.options.spread ? i32[r.entryWidth + at] : 1,
      reason: i32[r.entryState + at] === STATE_RELIEF ? 'relief' : 'share',
      spreadable: i32[r.entryChain + at] !== CHAIN_PINNED,
    };
  }
}
