// KafkaJsDynamicConsumer's commits (src/kafkajs/consumer.ts), as src/consumer/commits.ts is
// DynamicConsumer's: what may be committed is the Dispatcher's safe offset of each partition
// (below every message held or not yet handled); this writes it — periodically with the
// consumer's commitOffsets(), synchronously on revoke with its internal client's commitSync() —
// takes the results, and reads the group's committed offsets of the partitions the Resequencer
// awaits (a held message waits for its predecessor there to be handled by another member).

import { type KafkaError, StateError, toKafkaError } from '../core/errors';
import { delay } from '../core/time';
import { commitRefusal } from '../consumer/commits';
import type { Dispatcher, PartitionOffset } from '../consumer/dispatch';
import type { ConsumedMessage, Resequencer } from '../consumer/resequencer';


/** How long one read of committed offsets may take (ms); a later tick tries again. */
const COMMITTED_READ_TIMEOUT_MS = 5000;

/** What is used of the KafkaJS-API consumer to commit and to read committed offsets. */
export interface KafkaJsCommitter {
  commitOffsets(offsets: Array<{ topic: string; partition: number; offset: string }>): Promise<void>;
  committed(partitions: Array<{ topic: string; partition: number }>, timeout?: number): Promise<Array<{ topic: string; partition: number; offset: string | null }>>;
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

  constructor(
    private readonly consumer: KafkaJsCommitter,
    private readonly dispatch: Dispatcher<M>,
    private readonly resequencer: Resequencer<M>,
    private readonly hooks: KafkaJsCommitHooks,
  ) {}

  /** A periodic commit: the partitions whose safe offset moved, one commit at a time. */
  commitHandled(partitions: Iterable<{ topic: string; partition: number }>): void {
    if (this.committing || !this.hooks.running()) return;
    const offsets = this.dispatch.toCommit(partitions, true);
    if (offsets.length === 0) return;
    this.committing = true;
    void this.commit(offsets, true).finally(() => {
      this.committing = false;
    });
  }

  /** Resolves once no periodic commit is under way. */
  async settled(): Promise<void> {
    while (this.committing) await delay(5);
  }

  /** Commits `offsets`: 'committed', or the offsets are committed again next time ('error', or 'warning' for a refusal on revoke). */
  async commit(offsets: PartitionOffset[], periodic: boolean): Promise<void> {
    try {
      await this.consumer.commitOffsets(offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset: String(offset) })));
      this.hooks.emit('committed', offsets);
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
      this.hooks.emit('committed', offsets);
    } catch (err) {
      this.dispatch.notCommitted(offsets);
      this.hooks.emit('warning', toKafkaError(err, 'commit on revoke'));
    }
  }

  /**
   * Reads the group's committed offsets of the partitions the resequencer awaits (a key's
   * handoff from another member) and feeds them to it, one read at a time.
   */
  readCommitted(): void {
    if (this.reading || !this.hooks.running()) return;
    const awaited = this.resequencer.awaited();
    if (awaited.length === 0) return;
    this.reading = true;
    this.consumer.committed(awaited, COMMITTED_READ_TIMEOUT_MS).then((offsets) => {
      if (!this.hooks.running()) return;
      // The KafkaJS API gives offsets as strings (null for offset 0, which passes nothing).
      this.dispatch.committedRead((offsets ?? []).map(({ topic, partition, offset }) => ({ topic, partition, offset: offset === null ? -1 : Number(offset) })));
    }, (err) => {
      if (this.hooks.running()) this.hooks.emit('warning', toKafkaError(err, 'committed'));
    }).finally(() => {
      this.reading = false;
    });
  }
}
