// The progress of consumer groups on the partitions this producer writes, as the LagMonitors
// attached to it read it (one group each): each partition's committed offset and how fast it
// advanced since the read before.
// It gates ordered handoffs (hold/key-handoffs.ts): a relocated key's move waits in the producer while
// the group's consumers of its old partition are predicted to need more than HOLD_FROM_MS to
// reach the key's last message there. Sent at once, the moved message would wait for them in
// the consumer of its new partition instead, which cannot commit past it meanwhile: lag that
// is not a backlog, which the LagMonitor then reads as a reason to move keys off that partition.
// ProgressGate is the producer's side: it sets the gate on the handoffs while progress is known.

import type { Gate, KeyHandoffs } from './key-handoffs';
import type { Waiting } from '../types';

/** A move waits in the producer while its old partition's consumers are predicted to need longer than this to reach its predecessor (ms). */
export const HOLD_FROM_MS = 250;
/** Progress older than this many read intervals gates nothing (the monitor stopped reading). */
const STALE_INTERVALS = 3;

/** What a LagMonitor read of one topic gives the producers attached to it. */
export interface TopicProgress {
  /** Per partition: the group's committed offset (NaN if none). */
  readonly committed: readonly number[];
  /** Per partition: how fast the committed offset advanced since the read before (per ms); NaN: not known. */
  readonly perMs: readonly number[];
  /** When it was read (Date.now()). */
  readonly at: number;
  /** The monitor's read interval (ms). */
  readonly intervalMs: number;
  /** How long a move may wait in the producer at most (ms). */
  readonly holdMs: number;
}

/** How often a gated handoff is looked at again between a LagMonitor's reads (ms). */
const GATE_CHECK_MS = 100;

/** Where progress comes from when the caller names no source. */
const ANY = {};

export class ConsumerProgress {
  /** Per topic, per source (a LagMonitor: one consumer group each): the last read. */
  private readonly topics = new Map<string, Map<object, TopicProgress>>();
  /** Flushes under way: while any is, nothing waits here. */
  private flushing = 0;

  /** A source's read of `topic` (undefined: that source is gone). */
  update(topic: string, progress: TopicProgress | undefined, source: object = ANY): void {
    let sources = this.topics.get(topic);
    if (progress !== undefined) {
      if (sources === undefined) this.topics.set(topic, (sources = new Map()));
      sources.set(source, progress);
    } else if (sources !== undefined) {
      sources.delete(source);
      if (sources.size === 0) this.topics.delete(topic);
    }
  }

  get empty(): boolean {
    return this.topics.size === 0;
  }

  /** A flush lets every move go now (`open` true), until it ends (false). */
  open(opening: boolean): void {
    this.flushing += opening ? 1 : -1;
  }

  /**
   * The gate (hold/key-handoffs.ts): whether a move whose predecessor is at `offset` of `partition`
   * waits longer, `heldMs` after it first waited. No when the group is not known to be behind
   * that offset, or is predicted to reach it within HOLD_FROM_MS, or the move waited holdMs
   * already; yes while the consumers of that partition stand still. With several groups
   * (one LagMonitor each), it waits while any of them is behind.
   */
  readonly holds = (topic: string, partition: number, offset: number, heldMs: number): boolean => {
    if (this.flushing > 0) return false;
    const sources = this.topics.get(topic);
    if (sources === undefined) return false;
    const now = Date.now();
    for (const t of sources.values()) if (behind(t, partition, offset, heldMs, now)) return true;
    return false;
  };
}

/** Whether one group's consumers of `partition` are predicted to need over HOLD_FROM_MS to pass `offset`. */
function behind(t: TopicProgress, partition: number, offset: number, heldMs: number, now: number): boolean {
  if (heldMs >= t.holdMs) return false;
  if (now - t.at > STALE_INTERVALS * t.intervalMs) return false;
  const committed = t.committed[partition];
  const perMs = t.perMs[partition];
  if (!(committed >= 0) || !(perMs >= 0)) return false;
  // Messages of that partition still to be handled before the predecessor is (the committed
  // offset is the next one to handle), had the group gone on at its rate since the read.
  const left = offset + 1 - (committed + perMs * (now - t.at));
  if (left <= 0) return false;
  return perMs === 0 || left / perMs > HOLD_FROM_MS;
}

/**
 * The producer's gate on its handoffs: while any attached LagMonitor's progress is known, a move
 * asks it (and the held moves are looked at again every GATE_CHECK_MS between reads), as long
 * as what the producer holds stays under half of maxQueued (beyond, the whole producer would
 * wait for one key's consumers).
 */
export class ProgressGate {
  private readonly progress = new ConsumerProgress();
  /** Asks the gate again while it is set (it holds a move at most holdMs). */
  private timer: NodeJS.Timeout | undefined;

  /** `held()`: the messages the producer holds, against `maxQueued`. */
  constructor(private readonly handoffs: KeyHandoffs<Waiting>, private readonly held: () => number, private readonly maxQueued: number) {}

  /** A LagMonitor's (`source`'s) read of `topic` (undefined: it stopped): the gate set or lifted, the held moves looked at again. */
  update(topic: string, progress: TopicProgress | undefined, source?: object): void {
    this.progress.update(topic, progress, source);
    const gated = !this.progress.empty;
    this.handoffs.gate = gated ? this.gate : undefined;
    if (gated && this.timer === undefined) {
      this.timer = setInterval(() => this.handoffs.recheck(), GATE_CHECK_MS);
      this.timer.unref();
    } else if (!gated) {
      this.stop();
    }
    this.handoffs.recheck();
  }

  /** A flush lets every move go now (`opening` true), until it ends (false). */
  open(opening: boolean): void {
    this.progress.open(opening);
  }

  /** Stops looking at held moves (disconnect, or no progress known any more). */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private readonly gate: Gate = (topic, partition, offset, heldMs) =>
    this.held() < this.maxQueued / 2 && this.progress.holds(topic, partition, offset, heldMs);
}
