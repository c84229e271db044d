// Backpressure on what the resequencer holds (delivery.ts), per partition: a group catching up on
// a backlog reads a spread key's messages long before their predecessors are handled on other
// members, and would hold them until maxBufferedMessages released some flagged 'capacity'. Once
// half of that many are held, a partition read from that holds at least its share of them is
// paused; the paused ones go on once a quarter or fewer are held. A partition holding few keeps
// being read: a held message's predecessor here is read there, or on a partition that holds
// none of the producer's later messages (a producer's messages reach a partition in sequence
// order), so pausing what holds many never stops what they wait for (docs/ordering.md, "A group
// catching up on a backlog"). Clients whose port cannot pause keep the capacity bound alone.

import { partitionKey } from '../core/partition-key';
import type { ConsumerPort, TopicPartition } from './port';

export class HeldPressure {
  /** Partitions paused here, by name. */
  private readonly paused = new Map<string, TopicPartition>();
  /** Pauses made and the partitions' resumes, for metrics(). */
  pauses = 0;

  constructor(
    private readonly port: ConsumerPort,
    /** Held messages: pausing starts at `high`, resuming at `low`. */
    private readonly high: number,
    private readonly low: number,
    private readonly held: () => number,
    private readonly heldOf: (topic: string, partition: number) => number,
    private readonly owned: () => number,
    /** Whether a partition may go on: owned still, and not paused for another reason (its previous owner's record is read). */
    private readonly mayGo: (tp: TopicPartition) => boolean,
  ) {}

  /** A message of `topic` [`partition`] was read (call it only once `held()` reached `high`). */
  read(topic: string, partition: number): void {
    if (this.port.pause === undefined) return;
    const name = partitionKey(topic, partition);
    if (this.paused.has(name) || this.heldOf(topic, partition) * Math.max(1, this.owned()) < this.held()) return;
    const tp = { topic, partition };
    this.paused.set(name, tp);
    this.pauses++;
    this.port.pause([tp]);
  }

  /** Messages were released: the paused partitions go on once few are held. */
  progress(): void {
    if (this.paused.size === 0 || this.held() > this.low) return;
    const going = [...this.paused.values()].filter(this.mayGo);
    this.paused.clear();
    if (going.length > 0) this.port.resume?.(going);
  }

  /** The run ended. */
  clear(): void {
    this.paused.clear();
  }
}
