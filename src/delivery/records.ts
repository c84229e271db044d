// A consumer's handled records (handled-record.ts) on a client whose commits carry metadata
// (DynamicConsumer's native engine, the KafkaJS-API consumers): made for commits.ts from the
// ledger and what the Resequencer holds, and read back from other members and previous owners.
// Other members' records release what waits for them; a previous owner's keeps what it handled
// from being handed out again. Their costs go to metrics().

import type { ConsumedMessage, Release, Resequencer } from './resequencer';
import type { Dispatcher } from './dispatch';
import { decodeRecord, fitRecord, RECORD_MAX_CHARS } from './handled-record';

/** With groupOrder 'wait', how often the records of the partitions waited for are read (ms, one read at a time). */
export const RECORD_READ_MS = 5;
/** With groupOrder 'wait', how soon after a marked message is handled its record is committed (ms): a member may wait for it. */
export const RECORD_COMMIT_MS = 2;
/** ...or this many times what making records took since the last such commit: large records made that often would cost too much (docs/performance.md). */
const RECORD_COST_RATIO = 10;

/** What a committed offset read back holds (node-rdkafka's shape, with the native engine's metadata). */
export interface CommittedOffset {
  topic: string;
  partition: number;
  offset?: unknown;
  metadata?: unknown;
  error?: unknown;
}

/** What handled records cost and did, for metrics().records. */
export interface RecordCounts {
  /** Records committed (with an offset that went to the broker), their characters in all and the most of one. */
  committed: number;
  committedChars: number;
  committedCharsMax: number;
  /** Records shortened to fit the broker's limit (offsets told up to a point, then sequences: fitRecord()). */
  tooLarge: number;
  /** Reads of other members' records (one call to the group coordinator each), and the records they gave. */
  reads: number;
  recordsRead: number;
  /** The time the reads took, in all and the longest (ms): what a message waiting for another member's record waits on. */
  readMs: number;
  readMsMax: number;
  /** Asynchronous commits with a record, their time in all and the longest (ms): what a member waiting for this one's record waits on. */
  commits: number;
  commitMs: number;
  commitMsMax: number;
  /** Commit metadata that was not a record of ours (another client's, or garbled): ignored. */
  foreign: number;
  /** Messages not handed out again because a partition's previous owner had handled them. */
  skipped: number;
  /** Messages fetched of a partition before its previous owner's record was read (before its pause took hold): kept back until it was. */
  fetchedEarly: number;
}

export class HandledRecords<M extends ConsumedMessage> {
  private readonly counts = { committed: 0, committedChars: 0, committedCharsMax: 0, tooLarge: 0, reads: 0, recordsRead: 0, readMs: 0, readMsMax: 0, commits: 0, commitMs: 0, commitMsMax: 0, foreign: 0, fetchedEarly: 0 };

  private warnedTooLarge = false;
  private warnedForeign = false;
  /** The time textOf() took since soonDelay() was last asked (ms). */
  private making = 0;

  constructor(
    private readonly dispatch: Dispatcher<M>,
    private readonly resequencer: Resequencer<M>,
    /** One warning (an Error with a `code`): a record too large, foreign metadata. */
    private readonly warn: (err: Error) => void,
    private readonly maxChars = RECORD_MAX_CHARS,
  ) {}

  /** Records shortened so far (a transaction commits none: transacted.ts). */
  get shortened(): number {
    return this.counts.tooLarge;
  }

  /** The text to commit with `offset` for a partition this consumer owns: its record, shortened when it would not fit (fitRecord()). */
  textOf(topic: string, partition: number, offset: number): string {
    const began = performance.now();
    try {
      return this.text(topic, partition, offset);
    } finally {
      this.making += performance.now() - began;
    }
  }

  /** How long to wait before committing records soon (RECORD_COMMIT_MS, or RECORD_COST_RATIO times what they took since last asked). */
  soonDelay(): number {
    const delay = Math.max(RECORD_COMMIT_MS, RECORD_COST_RATIO * this.making);
    this.making = 0;
    return delay;
  }

  private text(topic: string, partition: number, offset: number): string {
    const [unhandled, marked] = this.dispatch.ledger.unhandledOf(topic, partition);
    const record = this.resequencer.recordOf(topic, partition, offset, unhandled, marked);
    const { text, shortened } = fitRecord(record, this.maxChars);
    if (shortened) {
      this.counts.tooLarge++;
      if (!this.warnedTooLarge) {
        this.warnedTooLarge = true;
        this.warn(Object.assign(new Error(`the handled record of ${topic} [${partition}] would pass the broker's ${this.maxChars} characters ` +
          `(${record.unhandled.length} offsets unhandled above ${offset}): committed shortened to what fits (a next owner of the ` +
          'partition may hand out again some of what was handled above the offset); warned once'), { code: 'ERR_KDP_RECORD_TOO_LARGE' }));
      }
    }
    return text;
  }

  /** Offsets about to be committed: those with a record count as records committed (textOf() is asked also for commits that do not go). */
  sent(offsets: ReadonlyArray<{ metadata?: string }>): void {
    for (const { metadata } of offsets) {
      if (metadata === undefined) continue;
      this.counts.committed++;
      this.counts.committedChars += metadata.length;
      this.counts.committedCharsMax = Math.max(this.counts.committedCharsMax, metadata.length);
    }
  }

  /** A read of other members' committed offsets is made. */
  reading(): void {
    this.counts.reads++;
  }

  /** `count` messages came before their partition's inherited record was read (kept back by Assignment). */
  fetchedEarly(count = 1): void {
    this.counts.fetchedEarly += count;
  }

  /** An asynchronous commit came back (taken or refused) `ms` after it was made. */
  commitTook(ms: number): void {
    this.counts.commits++;
    this.counts.commitMs += ms;
    this.counts.commitMsMax = Math.max(this.counts.commitMsMax, ms);
  }

  /** A read came back (with offsets or an error) `ms` after it was made. */
  readTook(ms: number): void {
    this.counts.readMs += ms;
    this.counts.readMsMax = Math.max(this.counts.readMsMax, ms);
  }

  /** Other members' committed offsets and records, read back: what they show handled goes (entries with an error or none skipped). */
  read(offsets: readonly CommittedOffset[]): Release<M>[] {
    const out: Release<M>[] = [];
    for (const tp of offsets) {
      const offset = this.offsetOf(tp);
      if (offset === undefined) continue;
      const record = this.recordOf(tp, offset);
      if (record !== null) {
        this.counts.recordsRead++;
        out.push(...this.resequencer.setRecord(tp.topic, tp.partition, record));
      } else {
        // Committed without a record: a predecessor of unknown offset there cannot be told handled.
        out.push(...this.resequencer.setCommitted(tp.topic, tp.partition, offset));
        out.push(...this.resequencer.withoutRecord(tp.topic, tp.partition));
      }
    }
    return out;
  }

  /** The records partitions coming here were committed with, given to the resequencer before their first message. */
  inherit(offsets: readonly CommittedOffset[]): Release<M>[] {
    const out: Release<M>[] = [];
    for (const tp of offsets) {
      const offset = this.offsetOf(tp);
      const record = offset === undefined ? null : this.recordOf(tp, offset);
      if (record !== null) out.push(...this.resequencer.inherit(tp.topic, tp.partition, record));
    }
    return out;
  }

  private offsetOf(tp: CommittedOffset): number | undefined {
    return tp.error || !(typeof tp.offset === 'number' && Number.isSafeInteger(tp.offset) && tp.offset >= 0) ? undefined : tp.offset;
  }

  /** The record of an entry, or null; metadata that is not one of ours is counted and warned of once. */
  private recordOf(tp: CommittedOffset, offset: number) {
    const metadata = tp.metadata;
    if (metadata === undefined || metadata === null || (metadata as { length?: number }).length === 0) return null;
    const record = decodeRecord(metadata, offset);
    if (record === null) {
      this.counts.foreign++;
      if (!this.warnedForeign) {
        this.warnedForeign = true;
        this.warn(Object.assign(new Error(`the commit metadata of ${tp.topic} [${tp.partition}] is not a handled record of this ` +
          'package (another client\'s, or another format): ignored, its committed offset alone is used; warned once'), { code: 'ERR_KDP_FOREIGN_RECORD' }));
      }
    }
    return record;
  }

  metrics(): RecordCounts {
    return { ...this.counts, skipped: this.resequencer.skipped };
  }
}
