// PlatformaticDynamicConsumer's commits (src/platformatic/consumer.ts), as src/kafkajs/commits.ts
// is KafkaJsDynamicConsumer's: what may be committed is the Dispatcher's safe offset of each
// partition (below every message held or not yet handled); this writes it with the consumer's
// commit() — offsets only: @platformatic/kafka 2.x sends every OffsetCommit with a null
// metadata, and its commit() refuses any field but topic, partition, offset and leaderEpoch —
// takes the results, and reads the group's committed offsets of the partitions the Resequencer
// awaits (a held message waits for its predecessor there to be handled by another member, at
// a known offset) with the consumer's listCommittedOffsets().

import { type KafkaError, toKafkaError } from '../core/errors';
import { partitionsByTopic } from '../core/partition-key';
import { CommitTurns } from '../delivery/commit-turns';
import type { Dispatcher, PartitionOffset } from '../delivery/dispatch';
import type { Resequencer } from '../delivery/resequencer';
import type { PlatformaticConsumed, PlatformaticConsumerLike } from './consumer-types';

/** What the commits report to the consumer that owns them. */
export interface PlatformaticCommitHooks {
  /** The consumer is running (periodic work and reads' results count only then). */
  running(): boolean;
  /** The group rebalances: a periodic commit waits (the client would answer a refusal by joining the group again). */
  rebalancing(): boolean;
  emit(event: 'committed', offsets: PartitionOffset[]): void;
  emit(event: 'warning' | 'error', error: KafkaError): void;
  /** Whether an 'error' listener is there (a periodic commit's failure is reported only to one). */
  hasErrorListener(): boolean;
}

/**
 * Whether @platformatic/kafka's error (or one of the errors it gathers) says the group is
 * rebalancing or the member must join again, or that the call may be tried again: a commit
 * refused so is made again next time ('warning'), not an 'error'.
 */
export function transientCommitError(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 4) return false;
  const e = err as { needsRejoin?: unknown; rebalanceInProgress?: unknown; canRetry?: unknown; errors?: unknown };
  if (e.needsRejoin === true || e.rebalanceInProgress === true || e.canRetry === true) return true;
  return Array.isArray(e.errors) && e.errors.some((x) => transientCommitError(x, depth + 1));
}

export class PlatformaticCommits {
  /** Periodic commits, one at a time. */
  private readonly turns = new CommitTurns();
  /** A read of committed offsets is under way. */
  private reading = false;

  constructor(
    private readonly consumer: PlatformaticConsumerLike,
    private readonly dispatch: Dispatcher<PlatformaticConsumed>,
    private readonly resequencer: Resequencer<PlatformaticConsumed>,
    private readonly hooks: PlatformaticCommitHooks,
  ) {}

  /** The offsets to commit for `partitions` (`onlyMoved`: those whose safe offset moved since the last commit). */
  offsetsOf(partitions: Iterable<{ topic: string; partition: number }>, onlyMoved: boolean): PartitionOffset[] {
    return this.dispatch.toCommit(partitions, onlyMoved);
  }

  /** A periodic commit: the partitions whose safe offset moved, one commit at a time (asked for meanwhile, it goes once that one is back). */
  commitHandled(partitions: () => Iterable<{ topic: string; partition: number }>): void {
    this.turns.take(() => {
      if (!this.hooks.running() || this.hooks.rebalancing()) return undefined;
      const offsets = this.offsetsOf(partitions(), true);
      return offsets.length === 0 ? undefined : this.commit(offsets, true);
    });
  }

  /** Resolves once no periodic commit is under way. */
  settled(): Promise<void> {
    return this.turns.settled();
  }

  /**
   * Commits `offsets`: 'committed', or they are committed again next time — a refusal while the
   * group rebalances (or one that may be tried again) is a 'warning'; another failure an
   * 'error' (periodic: to an 'error' listener only) or, not periodic, thrown.
   */
  async commit(offsets: PartitionOffset[], periodic: boolean): Promise<void> {
    try {
      // leaderEpoch -1: not known (the broker checks nothing against it).
      await this.consumer.commit({ offsets: offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset: BigInt(offset), leaderEpoch: -1 })) });
      this.hooks.emit('committed', offsets);
    } catch (err) {
      this.dispatch.notCommitted(offsets);
      const error = toKafkaError(err, 'commit');
      if (transientCommitError(err)) {
        this.hooks.emit('warning', error);
        return;
      }
      if (!periodic) throw error;
      if (this.hooks.hasErrorListener()) this.hooks.emit('error', error);
    }
  }

  /**
   * A commit that nothing waits for (on a rebalance): 'committed', or a 'warning' when it fails
   * (the partitions' next owner reads again from the last committed offset: at least once).
   */
  commitNow(offsets: PartitionOffset[]): void {
    if (offsets.length === 0) return;
    this.commit(offsets, true).catch(() => undefined);
  }

  /**
   * Reads the group's committed offsets of the partitions the resequencer awaits (a key's
   * predecessor on another member's partition, at a known offset) and feeds them to it, one
   * read at a time; a failed read is a 'warning' (made again next time).
   */
  readCommitted(): void {
    if (this.reading || !this.hooks.running()) return;
    const awaited = this.resequencer.awaited();
    if (awaited.length === 0) return;
    const byTopic = partitionsByTopic(awaited);
    this.reading = true;
    this.consumer.listCommittedOffsets({ topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })) }).then((committed) => {
      if (!this.hooks.running()) return;
      const offsets: Array<{ topic: string; partition: number; offset: number }> = [];
      for (const [topic, partitions] of byTopic) {
        const list = committed.get(topic);
        for (const partition of partitions) {
          const offset = list?.[partition];
          if (typeof offset === 'bigint' && offset >= 0n) offsets.push({ topic, partition, offset: Number(offset) });
        }
      }
      this.dispatch.committedRead(offsets);
    }, (err) => {
      if (this.hooks.running()) this.hooks.emit('warning', toKafkaError(err, 'listCommittedOffsets'));
    }).finally(() => {
      this.reading = false;
    });
  }
}
