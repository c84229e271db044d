// A consumer's commits, for every client (through its port, port.ts): each partition's safe
// offset (ledger.ts), below every message held or unhandled, with its handled record where the
// client carries metadata (records.ts). It commits periodically (one at a time: commit-turns.ts),
// on revoke and before a stop, and reads back the group's commits the Resequencer awaits.

import { type KafkaError, toKafkaError } from '../core/errors';
import { CommitTurns } from './commit-turns';
import type { Dispatcher, PartitionOffset } from './dispatch';
import type { CommittedOffset, HandledRecords } from './records';
import type { ConsumedMessage, Resequencer } from './resequencer';
import type { CommitKind, ConsumerPort, Refusal, TopicPartition } from './port';
import type { Transacted } from './transacted';

/** Kafka's codes (librdkafka's alike) of the group's refusals of a commit while it rebalances. */
const REBALANCING = new Set([
  22 /* ILLEGAL_GENERATION */, 25 /* UNKNOWN_MEMBER_ID */, 27 /* REBALANCE_IN_PROGRESS */, 110 /* FENCED_MEMBER_EPOCH (KIP-848: the member joins again) */,
]);
/** The codes of a commit that failed for a while only: the coordinator moving, or the connection to it lost (librdkafka's local codes). */
const TRANSIENT = new Set([
  14 /* COORDINATOR_LOAD_IN_PROGRESS */, 15 /* COORDINATOR_NOT_AVAILABLE */, 16 /* NOT_COORDINATOR */,
  7 /* REQUEST_TIMED_OUT */, 13 /* NETWORK_EXCEPTION */,
  -195 /* __TRANSPORT */, -187 /* __ALL_BROKERS_DOWN */, -185 /* __TIMED_OUT */, -180 /* __WAIT_COORD */,
]);

/**
 * KIP-848: the commit carried a member epoch the coordinator has moved past. librdkafka 2.12 makes
 * no application commit again on it (rdkafka_cgrp.c, rd_kafka_cgrp_op_handle_OffsetCommit: "Don't
 * retry manual commits"), it only heartbeats at once, and that answer brings the epoch.
 */
const STALE_MEMBER_EPOCH = 113;
/** How often a commit refused for a stale member epoch is made again, and how long apart (ms). */
const STALE_RETRIES = 5;
const STALE_RETRY_MS = 200;

/** What a refused commit's Kafka (or librdkafka) code says. */
export function commitRefusal(code: unknown): Refusal {
  if (typeof code !== 'number') return 'other';
  if (code === STALE_MEMBER_EPOCH) return 'stale';
  return REBALANCING.has(code) ? 'rebalancing' : TRANSIENT.has(code) ? 'transient' : 'other';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How long one read of committed offsets may take (ms); a later tick tries again. */
export const COMMITTED_READ_TIMEOUT_MS = 5000;

/** What the commits report to the engine that owns them. */
export interface CommitHooks {
  /** The run is on (periodic work and reads' answers count only then). */
  running(): boolean;
  /** An eager group is rejoining: periodic commits wait (a refusal would make the client join again). */
  rejoining(): boolean;
  emit(event: 'committed', offsets: PartitionOffset[]): void;
  emit(event: 'warning' | 'error', error: KafkaError): void;
  hasErrorListener(): boolean;
  /** Messages were released to the dispatcher by a read's answer. */
  released(): void;
}

export class Commits<M extends ConsumedMessage> {
  private readonly turns: CommitTurns;
  /** A read of committed offsets is under way. */
  private reading = false;
  /** Bumped by reset(): an answer to a read made before it is ignored. */
  private generation = 0;
  /** Commits made again after a stale member epoch's refusal (KIP-848). */
  staleRetries = 0;
  /** With a consumer's `transaction` option: every commit goes into the producer's transaction (transacted.ts). */
  transacted: Transacted | undefined;

  constructor(
    private readonly port: ConsumerPort,
    private readonly dispatch: Dispatcher<M>,
    private readonly resequencer: Resequencer<M>,
    private readonly records: HandledRecords<M> | undefined,
    private readonly hooks: CommitHooks,
  ) {
    this.turns = new CommitTurns(port.commitStuckMs);
  }

  /** The offsets to commit for `partitions`, each with its record (`onlyMoved`: those whose offset or record changed). */
  offsetsOf(partitions: Iterable<TopicPartition>, onlyMoved: boolean): PartitionOffset[] {
    const records = this.records;
    const offsets = this.dispatch.ledger.toCommit(partitions, onlyMoved, records && ((t, p, o) => records.textOf(t, p, o)));
    records?.sent(offsets);
    return offsets;
  }

  /** A periodic commit, or one soon after a marked message was handled: one at a time (commit-turns.ts). */
  commitHandled(partitions: () => Iterable<TopicPartition>): void {
    this.turns.take(() => {
      if (!this.hooks.running() || this.hooks.rejoining()) return undefined;
      const offsets = this.offsetsOf(partitions(), true);
      if (offsets.length === 0) return undefined;
      const since = performance.now();
      return this.commit(offsets, 'periodic').finally(() => this.records?.commitTook(performance.now() - since));
    });
  }

  /** Resolves once no periodic commit holds the next one back. */
  idle(): Promise<void> {
    return this.turns.idle();
  }

  /**
   * Commits `offsets`: 'committed' and true, or they go again next time. One refused for a stale
   * member epoch is made again (STALE_RETRIES), then counts as transient. A refusal while the group
   * rebalances is silent when periodic, else a 'warning', as is a transient one; any other is an
   * 'error' (a 'warning' without a listener), or thrown by the final commit.
   */
  async commit(offsets: PartitionOffset[], kind: CommitKind): Promise<boolean> {
    if (this.transacted !== undefined) {
      // The transaction's offsets are read behind its barrier, of every partition still this consumer's to commit.
      const committed = await this.transacted.end(kind);
      if (committed !== undefined) this.hooks.emit('committed', withoutRecords(committed));
      return committed !== undefined;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await this.port.commit(offsets, kind);
        this.hooks.emit('committed', withoutRecords(offsets));
        return true;
      } catch (err) {
        const refusal = this.port.refusal(err);
        if (refusal === 'stale' && attempt < STALE_RETRIES && (kind !== 'periodic' || this.hooks.running())) {
          this.staleRetries++;
          await sleep(STALE_RETRY_MS);
          continue;
        }
        return this.refused(offsets, kind, err, refusal === 'stale' ? 'transient' : refusal);
      }
    }
  }

  /** A commit refused for good: its offsets go again next time; said as commit() says. */
  private refused(offsets: PartitionOffset[], kind: CommitKind, err: unknown, refusal: Refusal): boolean {
    this.dispatch.ledger.notCommitted(offsets);
    const error = toKafkaError(err, kind === 'revoke' ? 'commit on revoke' : 'commit');
    if (refusal === 'rebalancing' && kind === 'periodic') return false;
    if (refusal !== 'other') this.hooks.emit('warning', error);
    else if (kind === 'final') throw error;
    else this.hooks.emit(this.hooks.hasErrorListener() ? 'error' : 'warning', error);
    return false;
  }

  /** Reads the group's commits of the partitions the resequencer awaits, one read at a time (a failure is a 'warning'). */
  readCommitted(): void {
    if (this.reading || !this.hooks.running()) return;
    const awaited = this.resequencer.awaited();
    if (awaited.length === 0) return;
    this.reading = true;
    const generation = this.generation;
    this.records?.reading();
    const since = performance.now();
    this.port.committed(awaited, COMMITTED_READ_TIMEOUT_MS).then((offsets) => {
      if (generation !== this.generation || !this.hooks.running()) return;
      this.records?.readTook(performance.now() - since);
      if (this.records !== undefined) this.dispatch.accept(this.records.read(offsets));
      else this.dispatch.committedRead(offsets);
      this.hooks.released();
    }, (err) => {
      if (generation === this.generation && this.hooks.running()) this.hooks.emit('warning', toKafkaError(err, 'committed'));
    }).finally(() => {
      if (generation === this.generation) this.reading = false;
    });
  }

  /** The committed offsets and records of `partitions` (coming to this consumer). */
  committedOf(partitions: TopicPartition[]): Promise<CommittedOffset[]> {
    return this.port.committed(partitions, COMMITTED_READ_TIMEOUT_MS);
  }

  /** The run ended: an answer to a read under way is ignored. */
  reset(): void {
    this.generation++;
    this.reading = false;
  }
}

/** The offsets as the 'committed' listeners get them: without the records committed with them. */
function withoutRecords(offsets: readonly PartitionOffset[]): PartitionOffset[] {
  return offsets.map(({ topic, partition, offset }) => ({ topic, partition, offset }));
}
