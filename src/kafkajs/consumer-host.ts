// What KafkaJsDynamicConsumer (consumer.ts) asks of the client it wraps, the same for both
// clients of the KafkaJS API it serves: how it connects, subscribes, runs eachBatch, learns of
// the group's assignment changes, commits offsets with their metadata, reads the group's
// committed offsets and metadata back, and stops. One host per client: Confluent's KafkaJS
// consumer (host-confluent.ts) and KafkaJS 2.x's own (host-kafkajs.ts).

import type { PartitionOffset } from '../delivery/dispatch';
import type { CommittedOffset } from '../delivery/records';
import type { KafkaJsBatchPayload, KafkaJsSubscription } from './consumer-types';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** The assignment changes a host reports to the consumer. */
export interface HostEvents {
  /** Partitions came to this consumer (each reported once, until revoked). */
  assigned(partitions: TopicPartition[]): void;
  /** Partitions leave this consumer, which may still commit them now (synchronously: host.commitNow). */
  revoked(partitions: TopicPartition[]): void;
  /**
   * The group rebalances (KafkaJS: its eager protocol takes every partition back): nothing new
   * should be handed out, what is safe be committed, before `joined` says what this consumer owns.
   */
  rebalancing(): void;
  /** The group was joined (again): `partitions` are this consumer's now, and only they. */
  joined(partitions: TopicPartition[]): void;
  /** The client's run ended for good by itself (a crash it does not restart from). */
  crashed(error: unknown): void;
}

export interface ConsumerHost {
  /** What the client is, for messages. */
  readonly name: string;
  /** After stop() the consumer may connect and run again (KafkaJS's), or is done (Confluent's: stop() disconnects it). */
  readonly runsAgain: boolean;
  /** Connects the client (unless connected) and checks it, then reports its assignment changes to `events`. */
  connect(events: HostEvents): Promise<void>;
  subscribe(subscription: KafkaJsSubscription): Promise<void>;
  /** Starts the client's run with `eachBatch` (auto-commit off, nothing auto-resolved). */
  run(eachBatch: (payload: KafkaJsBatchPayload) => Promise<void>): Promise<void>;
  /** Commits offsets with their metadata; rejects with the client's error (a KafkaError where its code is known). */
  commit(offsets: PartitionOffset[]): Promise<void>;
  /** Commits synchronously, before the client lets partitions go (Confluent's revoke); absent where it cannot. */
  readonly commitNow?: (offsets: PartitionOffset[]) => void;
  /** The group's committed offsets and metadata of `partitions` (an offset below 0, or null: none). */
  committed(partitions: TopicPartition[], timeoutMs: number): Promise<CommittedOffset[]>;
  /** No more assignment changes are reported. */
  unlisten(): void;
  /** Ends the client's run (Confluent's: disconnects it). */
  stop(): Promise<void>;
  /** Disconnects the client (after stop(); nothing more for Confluent's). */
  disconnect(): Promise<void>;
}
