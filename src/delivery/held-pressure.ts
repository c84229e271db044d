// Backpressure on what the resequencer holds (delivery.ts), per partition: a group catching up on
// a backlog reads a spread key's messages long before their predecessors are handled on other
// members, and would hold them until maxBufferedMessages released some flagged 'capacity'. Once
// a quarter of that many are held (the rest is room for what the client fetched before a pause
// took hold), a partition read from that holds at least its share of them is paused; a paused
// one goes on once it holds less than half its share, or an eighth or fewer are held in all. A
// producer's messages reach a partition in sequence order, so the next one its chain needs is
// never past a pause on a partition that holds its later ones: what the held messages wait for
// is read, or on a partition that holds none and goes on (docs/ordering.md, "A group catching
// up on a backlog"). Clients whose port cannot pause keep the capacity bound alone.

import { partitionKey } from '../core/partition-key';
import type { ConsumerPort, TopicPartition } from './port';

export class HeldPressure {
  /** Held messages from which a partition read may be paused (read() is called from there on); infinite when the port cannot pause. */
  readonly high: number;
  /** Held messages at or below which every paused partition goes on. */
  private readonly low: number;
  /** Partitions paused here, by name. */
  private readonly paused = new Map<string, TopicPartition>();

  constructor(
    private readonly port: ConsumerPort,
    maxBufferedMessages: number,
    private readonly held: () => number,
    private readonly heldOf: (topic: string, partition: number) => number,
    private readonly owned: () => number,
    /** Whether a partition may go on: owned still, and not paused for another reason (its previous owner's record is read). */
    private readonly mayGo: (tp: TopicPartition) => boolean,
  ) {
    this.high = port.pause !== undefined && maxBufferedMessages >= 8 ? Math.floor(maxBufferedMessages / 4) : Number.POSITIVE_INFINITY;
    this.low = Math.floor(maxBufferedMessages / 8);
  }

  /** A message of `topic` [`partition`] was read, with `high` messages held or more. */
  read(topic: string, partition: number): void {
    const name = partitionKey(topic, partition);
    if (this.paused.has(name) || this.heldOf(topic, partition) * Math.max(1, this.owned()) < this.held()) return;
    const tp = { topic, partition };
    this.paused.set(name, tp);
    this.port.pause!([tp]);
  }

  /** Messages were released: a paused partition goes on once it holds few, or few are held in all. */
  progress(): void {
    if (this.paused.size === 0) return;
    const held = this.held();
    const all = held <= this.low;
    const share = held / Math.max(1, this.owned());
    const going: TopicPartition[] = [];
    for (const [name, tp] of this.paused) {
      if (!all && 2 * this.heldOf(tp.topic, tp.partition) >= share) continue;
      this.paused.delete(name);
      if (this.mayGo(tp)) going.push(tp);
    }
    if (going.length > 0) this.port.resume?.(going);
  }

  /** The run ended. */
  clear(): void {
    this.paused.clear();
  }
}
