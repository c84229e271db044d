// Partition counts: the table of topics this producer uses (their counts and counters, as many
// as the partitioner keeps), and the metadata requests that fill it: at a topic's first
// message, again while its count is unknown (a topic being created answers with none), every
// metadataRefreshMs, when librdkafka says a partition does not exist, and for the topics
// connect() was told to read up front.

import { InvalidArgTypeError, InvalidOptionError, KafkaError, describe, toKafkaError } from '../../core/errors';
import { delay } from '../../core/time';
import type { ProducerLike } from '../types';
import { ERR__TIMED_OUT } from '../../core/connect';
import { leastRecentQuarter } from '../../core/topic-table';

/**
 * A topic whose count is unknown is asked again after this long, doubling up to RETRY_MAX_MS...
 * Short: a new topic's first messages wait for the count (place/unplaced.ts), and the first request is
 * often the one that makes the cluster create the topic, answered without a count.
 */
const RETRY_FIRST_MS = 2;
const RETRY_MAX_MS = 2000;
/** ...this many times; then only its next message and the periodic refresh ask again. */
const RETRY_LIMIT = 12;
/**
 * While messages wait for the count (place/unplaced.ts, at most 2 s), it is asked at least this often,
 * and without the limit: a topic being created is seen within this long of having partitions.
 */
const RETRY_WAITING_MAX_MS = 25;
/** connect()'s topics: how long it waits between asks while a count is unknown. */
const KNOWN_POLL_MS = 50;

export interface TopicInfo {
  /** Partition count from metadata; 0 while unknown (librdkafka partitions those messages). */
  partitions: number;
  produced: number;
  delivered: number;
  failed: number;
  queueDepth: number[];
  /** When the producer last switched to this topic (`use`): the least recent go beyond maxEntries. */
  lastUsed: number;
  /**
   * Its first messages waited for the count and it did not come in time (place/unplaced.ts): its
   * messages go to librdkafka unassigned until the count is known.
   */
  unassigned: boolean;
}

export interface MetadataHost {
  readonly client: ProducerLike;
  /** Whether requests can be made (the client is connected and the producer not closed). */
  connected(): boolean;
  /** A failed request, a broken answer, a topic beyond maxPartitions. */
  error(err: Error): void;
  readonly refreshMs: number;
  /**
   * Topics kept (their counts and counters; DynamicProducer: topicsKept(maxTopics)): beyond, the
   * least recently used quarter is forgotten at once, so a producer cycling through more topics
   * pays one sort per quarter, not a scan (and a forgotten topic's metadata request) per message.
   */
  readonly maxEntries: number;
  readonly maxPartitions: number;
  /** A topic's count became known (it was unknown): called once the answer is applied. */
  known?(topic: string): void;
  /** Whether messages wait for `topic`'s count (it is then asked again sooner, and without a limit). */
  waiting?(topic: string): boolean;
}

export class Metadata {
  readonly topics = new Map<string, TopicInfo>();
  /** The topic of the previous message and its entry: most messages go where the previous one went. */
  lastName = '';
  last: TopicInfo | undefined;
  private use = 0;
  /** Topics with a request in flight, or a retry waiting: one at a time per topic. */
  private readonly asking = new Set<string>();
  /** Retries of topics whose count is unknown: how many were made. */
  private readonly retries = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private refreshTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly host: MetadataHost) {}

  /** The entry of `topic`, made (and its count asked for) at its first message; it becomes the last used. */
  entry(topic: string): TopicInfo {
    let info = this.topics.get(topic);
    if (info === undefined) {
      if (typeof topic !== 'string' || topic.length === 0) throw new InvalidArgTypeError('topic', 'a non-empty string', topic);
      if (this.topics.size >= this.host.maxEntries) this.forgetLeastRecent();
      info = { partitions: 0, produced: 0, delivered: 0, failed: 0, queueDepth: [], lastUsed: 0, unassigned: false };
      this.topics.set(topic, info);
      this.request(topic);
    }
    // Stamped when the producer switches topics, not per message: the topic in use stays the most recent.
    info.lastUsed = ++this.use;
    this.lastName = topic;
    this.last = info;
    return info;
  }

  /** Forgets the least recently used quarter of the topics (at least one). */
  private forgetLeastRecent(): void {
    for (const victim of leastRecentQuarter([...this.topics])) {
      this.topics.delete(victim);
      this.retries.delete(victim);
      if (this.lastName === victim) {
        this.lastName = '';
        this.last = undefined;
      }
    }
  }

  /**
   * Reads one topic's partition count in the background, once at a time per topic (calls while
   * one is in flight or a retry waits are coalesced into it). While the answer has no count,
   * it asks again, sooner first: a producer that went idle after a new topic's first message
   * still learns the count long before the periodic refresh.
   */
  request(topic: string, force = false): void {
    if (!this.host.connected() || this.stopped || this.asking.has(topic)) return;
    const info = this.topics.get(topic);
    if (info && info.partitions > 0 && !force) return;
    this.asking.add(topic);
    this.refresh(topic)
      .catch((err) => this.host.error(err))
      .finally(() => {
        const now = this.topics.get(topic);
        const tries = this.retries.get(topic) ?? 0;
        const waiting = this.host.waiting?.(topic) === true;
        if (now === undefined || now.partitions > 0 || this.stopped || (tries >= RETRY_LIMIT && !waiting)) {
          this.asking.delete(topic);
          this.retries.delete(topic);
          return;
        }
        this.retries.set(topic, tries + 1);
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.asking.delete(topic);
          this.request(topic);
        }, Math.min(RETRY_FIRST_MS * 2 ** Math.min(tries, 20), waiting ? RETRY_WAITING_MAX_MS : RETRY_MAX_MS, this.host.refreshMs));
        timer.unref();
        this.timers.add(timer);
      });
  }

  /** Re-reads partition counts: of one topic (made an entry if new), or of every topic in the table. */
  refresh(topic?: string, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const query = topic !== undefined ? { topic, timeout: timeoutMs } : { allTopics: true, timeout: timeoutMs };
      this.host.client.getMetadata(query, (err, metadata) => {
        if (err) return reject(toKafkaError(err, `metadata${topic ? ` of ${topic}` : ''}`));
        try {
          this.apply(metadata, topic);
          resolve();
        } catch (e) {
          reject(e);
        }
      });
    });
  }

  private apply(metadata: any, only: string | undefined): void {
    if (!metadata || !Array.isArray(metadata.topics)) throw new KafkaError(`a metadata answer without topics: ${describe(metadata)}`, undefined);
    let known: string[] | undefined;
    for (const t of metadata.topics) {
      if (only !== undefined && t.name !== only) continue;
      // A new entry under the caller's name, not the answer's equal copy: the producer compares
      // each message's topic with the last one's, and two copies of a name compare by their text.
      const info = this.topics.get(t.name) ?? (only !== undefined ? this.entry(only) : undefined);
      if (!info) continue;
      const partitions = Array.isArray(t.partitions) ? t.partitions.length : -1;
      if (partitions < 0 || (partitions > 0 && !t.partitions.every((p: any) => Number.isInteger(p.id) && p.id >= 0 && p.id < partitions))) {
        this.host.error(new KafkaError(`a broken metadata answer for ${t.name}: ${describe(t.partitions)} partitions`, undefined));
        continue;
      }
      // 0 partitions: a topic being created; keep letting librdkafka place its messages.
      if (partitions > this.host.maxPartitions) {
        this.host.error(new InvalidOptionError('options.maxPartitions', `at least ${partitions} (the partitions of ${t.name})`, this.host.maxPartitions));
        continue;
      }
      if (info.partitions === 0 && partitions > 0) (known ??= []).push(t.name);
      info.partitions = partitions;
      if (partitions > 0) info.unassigned = false;
    }
    // Told once the whole answer is in the table (what a topic's held messages do may read it).
    if (known !== undefined && this.host.known !== undefined) for (const name of known) this.host.known(name);
  }

  /**
   * Resolves with `topic`'s partition count once it is known (asking until then, a topic being
   * created answers with none); rejects with a KafkaError (librdkafka's timed-out code) at `deadline`.
   */
  async whenKnown(topic: string, deadline: number): Promise<number> {
    let last: unknown;
    for (;;) {
      const left = deadline - Date.now();
      try {
        await this.refresh(topic, Math.max(1, left));
        last = undefined;
      } catch (err) {
        last = err;
      }
      const partitions = this.topics.get(topic)?.partitions ?? 0;
      if (partitions > 0) return partitions;
      if (Date.now() >= deadline || this.stopped) {
        throw new KafkaError(`connect: no partition count for topic '${topic}' in time${last ? ` (${(last as Error).message})` : ''}`, ERR__TIMED_OUT, last);
      }
      await delay(Math.min(KNOWN_POLL_MS, Math.max(1, deadline - Date.now())));
    }
  }

  /** Starts the periodic refresh of every topic in the table. */
  start(): void {
    this.refreshTimer = setInterval(() => {
      this.refresh().catch((err) => this.host.error(err));
    }, this.host.refreshMs);
    this.refreshTimer.unref();
  }

  /** Stops every timer (disconnect); no request is made after. */
  stop(): void {
    this.stopped = true;
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
