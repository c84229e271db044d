// DynamicConsumer's commits (src/consumer/consumer.ts): what may be committed is the
// Dispatcher's safe offset of each partition (below every message held or not yet handled);
// this writes it — periodically and asynchronously, or synchronously on revoke and stop — takes
// the results, and reads the group's committed offsets of the partitions the Resequencer
// awaits (a held message waits for its predecessor there to be handled by another member).
// With handled records (records.ts), each offset goes with its partition's record, and a commit
// goes when only the record changed; the offsets read back come with the others' records.

import type * as Kafka from 'node-rdkafka';
import { toKafkaError } from '../core/errors';
import type { Dispatcher, PartitionOffset } from '../delivery/dispatch';
import type { ConsumedMessage, Resequencer } from '../delivery/resequencer';
import type { HandledRecords } from '../delivery/records';

/** Kafka's codes (librdkafka's alike) of the group's refusals of a commit while it rebalances. */
const REBALANCING = new Set([22 /* ILLEGAL_GENERATION */, 25 /* UNKNOWN_MEMBER_ID */, 27 /* REBALANCE_IN_PROGRESS */]);
/**
 * The codes of a commit that failed for a while only: the group's coordinator moving (Kafka's
 * codes, a broker restarting) or the connection to it lost (librdkafka's local codes).
 */
const TRANSIENT = new Set([
  14 /* COORDINATOR_LOAD_IN_PROGRESS */, 15 /* COORDINATOR_NOT_AVAILABLE */, 16 /* NOT_COORDINATOR */,
  7 /* REQUEST_TIMED_OUT */, 13 /* NETWORK_EXCEPTION */,
  -195 /* __TRANSPORT */, -187 /* __ALL_BROKERS_DOWN */, -185 /* __TIMED_OUT */, -180 /* __WAIT_COORD: its coordinator not known yet */,
]);

/**
 * What a refused commit's code says, for both consumers: the group is rebalancing (a periodic
 * commit is made again silently, one on revoke is a 'warning'), the failure is transient (its
 * coordinator moving, the connection to it lost: a 'warning', made again), or anything else.
 */
export function commitRefusal(code: unknown): 'rebalancing' | 'transient' | 'other' {
  if (typeof code !== 'number') return 'other';
  return REBALANCING.has(code) ? 'rebalancing' : TRANSIENT.has(code) ? 'transient' : 'other';
}

/**
 * An asynchronous commit whose result has not been seen after this long (ms) no longer holds
 * back commitSoon()'s: results come with the client's polls, which a consumer holding its
 * fetching (behind its handler) makes less often, while the commit itself went long before.
 */
const SOON_STUCK_MS = 1000;

/** How long one read of committed offsets may take (ms); a later tick tries again. */
const COMMITTED_READ_TIMEOUT_MS = 5000;

export interface TopicPartitionOffset {
  topic: string;
  partition: number;
  offset?: number;
}

type Message = Kafka.Message & ConsumedMessage;

export class Commits {
  /** A read of committed offsets for the resequencer is under way. */
  private reading = false;
  /** Bumped by reset(): a read made before it is ignored. */
  private generation = 0;
  /** When each asynchronous commit under way was made (their results come back in order). */
  private readonly asyncSince: number[] = [];
  /** A commit asked for by commitSoon() while another was under way: the partitions to commit once it is back. */
  private soon: (() => Iterable<TopicPartitionOffset>) | undefined;

  constructor(
    private readonly client: Kafka.KafkaConsumer,
    private readonly dispatch: Dispatcher<Message>,
    private readonly resequencer: Resequencer<Message>,
    private readonly emit: (event: 'committed' | 'warning' | 'error', value: unknown) => void,
    /** The committed offsets read released messages to the dispatcher. */
    private readonly accepted: () => void,
    /** The handled records committed with the offsets and read back (a client that commits metadata), or none. */
    private readonly records?: HandledRecords<Message>,
  ) {}

  /**
   * Commits the safe offset of each of `partitions`. Periodic commits are asynchronous, and
   * skip partitions whose offset did not move: a synchronous commit blocks the event loop, for
   * seconds while the group rebalances. Those on revoke and stop are synchronous, so that the
   * next owner starts where this consumer left off.
   */
  commit(partitions: Iterable<TopicPartitionOffset>, sync: boolean): void {
    const records = this.records;
    const offsets = this.dispatch.toCommit(partitions, !sync, records && ((t, p, o) => records.textOf(t, p, o)));
    if (offsets.length === 0) return;
    records?.sent(offsets);
    try {
      if (sync) {
        this.client.commitSync(offsets as Kafka.TopicPartitionOffset[]);
        this.emit('committed', offsets);
      } else {
        this.client.commit(offsets as Kafka.TopicPartitionOffset[]);
        this.asyncSince.push(performance.now());
      }
    } catch (err: unknown) {
      this.done(err, offsets, false);
    }
  }

  /**
   * Commits `partitions()` now, or, while an asynchronous commit is under way, as soon as it is
   * back: one at a time, so that a member waiting for this one's record waits for one commit,
   * not for a queue of them at the group's coordinator. A commit not back within
   * SOON_STUCK_MS no longer holds the next one back.
   */
  commitSoon(partitions: () => Iterable<TopicPartitionOffset>): void {
    const oldest = this.asyncSince[0];
    if (oldest !== undefined && performance.now() - oldest < SOON_STUCK_MS) {
      this.soon = partitions;
      return;
    }
    this.soon = undefined;
    this.commit(partitions(), false);
  }

  /** An asynchronous commit's result came back: counted, and a commit that waited for it goes. */
  private asyncDone(): void {
    const since = this.asyncSince.shift();
    if (since !== undefined) this.records?.commitTook(performance.now() - since);
    const soon = this.soon;
    if (soon !== undefined && this.asyncSince.length === 0) {
      this.soon = undefined;
      this.commit(soon(), false);
    }
  }

  /** The result of a commit: 'committed', or 'error' (and the offsets are committed again next time). */
  done(err: any, offsets: TopicPartitionOffset[], periodic: boolean): void {
    if (periodic) this.asyncDone();
    const list = (offsets ?? []).map(({ topic, partition, offset }) => ({ topic, partition, offset })) as PartitionOffset[];
    // The commit result gives metadata back as Buffers: the listeners get offsets alone, as before.
    if (!err) {
      this.emit('committed', list);
      return;
    }
    this.dispatch.notCommitted(list);
    // A commit refused because the group is rebalancing: a periodic one is simply made again
    // next time; one on revoke is a 'warning' (the partitions' next owner reads again from the
    // last committed offset: re-reads, nothing lost).
    const refusal = commitRefusal(err?.code);
    if (refusal === 'rebalancing') {
      if (!periodic) this.emit('warning', toKafkaError(err, 'commit'));
      return;
    }
    // The group's coordinator moving or out of reach (a broker restarted, in a rolling restart
    // too): made again next time, or read again by the next owner; a 'warning', not an 'error'.
    this.emit(refusal === 'transient' ? 'warning' : 'error', toKafkaError(err, 'commit'));
  }

  /**
   * Reads the group's committed offsets of the partitions the resequencer awaits and feeds
   * them to it, at most one read at a time. A failed read is made again next time (reported
   * as 'warning'): meanwhile the message waits, at most maxWaitMs.
   */
  readCommitted(): void {
    if (this.reading) return;
    const awaited = this.resequencer.awaited();
    if (awaited.length === 0) return;
    this.reading = true;
    const generation = this.generation;
    const toppars = awaited.map(({ topic, partition }) => ({ topic, partition }));
    this.records?.reading();
    const since = performance.now();
    this.client.committed(toppars, COMMITTED_READ_TIMEOUT_MS, (err, offsets) => {
      if (generation !== this.generation) return; // stopped meanwhile
      this.reading = false;
      this.records?.readTook(performance.now() - since);
      if (err) {
        this.emit('warning', toKafkaError(err, 'committed'));
        return;
      }
      if (this.records !== undefined) this.dispatch.accept(this.records.read(offsets ?? []));
      else this.dispatch.committedRead(offsets ?? []);
      this.accepted();
    });
  }

  /** The group's committed offsets (and metadata) of `partitions`, for a consumer they come to. */
  committedOf(partitions: Array<{ topic: string; partition: number }>, cb: (err: unknown, offsets?: unknown[]) => void): void {
    this.client.committed(partitions, COMMITTED_READ_TIMEOUT_MS, cb as (err: any, offsets: any) => void);
  }

  /** The run ended: a read under way is ignored. */
  reset(): void {
    this.generation++;
    this.reading = false;
    this.soon = undefined;
    this.asyncSince.length = 0;
  }
}
