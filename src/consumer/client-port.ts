// DynamicConsumer's port (src/delivery/port.ts) over its node-rdkafka-style client, native or the library's (consumer-client.ts).
// Commits on revoke and stop are synchronous, so the next owner starts where this one left off; periodic ones are answered in order.

import type * as Kafka from 'node-rdkafka';
import { toKafkaError } from '../core/errors';
import { commitRefusal } from '../delivery/commits';
import type { PartitionOffset } from '../delivery/dispatch';
import type { CommitKind, ConsumerPort, Refusal, TopicPartition } from '../delivery/port';
import type { CommittedOffset } from '../delivery/records';

/** An asynchronous commit unanswered this long (ms) no longer holds the next one back: answers come with the client's polls. */
const COMMIT_STUCK_MS = 1000;
/** How long a seek may take (ms). */
const SEEK_TIMEOUT_MS = 10_000;

export interface TopicPartitionOffset {
  topic: string;
  partition: number;
  offset?: number;
}

export class ClientPort implements ConsumerPort {
  readonly name = 'node-rdkafka';
  readonly rejoin = 'restart' as const;
  readonly commitStuckMs = COMMIT_STUCK_MS;
  /** librdkafka sends a group's commits to its coordinator in order; the last one (commitSync) serves the answers before it. */
  readonly commitsInOrder = true;
  /** The periodic commits awaiting their 'offset.commit' answers, oldest first. */
  private readonly answers: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];

  constructor(
    private readonly client: Kafka.KafkaConsumer,
    readonly carriesRecords: boolean,
    /** The partitions are paused for the handler (fetch-throttle.ts): they stay paused. */
    private readonly held: () => boolean,
    private readonly warn: (err: Error) => void,
    /**
     * Runs `act` while no consume call is under way (DynamicConsumer holds its fetch loop): a call begun
     * before a seek could return messages of before it, a call begun after returns only what follows it.
     */
    private readonly betweenFetches: <T>(act: () => Promise<T>) => Promise<T>,
  ) {
    (client as any).on('offset.commit', (err: unknown) => this.answered(err));
  }

  commit(offsets: PartitionOffset[], kind: CommitKind): Promise<void> {
    try {
      if (kind !== 'periodic') {
        this.client.commitSync(offsets as Kafka.TopicPartitionOffset[]);
        return Promise.resolve();
      }
      this.client.commit(offsets as Kafka.TopicPartitionOffset[]);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => this.answers.push({ resolve, reject }));
  }

  private answered(err: unknown): void {
    const answer = this.answers.shift();
    if (answer === undefined) return;
    if (err) answer.reject(err);
    else answer.resolve();
  }

  committed(partitions: TopicPartition[], timeoutMs: number): Promise<CommittedOffset[]> {
    return new Promise((resolve, reject) => {
      this.client.committed(partitions.map(({ topic, partition }) => ({ topic, partition })), timeoutMs, (err: any, offsets: any) => {
        if (err) reject(err);
        else resolve(offsets ?? []);
      });
    });
  }

  /** Reads partitions again from `offsets`: the native engine's in one call, node-rdkafka's one partition at a time. */
  seek(offsets: PartitionOffset[]): Promise<void> {
    const list = offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset }));
    const client = this.client as unknown as { seekPartitions?: (list: TopicPartitionOffset[], timeoutMs: number, cb: (err: unknown) => void) => void };
    return this.betweenFetches(async () => {
      if (typeof client.seekPartitions === 'function') {
        await new Promise<void>((resolve, reject) => client.seekPartitions!(list, SEEK_TIMEOUT_MS, (err) => (err ? reject(err) : resolve())));
        return;
      }
      await Promise.all(list.map((tp) => new Promise<void>((resolve, reject) => {
        this.client.seek(tp, SEEK_TIMEOUT_MS, (err: unknown) => (err ? reject(err) : resolve()));
      })));
    });
  }

  refusal(error: unknown): Refusal {
    return commitRefusal((error as { code?: unknown } | null)?.code);
  }

  pause(partitions: TopicPartition[]): void {
    this.client.pause(partitions.map(({ topic, partition }) => ({ topic, partition })));
  }

  resume(partitions: TopicPartition[]): void {
    if (this.held()) return;
    try {
      this.client.resume(partitions.map(({ topic, partition }) => ({ topic, partition })));
    } catch (e) {
      this.warn(toKafkaError(e, 'resume'));
    }
  }

  /** Disconnects; the answers of commits under way will not come. */
  end(): Promise<void> {
    this.answers.length = 0;
    // node-rdkafka never calls back a disconnect() made while one is under way.
    return new Promise<void>((resolve) => this.client.disconnect(() => resolve()));
  }
}
