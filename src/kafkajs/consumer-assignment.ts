// KafkaJsDynamicConsumer's partitions (consumer.ts): which it owns, as its host
// (consumer-host.ts) reports the group's changes, and what each change does to the messages.
//
//   - assigned: the partitions come here fresh; their first batches wait until the group's
//     committed offsets and records of them are read (their previous owner's handled record,
//     docs/ordering.md "Order in a group"), and a message below the offset read is handled
//     already (a commit is only ever below what was handled): it is skipped;
//   - revoked (Confluent's): what is safe of them is committed synchronously before they go,
//     what is held or queued of them is dropped (their next owner reads it again);
//   - rebalancing (KafkaJS's REBALANCING: the consumer is about to join again, and its eager
//     protocol takes every partition back): nothing new is handed out (what waits is dropped,
//     the calls under way go on), what is safe of every partition is committed at once, and
//     again once the calls under way are over, before the join ends if it can (it races the
//     join: a commit that lands after it is refused, and what it held is read again);
//   - joined (KafkaJS's GROUP_JOIN): the partitions no longer here are revoked (forgotten); the
//     ones kept are fetched again from their committed offsets, so once their calls under way
//     are over, what is safe of them is committed (this member's still) and they start anew,
//     as fresh ones do, their record read back; the new ones are fresh. A join without a
//     REBALANCING before it (KafkaJS joins again by itself when its member id is unknown or its
//     metadata stale) drops what waits of the kept partitions first; a crash KafkaJS restarts
//     from is met as a REBALANCING (host-kafkajs.ts).

import { type Dispatcher, type PartitionOffset, partitionKey } from '../delivery/dispatch';
import type { ConsumedMessage } from '../delivery/resequencer';
import type { HandledRecords } from '../delivery/records';
import type { KafkaError } from '../core/errors';
import { toKafkaError } from '../core/errors';
import type { HostEvents, TopicPartition } from './consumer-host';
import type { KafkaJsCommits } from './commits';

/** How long a rejoin waits for the handler's calls under way on the kept partitions before it commits them (ms). */
export const REJOIN_SETTLE_MS = 10_000;

/** What the rebalances of KafkaJS's consumer did (metrics().rejoins). */
export interface RejoinCounts {
  /** REBALANCING events met while running. */
  rebalancing: number;
  /** Commits made on them (at once, and once the calls under way were over) that landed, and that were refused or failed. */
  committed: number;
  refused: number;
  /** How long the last of those commits took, from REBALANCING to its answer (ms). */
  lastCommitMs: number;
  /** Joins (GROUP_JOIN), and how long the last took from REBALANCING (ms). */
  joins: number;
  lastJoinMs: number;
  /** Messages skipped because they were below their partition's committed offset when read (handled already). */
  belowCommitted: number;
}

export interface AssignmentHooks {
  running(): boolean;
  emit(event: 'assigned' | 'revoked', partitions: TopicPartition[]): void;
  emit(event: 'warning', error: KafkaError): void;
  /** The client's run ended by itself, for good. */
  crashed(error: unknown): void;
}

export class Assignment<M extends ConsumedMessage> implements HostEvents {
  /** The partitions this consumer owns, by partitionKey. */
  readonly owned = new Map<string, TopicPartition>();
  /** Partitions whose first batches wait (their records being read, or their restart after a join). */
  private readonly waits = new Map<string, Promise<void>>();
  /** Per partition: the committed offset read when it came here (a message below it was handled). */
  private readonly floor = new Map<string, number>();
  /** Between REBALANCING and GROUP_JOIN: batches are dropped (every partition is fetched again after the join). */
  rejoining = false;
  /** Joins so far: work of an earlier one that is still under way gives way. */
  private generation = 0;
  private rebalancingAt = 0;
  readonly counts: RejoinCounts = { rebalancing: 0, committed: 0, refused: 0, lastCommitMs: 0, joins: 0, lastJoinMs: 0, belowCommitted: 0 };

  constructor(
    private readonly dispatch: Dispatcher<M>,
    private readonly records: HandledRecords<M>,
    private readonly commits: KafkaJsCommits<M>,
    private readonly hooks: AssignmentHooks,
  ) {}

  has(name: string): boolean {
    return this.owned.has(name);
  }

  /** What a batch of the partition waits for before its messages go in, if anything. */
  waitOf(name: string): Promise<void> | undefined {
    return this.waits.get(name);
  }

  /**
   * The partition's committed offset when it came here, if any: a message below it was handled
   * already, and is skipped (counted with skippedBelow()). Read once per batch.
   */
  floorOf(name: string): number | undefined {
    return this.floor.get(name);
  }

  /** A message below its partition's floor was skipped. */
  skippedBelow(): void {
    this.counts.belowCommitted++;
  }

  assigned(partitions: TopicPartition[]): void {
    const fresh = partitions.filter(({ topic, partition }) => !this.owned.has(partitionKey(topic, partition)));
    for (const tp of fresh) this.owned.set(partitionKey(tp.topic, tp.partition), tp);
    this.dispatch.assign(fresh);
    if (fresh.length === 0) return;
    this.wait(fresh, this.inherit(fresh));
    this.hooks.emit('assigned', fresh);
  }

  revoked(partitions: TopicPartition[]): void {
    const leaving = partitions.filter(({ topic, partition }) => this.owned.has(partitionKey(topic, partition)));
    if (leaving.length === 0) return;
    // Synchronously, on the consumer's own client: done before the consumer unassigns them, so
    // their next owner starts where this one left off (an asynchronous commit could land after
    // it has read the older committed offset, and it would handle again what was committed).
    if (this.hooks.running()) {
      const offsets = this.commits.offsetsOf(leaving, false);
      if (offsets.length > 0) this.commits.commitOnRevoke(offsets);
    }
    this.forget(leaving);
    this.hooks.emit('revoked', leaving);
  }

  rebalancing(): void {
    if (!this.hooks.running()) return;
    this.counts.rebalancing++;
    this.rejoining = true;
    this.rebalancingAt = Date.now();
    const all = [...this.owned.values()];
    if (all.length === 0) return;
    const generation = this.generation;
    this.dispatch.drop(all);
    this.commitNow(this.commits.offsetsOf(all, false));
    // Once the calls under way are over, what they handled too, if the join has not ended yet.
    void this.dispatch.settled(all, REJOIN_SETTLE_MS).then(() => {
      if (!this.rejoining || this.generation !== generation || !this.hooks.running()) return;
      this.commitNow(this.commits.offsetsOf(all, true));
    });
  }

  /** A commit on REBALANCING, counted (refusals are 'warning's: what it held is read again). */
  private commitNow(offsets: PartitionOffset[]): void {
    if (offsets.length === 0) return;
    const at = this.rebalancingAt;
    this.commits.commit(offsets, false).then((landed) => landed, (err) => {
      this.hooks.emit('warning', toKafkaError(err, 'commit on rebalance'));
      return false;
    }).then((landed) => {
      this.counts.lastCommitMs = Date.now() - at;
      if (landed) this.counts.committed++;
      else this.counts.refused++;
    });
  }

  joined(partitions: TopicPartition[]): void {
    this.rejoining = false;
    this.generation++;
    this.counts.joins++;
    if (this.rebalancingAt > 0) this.counts.lastJoinMs = Date.now() - this.rebalancingAt;
    const now = new Set(partitions.map(({ topic, partition }) => partitionKey(topic, partition)));
    const old = [...this.owned.values()];
    const leaving = old.filter(({ topic, partition }) => !now.has(partitionKey(topic, partition)));
    const kept = old.filter(({ topic, partition }) => now.has(partitionKey(topic, partition)));
    if (leaving.length > 0) {
      this.forget(leaving);
      this.hooks.emit('revoked', leaving);
    }
    if (kept.length > 0) {
      // Without a REBALANCING first (KafkaJS joins again by itself when its member id is
      // unknown, or its metadata stale), what waits of them is dropped here.
      this.dispatch.drop(kept);
      this.restart(kept);
    }
    this.assigned(partitions);
  }

  crashed(error: unknown): void {
    this.hooks.crashed(error);
  }

  /**
   * Kept partitions after a join, fetched again from their committed offsets: once their calls
   * under way are over (up to REJOIN_SETTLE_MS), what is safe of them is committed, and they
   * start anew with their record read back; their batches wait for it.
   */
  private restart(kept: TopicPartition[]): void {
    const generation = this.generation;
    const restarted = this.dispatch.settled(kept, REJOIN_SETTLE_MS).then(async () => {
      if (this.generation !== generation || !this.hooks.running()) return;
      const offsets = this.commits.offsetsOf(kept, false);
      if (offsets.length > 0) await this.commits.commit(offsets, false).catch((err) => this.hooks.emit('warning', toKafkaError(err, 'commit after join')));
      if (this.generation !== generation || !this.hooks.running()) return;
      this.dispatch.forget(kept);
      this.dispatch.assign(kept);
      await this.inherit(kept);
    });
    this.wait(kept, restarted);
  }

  /** Batches of `partitions` wait for `until`. */
  private wait(partitions: TopicPartition[], until: Promise<void>): void {
    const done = until.finally(() => {
      for (const { topic, partition } of partitions) {
        const name = partitionKey(topic, partition);
        if (this.waits.get(name) === done) this.waits.delete(name);
      }
    });
    for (const { topic, partition } of partitions) this.waits.set(partitionKey(topic, partition), done);
  }

  /**
   * Reads the offsets and records the partitions coming here were committed with (their
   * previous owner's), so that what it handled is not handed out again. A failed read is a
   * 'warning': they go on without it (what was handled above the offset comes again).
   */
  private inherit(partitions: TopicPartition[]): Promise<void> {
    for (const { topic, partition } of partitions) this.floor.delete(partitionKey(topic, partition));
    return this.commits.committedOf(partitions).then((offsets) => {
      if (!this.hooks.running()) return;
      for (const { topic, partition, offset, error } of offsets) {
        const name = partitionKey(topic, partition);
        if (!error && typeof offset === 'number' && Number.isSafeInteger(offset) && offset > 0 && this.owned.has(name)) this.floor.set(name, offset);
      }
      this.dispatch.accept(this.records.inherit(offsets));
    }, (err) => {
      if (this.hooks.running()) this.hooks.emit('warning', toKafkaError(err, 'committed'));
    });
  }

  /** Partitions leave: what is held or queued of them is dropped (read again by their next owner). */
  private forget(partitions: TopicPartition[]): void {
    for (const { topic, partition } of partitions) {
      const name = partitionKey(topic, partition);
      this.owned.delete(name);
      this.waits.delete(name);
      this.floor.delete(name);
    }
    this.dispatch.forget(partitions);
  }

  /** The run ended: nothing is owned. */
  clear(): void {
    this.dispatch.forget([...this.owned.values()]);
    this.owned.clear();
    this.waits.clear();
    this.floor.clear();
    this.rejoining = false;
    this.generation++;
  }
}
