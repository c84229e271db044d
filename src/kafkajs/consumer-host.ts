// The port (src/delivery/port.ts) of a KafkaJS-API consumer, as KafkaJsDynamicConsumer (consumer.ts) drives it: what both clients do
// alike here, what differs in one host per client, Confluent's (host-confluent.ts) and KafkaJS 2.x's (host-kafkajs.ts).

import { toKafkaError } from '../core/errors';
import { commitRefusal } from '../delivery/commits';
import type { PartitionOffset } from '../delivery/dispatch';
import type { AssignmentEvents, CommitKind, ConsumerPort, Refusal, TopicPartition } from '../delivery/port';
import type { CommittedOffset } from '../delivery/records';
import type { KafkaJsBatchPayload, KafkaJsSubscription } from './consumer-types';

export type { TopicPartition };

/** The changes a host reports: the group's (the engine's Assignment), and a crash of the client's run. */
export interface HostEvents extends AssignmentEvents {
  /** The client's run ended for good by itself (a crash it does not restart from). */
  crashed(error: unknown): void;
}

export abstract class ConsumerHost implements ConsumerPort {
  abstract readonly name: string;
  /** After stop() the consumer may connect and run again (KafkaJS's), or is done (Confluent's: stop() disconnects it). */
  abstract readonly runsAgain: boolean;
  readonly carriesRecords = true;
  /** KafkaJS's eager protocol fetches every partition again from its committed offset after a join. */
  readonly rejoin = 'restart' as const;
  readonly commitStuckMs = Number.POSITIVE_INFINITY;
  /** Connects the client (unless connected) and checks it, then reports its changes to `events`. */
  abstract connect(events: HostEvents): Promise<void>;
  abstract subscribe(subscription: KafkaJsSubscription): Promise<void>;
  /** Starts the client's run with `eachBatch` (auto-commit off, nothing auto-resolved). */
  abstract run(eachBatch: (payload: KafkaJsBatchPayload) => Promise<void>): Promise<void>;
  /** Commits offsets with their records; rejects with the client's error. */
  protected abstract commitOffsets(offsets: PartitionOffset[]): Promise<void>;
  /** Commits synchronously, before the client lets partitions go (Confluent's revoke); absent where it cannot. */
  protected commitNow?(offsets: PartitionOffset[]): void;
  abstract committed(partitions: TopicPartition[], timeoutMs: number): Promise<CommittedOffset[]>;
  /** No more changes are reported. */
  abstract unlisten(): void;
  /** Ends the client's run (Confluent's: disconnects it). */
  abstract stop(): Promise<void>;
  /** Disconnects the client (after stop(); nothing more for Confluent's). */
  abstract disconnect(): Promise<void>;

  commit(offsets: PartitionOffset[], kind: CommitKind): Promise<void> {
    if (kind !== 'revoke' || this.commitNow === undefined) return this.commitOffsets(offsets);
    try {
      this.commitNow(offsets);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  refusal(error: unknown): Refusal {
    return commitRefusal(toKafkaError(error, 'commit').librdkafkaCode);
  }

  end(): Promise<void> {
    return this.stop();
  }
}
