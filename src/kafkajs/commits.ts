// KafkaJsDynamicConsumer's commits (src/kafkajs/consumer.ts), as src/consumer/commits.ts is
// DynamicConsumer's: what may be committed is the Dispatcher's safe offset of each partition
// (below every message held or not yet handled), with its partition's handled record
// (src/consumer/records.ts) as the commit's metadata; this writes it — periodically with the
// consumer's commitOffsets(), synchronously on revoke with its internal client's commitSync() —
// takes the results, and reads back the group's committed offsets and records of the
// partitions the Resequencer awaits (a held message waits for its predecessor there to be
// handled by another member) and of the partitions coming to this consumer.

import { type KafkaError, StateError, toKafkaError } from '../core/errors';
import { delay } from '../core/time';
import { commitRefusal } from '../consumer/commits';
import type { Dispatcher, PartitionOffset } from '../consumer/dispatch';
import type { ConsumedMessage, Resequencer } from '../consumer/resequencer';
import type { CommittedOffset, HandledRecords } from '../consumer/records';

/** How long one read of committed offsets may take (ms); a later tick tries again. */
const COMMITTED_READ_TIMEOUT_MS = 5000;

/** What is used of the KafkaJS-API consumer to commit and to read committed offsets. */
export interface KafkaJsCommitter {
  commitOffsets(offsets: Array<{ topic: string; partition: number; offset: string; metadata?: string }>): Promise<void>;
  committed(partitions: Array<{ topic: string; partition: number }>, timeout?: number):
    Promise<Array<{ topic: string; partition: number; offset: string | null; metadata?: string | null }>>;
}

/** What the commits report to the consumer that owns them. */
export interface KafkaJsCommitHooks {
  /** The consumer is running (periodic work and reads' results count only then). */
  running(): boolean;
  /** The consumer's node-rdkafka-style client (its commitSync() commits on revoke), or null before connect(). */
  client(): { commitSync?(offsets: PartitionOffset[]): unknown } | null;
  emit(event: 'committed', offsets: PartitionOffset[]): void;
  emit(event: 'warning' | 'error', error: KafkaError): void;
  /** Whether an 'error' listener is there (a periodic commit's failure is reported only to one). */
  hasErrorListener(): boolean;
}

export class KafkaJsCommits<M extends ConsumedMessage> {
  /** A periodic commit, or a read of committed offsets, is under way. */
  private committing = false;
  private reading = false;
  /** A commit was asked for while one was under way: the partitions to commit once it is back. */
  private again: (() => Iterable<{ topic: string; partition: number }>) | undefined;

  constructor(
    private readonly consumer: KafkaJsCommitter,
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
    if (!this.hooks.running()) return;
    if (this.committing) {
      this.again = partitions;
      return;
    }
    this.again = undefined;
    const offsets = this.offsetsOf(partitions(), true);
    if (offsets.length === 0) return;
    this.committing = true;
    const since = performance.now();
    void this.commit(offsets, true).finally(() => {
      this.committing = false;
      this.records.commitTook(performance.now() - since);
      const again = this.again;
      if (again !== undefined) this.commitHandled(again);
    });
  }

  /** Resolves once no periodic commit is under way. */
  async settled(): Promise<void> {
    while (this.committing) await delay(5);
  }

  /** Commits `offsets`: 'committed', or the offsets are committed again next time ('error', or 'warning' for a refusal on revoke). */
  async commit(offsets: PartitionOffset[], periodic: boolean): Promise<void> {
    try {
      await this.consumer.commitOffsets(offsets.map(({ topic, partition, offset, metadata }) =>
        (metadata === undefined ? { topic, partition, offset: String(offset) } : { topic, partition, offset: String(offset), metadata })));
      this.hooks.emit('committed', withoutRecords(offsets));
    } catch (err) {
      this.dispatch.notCommitted(offsets);
      const error = toKafkaError(err, 'commit');
      // Refused while the group rebalances: a periodic one is made again next time; one on
      // revoke leaves the next owner to read again from the last committed offset (re-reads).
      const refusal = commitRefusal(error.librdkafkaCode);
      if (refusal === 'rebalancing') {
        if (!periodic) this.hooks.emit('warning', error);
        return;
      }
      // Refused while the coordinator moves or is out of reach: made again next time (or read again by the next owner).
      if (refusal === 'transient') {
        this.hooks.emit('warning', error);
        return;
      }
      if (!periodic) throw error;
      if (this.hooks.hasErrorListener()) this.hooks.emit('error', error);
    }
  }

  /** A commit on revoke: 'committed', or a 'warning' (the next owner reads again from the last committed offset). */
  commitOnRevoke(offsets: PartitionOffset[]): void {
    try {
      const client = this.hooks.client();
      if (typeof client?.commitSync !== 'function') throw new StateError('the consumer has no client to commit with');
      client.commitSync(offsets);
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
    this.consumer.committed(awaited, COMMITTED_READ_TIMEOUT_MS).then((offsets) => {
      this.records.readTook(performance.now() - since);
      if (!this.hooks.running()) return;
      this.dispatch.accept(this.records.read(committedOffsets(offsets)));
    }, (err) => {
      if (this.hooks.running()) this.hooks.emit('warning', toKafkaError(err, 'committed'));
    }).finally(() => {
      this.reading = false;
    });
  }

  /** The committed offsets and records of `partitions` (coming to this consumer), as the records read them. */
  async committedOf(partitions: Array<{ topic: string; partition: number }>): Promise<CommittedOffset[]> {
    return committedOffsets(await this.consumer.committed(partitions, COMMITTED_READ_TIMEOUT_MS));
  }
}

/**
 * What the KafkaJS API's committed() gives, as the records read it: the offset a number (the
 * API gives a string, and null for offset 0), the metadata as given (Confluent's client reads
 * it less the NUL its writers add, src/common.cc).
 */
function committedOffsets(offsets: ReadonlyArray<{ topic: string; partition: number; offset: string | null; metadata?: string | null }> | undefined): CommittedOffset[] {
  return (offsets ?? []).map(({ topic, partition, offset, metadata }) => ({ topic, partition, offset: offset === null ? 0 : Number(offset), metadata }));
}

/** The offsets as the 'committed' listeners get them: without the records committed with them. */
function withoutRecords(offsets: readonly PartitionOffset[]): PartitionOffset[] {
  return offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset }));
}
