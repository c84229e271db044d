// KafkaJsDynamicConsumer's commits (src/kafkajs/consumer.ts), as src/consumer/commits.ts is
// DynamicConsumer's: what may be committed is the Dispatcher's safe offset of each partition
// (below every message held or not yet handled), with its partition's handled record
// (src/delivery/records.ts) as the commit's metadata; this writes it through the consumer's host
// (consumer-host.ts) — periodically with the consumer's commitOffsets(), synchronously on
// revoke where the host can (Confluent's internal client's commitSync()) — takes the results,
// and reads back the group's committed offsets and records of the partitions the Resequencer
// awaits (a held message waits for its predecessor there to be handled by another member) and
// of the partitions coming to this consumer.

import { type KafkaError, StateError, toKafkaError } from '../core/errors';
import type { ConsumerHost } from './consumer-host';
import { commitRefusal } from '../consumer/commits';
import { CommitTurns } from '../delivery/commit-turns';
import type { Dispatcher, PartitionOffset } from '../delivery/dispatch';
import type { ConsumedMessage, Resequencer } from '../delivery/resequencer';
import type { CommittedOffset, HandledRecords } from '../delivery/records';

/** How long one read of committed offsets may take (ms); a later tick tries again. */
const COMMITTED_READ_TIMEOUT_MS = 5000;

/** What the commits report to the consumer that owns them. */
export interface KafkaJsCommitHooks {
  /** The consumer is running (periodic work and reads' results count only then). */
  running(): boolean;
  emit(event: 'committed', offsets: PartitionOffset[]): void;
  emit(event: 'warning' | 'error', error: KafkaError): void;
  /** Whether an 'error' listener is there (a periodic commit's failure is reported only to one). */
  hasErrorListener(): boolean;
}

export class KafkaJsCommits<M extends ConsumedMessage> {
  /** Periodic commits, one at a time. */
  private readonly turns = new CommitTurns();
  /** A read of committed offsets is under way. */
  private reading = false;

  constructor(
    private readonly host: ConsumerHost,
    private readonly dispatch: Dispatcher<M>,
    private readonly resequencer: Resequencer<M>,
    private readonly records: HandledRecords<M>,
    private readonly hooks: KafkaJsCommitHooks,
  ) {}

  /** The offsets to commit for `partitions`, each with its record (`onlyMoved`: those whose offset or record changed). */
  offsetsOf(partitions: Iterable<{ topic: string; partition: number }>, onlyMoved: boolean): PartitionOffset[] {
    const offsets = this.dispatch.toCommit(partitions, onlyMoved, (t, p, o) => this.records.textOf(t, p, o));
    this.records.sent(offsets);
    return offsets;
  }

  /**
   * A periodic commit (or one soon after a marked message was handled): the partitions whose
   * safe offset or record changed, one commit at a time; asked for while one is under way, it
   * goes once that one is back.
   */
  commitHandled(partitions: () => Iterable<{ topic: string; partition: number }>): void {
    this.turns.take(() => {
      if (!this.hooks.running()) return undefined;
      const offsets = this.offsetsOf(partitions(), true);
      if (offsets.length === 0) return undefined;
      const since = performance.now();
      return this.commit(offsets, true).finally(() => this.records.commitTook(performance.now() - since));
    });
  }

  /** Resolves once no periodic commit is under way. */
  settled(): Promise<void> {
    return this.turns.settled();
  }

  /**
   * Commits `offsets`: 'committed' (and true), or the offsets are committed again next time
   * ('error', or 'warning' for a refusal on revoke; false).
   */
  async commit(offsets: PartitionOffset[], periodic: boolean): Promise<boolean> {
    try {
      await this.host.commit(offsets);
      this.hooks.emit('committed', withoutRecords(offsets));
      return true;
    } catch (err) {
      this.dispatch.notCommitted(offsets);
      const error = toKafkaError(err, 'commit');
      // Refused while the group rebalances: a periodic one is made again next time; one on
      // revoke leaves the next owner to read again from the last committed offset (re-reads).
      const refusal = commitRefusal(error.librdkafkaCode);
      if (refusal === 'rebalancing') {
        if (!periodic) this.hooks.emit('warning', error);
        return false;
      }
      // Refused while the coordinator moves or is out of reach: made again next time (or read again by the next owner).
      if (refusal === 'transient') {
        this.hooks.emit('warning', error);
        return false;
      }
      if (!periodic) throw error;
      if (this.hooks.hasErrorListener()) this.hooks.emit('error', error);
      return false;
    }
  }

  /** A commit on revoke: 'committed', or a 'warning' (the next owner reads again from the last committed offset). */
  commitOnRevoke(offsets: PartitionOffset[]): void {
    try {
      if (this.host.commitNow === undefined) throw new StateError(`${this.host.name} cannot commit synchronously`);
      this.host.commitNow(offsets);
      this.hooks.emit('committed', withoutRecords(offsets));
    } catch (err) {
      this.dispatch.notCommitted(offsets);
      this.hooks.emit('warning', toKafkaError(err, 'commit on revoke'));
    }
  }

  /**
   * Reads the group's committed offsets and records of the partitions the resequencer awaits
   * (a key's predecessor on another member's partition) and feeds them to it, one read at a time.
   */
  readCommitted(): void {
    if (this.reading || !this.hooks.running()) return;
    const awaited = this.resequencer.awaited();
    if (awaited.length === 0) return;
    this.reading = true;
    this.records.reading();
    const since = performance.now();
    this.host.committed(awaited, COMMITTED_READ_TIMEOUT_MS).then((offsets) => {
      this.records.readTook(performance.now() - since);
      if (!this.hooks.running()) return;
      this.dispatch.accept(this.records.read(offsets));
    }, (err) => {
      if (this.hooks.running()) this.hooks.emit('warning', toKafkaError(err, 'committed'));
    }).finally(() => {
      this.reading = false;
    });
  }

  /** The committed offsets and records of `partitions` (coming to this consumer), as the records read them. */
  committedOf(partitions: Array<{ topic: string; partition: number }>): Promise<CommittedOffset[]> {
    return this.host.committed(partitions, COMMITTED_READ_TIMEOUT_MS);
  }
}

/** The offsets as the 'committed' listeners get them: without the records committed with them. */
function withoutRecords(offsets: readonly PartitionOffset[]): PartitionOffset[] {
  return offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset }));
}
