// PlatformaticDynamicConsumer's port (src/delivery/port.ts) over @platformatic/kafka's Consumer, whose commits carry no handled records
// (it sends a null metadata, and refuses any field but topic, partition, offset and leaderEpoch). After a join its stream reads every
// partition again from its committed offset: the partitions kept keep what they hold (rejoin 'keep'), and what is read again is dropped.

import { toKafkaError } from '../core/errors';
import { partitionsByTopic } from '../core/partition-key';
import { commitRefusal } from '../delivery/commits';
import type { PartitionOffset } from '../delivery/dispatch';
import type { ConsumerPort, Refusal, TopicPartition } from '../delivery/port';
import type { CommittedOffset } from '../delivery/records';
import type { PlatformaticConsumerLike, PlatformaticStreamLike } from './consumer-types';

/** Whether @platformatic/kafka's error (or one it gathers) says the group rebalances, the member must join again, or a retry may do. */
export function transientCommitError(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 4) return false;
  const e = err as { needsRejoin?: unknown; rebalanceInProgress?: unknown; canRetry?: unknown; errors?: unknown };
  if (e.needsRejoin === true || e.rebalanceInProgress === true || e.canRetry === true) return true;
  return Array.isArray(e.errors) && e.errors.some((x) => transientCommitError(x, depth + 1));
}

/** Kafka's code of a protocol error in @platformatic/kafka's error (or one it gathers), the first found, or undefined. */
export function protocolCode(err: unknown, depth = 0): number | undefined {
  if (err === null || typeof err !== 'object' || depth > 4) return undefined;
  const e = err as { apiCode?: unknown; errors?: unknown; response?: { errorCode?: unknown } };
  if (typeof e.apiCode === 'number' && e.apiCode !== 0) return e.apiCode;
  if (Array.isArray(e.errors)) {
    for (const x of e.errors) {
      const code = protocolCode(x, depth + 1);
      if (code !== undefined) return code;
    }
  }
  return undefined;
}

export class PlatformaticPort implements ConsumerPort {
  readonly name = "@platformatic/kafka's consumer";
  readonly carriesRecords = false;
  readonly rejoin = 'keep' as const;
  readonly commitStuckMs = Number.POSITIVE_INFINITY;
  /** The consumer's MessagesStream while running. */
  stream: PlatformaticStreamLike | null = null;

  constructor(private readonly consumer: PlatformaticConsumerLike) {}

  async commit(offsets: PartitionOffset[]): Promise<void> {
    // leaderEpoch -1: not known (the broker checks nothing against it).
    await this.consumer.commit({ offsets: offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset: BigInt(offset), leaderEpoch: -1 })) });
  }

  async committed(partitions: TopicPartition[]): Promise<CommittedOffset[]> {
    const byTopic = partitionsByTopic(partitions);
    const committed = await this.consumer.listCommittedOffsets({ topics: [...byTopic].map(([topic, list]) => ({ topic, partitions: list })) });
    const offsets: CommittedOffset[] = [];
    for (const [topic, list] of byTopic) {
      const read = committed.get(topic);
      for (const partition of list) {
        const offset = read?.[partition];
        if (typeof offset === 'bigint' && offset >= 0n) offsets.push({ topic, partition, offset: Number(offset) });
      }
    }
    return offsets;
  }

  refusal(error: unknown): Refusal {
    // KIP-848's epochs first (its STALE_MEMBER_EPOCH is not marked retriable there): judged as for every client.
    const code = protocolCode(error);
    const judged = commitRefusal(code);
    if (judged === 'stale' || judged === 'rebalancing') return judged;
    return transientCommitError(error) ? 'transient' : 'other';
  }

  /** Closes the stream (one that failed already rejects nothing more worth telling). */
  async end(): Promise<void> {
    const stream = this.stream;
    this.stream = null;
    if (stream !== null) await stream.close().catch((err: unknown) => { throw toKafkaError(err, 'close'); });
  }
}
