// The one port of the ordered-delivery engine (delivery.ts): what a consumer's client does for
// it, implemented once per client — DynamicConsumer's node-rdkafka client (src/consumer/),
// Confluent's and KafkaJS's consumers (src/kafkajs/), @platformatic/kafka's (src/platformatic/).
// The engine commits, reads commits and pauses through it; the adapter reports AssignmentEvents.

import type { CommittedOffset } from './records';
import type { PartitionOffset } from './dispatch-types';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

/** Why a commit is made: periodic (made again next time), on revoke (the next owner reads again), or the last before a stop. */
export type CommitKind = 'periodic' | 'revoke' | 'final';

/**
 * What a refused commit's error says: the group rebalances, a failure for a while only, the member's
 * epoch moved on before the commit reached the broker (KIP-848: the same commit is made again), or anything else.
 */
export type Refusal = 'rebalancing' | 'transient' | 'stale' | 'other';

export interface ConsumerPort {
  /** What the client is, for messages. */
  readonly name: string;
  /** Its commits carry metadata, read back with committed(): the handled records can be shared. */
  readonly carriesRecords: boolean;
  /**
   * After an eager group's rejoin, the kept partitions start anew from their committed offsets
   * ('restart': the client fetches them again) or keep what they hold ('keep': rereads dropped).
   */
  readonly rejoin: 'restart' | 'keep';
  /** A commit that outlives this (ms) no longer holds back the next one (Infinity: never). */
  readonly commitStuckMs: number;
  /**
   * True when a commit made while another is under way lands after it (one connection to the
   * group's coordinator, answered in order): a stop's last commit then goes at once, without
   * waiting for the answer to a periodic one, which such a client may give only when polled.
   * Should the earlier one still land last (retried after a coordinator moved), its offsets are
   * lower and its record theirs: what lies between is read again, nothing is skipped.
   */
  readonly commitsInOrder?: boolean;
  /** Commits offsets (with metadata where carriesRecords); a 'revoke' commit is made before this returns, where the client can. */
  commit(offsets: PartitionOffset[], kind: CommitKind): Promise<void>;
  /** The group's committed offsets (and metadata) of `partitions`. */
  committed(partitions: TopicPartition[], timeoutMs: number): Promise<CommittedOffset[]>;
  refusal(error: unknown): Refusal;
  /** Reads partitions again from the offsets given (after an aborted transaction), where the client can. */
  seek?(offsets: PartitionOffset[]): Promise<void>;
  /** Stops (or starts again) fetching `partitions`, where the client can: while their previous owner's record is read. */
  pause?(partitions: TopicPartition[]): void;
  resume?(partitions: TopicPartition[]): void;
  /** Ends the client's run (disconnect, stop, close the stream). */
  end(): Promise<void>;
}

/** The assignment changes an adapter reports (Assignment implements them). */
export interface AssignmentEvents {
  /** Partitions came to this consumer. */
  assigned(partitions: TopicPartition[]): void;
  /**
   * Partitions leave. With `letGo`, the client waits: the engine lets the calls of theirs under
   * way end, commits, then calls it; without, the commit is made before this returns.
   */
  revoked(partitions: TopicPartition[], letGo?: () => void): void;
  /** An eager group rebalances: nothing new goes out of partitions that may leave, what is safe is committed. */
  rebalancing(): void;
  /** The group was joined (again): `partitions` are this consumer's now, and only they. */
  joined(partitions: TopicPartition[]): void;
}

/** What a failed transaction commit leaves to do (TransactionErrorKind): call again, abort and go on, or nothing more. */
export type TransactionFailure = 'retriable' | 'abortable' | 'fatal';

/**
 * Exactly once (a consumer's `transaction` option): the consumer's commits go into a producer's
 * transaction, with what its handlers produced through that producer (transacted.ts).
 */
export interface TransactionSink {
  /** How often the open transaction commits (ms). */
  readonly intervalMs: number;
  /** From now until release(), what handlers produce waits for the next transaction (the calls go on meanwhile). */
  hold(): void;
  release(): void;
  /** Sends `offsets` (each with its record) to the open transaction and commits it; `next`: then begins the next. */
  commit(offsets: PartitionOffset[], next: boolean): Promise<void>;
  /** Aborts the open transaction; `next`: then begins the next. */
  abort(next: boolean): Promise<void>;
  /** Begins a transaction, unless one is open. */
  begin(): Promise<void>;
  /** What a failure of commit() or abort() is. */
  failure(error: unknown): TransactionFailure;
}

export type { DeadLetterHeaders, DeadLetterSink } from './dead-letters';
