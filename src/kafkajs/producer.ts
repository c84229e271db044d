// Dynamic partitioning for the KafkaJS-compatible API of Confluent's client
// (@confluentinc/kafka-javascript 1.x, `new KafkaJS.Kafka(...).producer()`), which refuses a
// `createPartitioner` (lib/kafkajs/_producer.js) but honours an explicit `partition` per
// message. So the partition is chosen here and set on each message before the producer's own
// send(): connect / send / sendBatch / disconnect, as the producer has them. Partition counts
// come from the producer's own native client (getMetadata, as DynamicProducer reads them), or
// from an admin client given as options.admin (fetchTopicMetadata: DescribeTopics, sent to the
// cluster's controller, which librdkafka's mock cluster never names: docs/producer.md), read on
// a topic's first message and every metadataRefreshMs.

import { EventEmitter } from 'node:events';
import { DynamicPartitioner } from '../partitioner/partitioner';
import { ORDER_NONE } from '../core/abi';
import type { HotKey } from '../partitioner/hot-keys';
import { type DynamicPartitionerOptions, resolveKafkaJsProducerOptions, type KafkaJsProducerSettings } from '../core/options';
import { partitionerCode } from '../core/hash';
import { OrderChains, newProducerId } from '../partitioner/headers';
import { dropForwarded } from './partitioner';
import { InvalidArgTypeError, KafkaError, StateError, checkTimeout, toKafkaError } from '../core/errors';
import { Metrics, type ProducerMetrics, type TopicCounters, registerOrClose, relayPartitionerEvents } from '../producer/metrics';
import { warnIfBothLoaded } from '../core/library';
import { ERR__TIMED_OUT } from '../core/connect';
import { leastRecentQuarter, topicsKept } from '../core/topic-table';
import { UNPLACED_WAIT_MS } from '../producer/place/unplaced';
import { delay, within } from '../core/time';
import { Lifecycle } from '../core/lifecycle';
import type { OtelSpan } from '../core/tracing';
import { ProducerSpans } from '../producer/take/traced-sends';

/** A message as the KafkaJS API takes it (the fields read here; the others are passed on). */
export interface KafkaJsMessage {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number | null;
  headers?: Record<string, unknown>;
  timestamp?: string | number;
  [field: string]: unknown;
}

export interface KafkaJsRecord {
  topic: string;
  messages: KafkaJsMessage[];
  [field: string]: unknown;
}

export interface KafkaJsBatch {
  topicMessages?: KafkaJsRecord[];
  [field: string]: unknown;
}

/** What is used of a KafkaJS-API producer (Confluent's KafkaJS.Producer). */
export interface KafkaJsProducerLike {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  send(record: KafkaJsRecord): Promise<any[]>;
  /** Confluent's: the node-rdkafka-style client, set while connected (what its dependentAdmin() reads too). */
  _getInternalClient?(): unknown;
}

/** What is used of a KafkaJS-API admin client. */
export interface KafkaJsAdminLike {
  connect?(): Promise<void>;
  disconnect?(): Promise<void>;
  fetchTopicMetadata(options: { topics: string[]; timeout?: number }): Promise<Array<{ name: string; partitions: unknown[] }>>;
}

export interface KafkaJsProducerOptions extends DynamicPartitionerOptions {
  /** 'spread' (default): the order header on the messages of spread keys; 'none': never. */
  readonly orderHeaders?: 'spread' | 'none';
  /** Traced sends: 'keep' (default), a message's own `traceparent` stays; 'replace', the producer span's replaces it. */
  readonly traceHeaders?: 'keep' | 'replace';
  /** Partition counts are read again this often (ms; default 30000). */
  readonly metadataRefreshMs?: number;
  /** The timeout of each metadata read (ms; default 5000). */
  readonly metadataTimeoutMs?: number;
  /** A prom-client Registry to expose metrics in. */
  readonly prometheus?: unknown;
  /** 8 bytes naming this producer in order headers (default: random). */
  readonly producerId?: Buffer;
  /** A connected admin client to read partition counts with (default: the producer's own client's metadata). */
  readonly admin?: KafkaJsAdminLike;
}


/** How long a topic whose count could not be read is left to librdkafka before it is asked again (ms). */
const RETRY_UNKNOWN_MS = 1000;
/** A new topic's first sends wait for its count (at most UNPLACED_WAIT_MS), asking again after 2 ms, doubling up to this. */
const WAITING_RETRY_MAX_MS = 25;

/** A topic's counters, and what the table of topics needs besides. */
interface TopicEntry extends TopicCounters {
  /** When a send last used it: the least recent go beyond topicsKept(maxTopics) topics. */
  lastUsed: number;
  /** While its count is not known: when it may be asked again (Date.now() ms). */
  retryAt: number;
  /** Its first sends waited for the count in vain: its messages go to librdkafka until it is known. */
  gaveUp: boolean;
}

export declare interface KafkaJsDynamicProducer {
  on(event: 'hot' | 'cooled', listener: (key: HotKey) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  /** A CallbackError: options.spreadable threw (the key was kept on its own partition). */
  on(event: 'warning', listener: (err: Error) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

/** A KafkaJS-API producer with the partition of each message chosen by a DynamicPartitioner. */
export class KafkaJsDynamicProducer extends EventEmitter {
  readonly producer: KafkaJsProducerLike;
  readonly partitioner: DynamicPartitioner;
  readonly producerId: Buffer;
  private readonly options: KafkaJsProducerSettings;
  private readonly orders: OrderChains;
  private readonly admin: KafkaJsAdminLike | undefined;
  /**
   * The topics sent to (their counts and counters), up to topicsKept(maxTopics) as
   * DynamicProducer keeps them: beyond, the least recently used quarter is forgotten at once.
   */
  private readonly topics = new Map<string, TopicEntry>();
  private readonly kept: number;
  private use = 0;
  /** Reads of a topic's count under way, so that concurrent sends wait for one. */
  private readonly reading = new Map<string, Promise<void>>();
  /** Waits for a new topic's count under way (awaitCount), shared by its sends. */
  private readonly awaiting = new Map<string, Promise<void>>();
  private readonly metrics$ = new Metrics();
  private inflight = 0;
  private timer: NodeJS.Timeout | undefined;
  /**
   * idle → connecting → connected → stopping → stopped (src/core/lifecycle.ts), never running;
   * disconnect() stops it for good, connected or not, and a connect() under way is shared.
   */
  private readonly life = new Lifecycle('stopped', { stopIdle: true, joinConnect: true });
  private unregister: (() => void) | undefined;
  /** OpenTelemetry spans of the messages, from the first send with a tracer provider registered. */
  private tracing: ProducerSpans | undefined;

  constructor(producer: KafkaJsProducerLike, options: KafkaJsProducerOptions = {}) {
    super();
    if (typeof producer !== 'object' || producer === null || typeof producer.send !== 'function' || typeof producer.connect !== 'function' || typeof producer.disconnect !== 'function') {
      throw new InvalidArgTypeError('producer', 'a KafkaJS-API producer (with connect, send and disconnect)', producer);
    }
    const { producer: settings, partitioner } = resolveKafkaJsProducerOptions(options);
    if (settings.admin === undefined && typeof producer._getInternalClient !== 'function') {
      throw new InvalidArgTypeError('producer', "Confluent's KafkaJS producer (with _getInternalClient()), or options.admin", producer);
    }
    this.options = settings;
    this.admin = settings.admin as KafkaJsAdminLike | undefined;
    this.producer = producer;
    // Confluent's KafkaJS producer sets librdkafka's `partitioner` to 'murmur2_random' (Java's
    // and KafkaJS's DefaultPartitioner): messages left to librdkafka land where we would put them.
    this.partitioner = new DynamicPartitioner({ partitioner: 'murmur2_random', ...(partitioner as DynamicPartitionerOptions) });
    this.producerId = settings.producerId ?? newProducerId();
    this.kept = topicsKept(this.partitioner.options.maxTopics);
    this.orders = new OrderChains(this.partitioner, this.producerId, partitionerCode(this.partitioner.options.partitioner));
    relayPartitionerEvents(this.partitioner, this);
    this.unregister = registerOrClose(settings.prometheus, () => this.metrics(), this.partitioner, this.producerId.toString('hex'));
    warnIfBothLoaded();
  }

  /**
   * Connects the producer (unless it is connected already), then waits until the partition
   * counts of `topics` are known, asking again every 100 ms (a topic being created answers with
   * none at first), so that their first messages are placed here. A count not known within
   * `timeoutMs` rejects with a KafkaError (the producer stays connected). Also on a connected one.
   */
  async connect(topics: string[] = [], timeoutMs = 30_000): Promise<void> {
    if (this.closed) throw new StateError('this producer was disconnected');
    if (!Array.isArray(topics) || !topics.every((t) => typeof t === 'string' && t.length > 0)) {
      throw new InvalidArgTypeError('topics', 'an array of topic names', topics);
    }
    checkTimeout('timeoutMs', timeoutMs);
    if (this.life.phase !== 'connected') {
      await this.life.connect(async () => {
        if (!this.producer._getInternalClient?.()) await this.producer.connect();
        this.timer = setInterval(() => this.refresh(), this.options.metadataRefreshMs);
        this.timer.unref();
      });
    }
    const deadline = Date.now() + timeoutMs;
    await Promise.all(topics.map(async (topic) => {
      if (await this.askUntilKnown(topic, deadline, 100, 100)) return;
      if (this.closed) throw new StateError('this producer was disconnected');
      throw new KafkaError(`connect: no partition count for topic '${topic}' in time`, ERR__TIMED_OUT);
    }));
  }

  /** The producer's send(), each message placed here: resolves with its record metadata. */
  async send(record: KafkaJsRecord): Promise<any[]> {
    const spans = this.spans();
    const placed = await this.place(record, 'record', spans);
    return this.forward(placed, () => this.producer.send(placed), spans);
  }

  /** sendBatch(): each topic's messages placed here, sent as the producer's send() calls. */
  async sendBatch(batch: KafkaJsBatch): Promise<any[]> {
    if (typeof batch !== 'object' || batch === null) throw new InvalidArgTypeError('batch', 'an object with topicMessages', batch);
    const { topicMessages, ...rest } = batch;
    if (topicMessages === undefined || topicMessages === null) return [];
    if (!Array.isArray(topicMessages)) throw new InvalidArgTypeError('batch.topicMessages', 'an array of { topic, messages }', topicMessages);
    const placed: KafkaJsRecord[] = [];
    const spans = topicMessages.map(() => this.spans());
    for (let i = 0; i < topicMessages.length; i++) placed.push(await this.place({ ...rest, ...topicMessages[i] }, `batch.topicMessages[${i}]`, spans[i]));
    const results = await Promise.all(placed.map((r, i) => this.forward(r, () => this.producer.send(r), spans[i])));
    return results.flat();
  }

  /**
   * Stops the metadata reads, disconnects the producer and closes the partitioner, for good
   * (after a connect under way). A call while one is under way returns that one's promise.
   */
  disconnect(): Promise<void> {
    return this.life.stop(async () => {
      if (this.timer) clearInterval(this.timer);
      try {
        await this.producer.disconnect();
      } finally {
        this.unregister?.();
        this.partitioner.close();
      }
    });
  }

  /** disconnect() was called: nothing more is sent, no count read. */
  private get closed(): boolean {
    const phase = this.life.phase;
    return phase === 'stopping' || phase === 'stopped';
  }

  /** A snapshot of the per-topic counters, load, hot keys and tracked-key table (as DynamicProducer's). */
  metrics(): ProducerMetrics {
    return this.metrics$.snapshot(this.topics, this.partitioner, this.inflight, 0);
  }

  /**
   * When a tracer provider is registered (OpenTelemetry, src/core/tracing.ts): a call's spans, one
   * per message from place(), each message's trace in its headers, ended by forward().
   */
  private spans(): { tracing: ProducerSpans; list: OtelSpan[] } | undefined {
    this.tracing ??= ProducerSpans.ifActive(this.partitioner, this.options);
    return this.tracing === undefined ? undefined : { tracing: this.tracing, list: [] };
  }

  /** A copy of `record` whose messages carry the partition (and order header) chosen here; with `spans`, a span each. */
  private async place(record: KafkaJsRecord, path: string, spans?: { tracing: ProducerSpans; list: OtelSpan[] }): Promise<KafkaJsRecord> {
    const phase = this.life.phase;
    if (phase !== 'connected') throw new StateError(phase === 'stopping' || phase === 'stopped' ? 'this producer was disconnected' : 'connect() first');
    if (typeof record !== 'object' || record === null) throw new InvalidArgTypeError(path, 'an object with topic and messages', record);
    const { topic, messages } = record;
    if (typeof topic !== 'string' || topic.length === 0) throw new InvalidArgTypeError(`${path}.topic`, 'a non-empty string', topic);
    if (!Array.isArray(messages)) throw new InvalidArgTypeError(`${path}.messages`, 'an array of messages', messages);
    let counters = this.counters(topic);
    if (counters.partitions === 0) {
      // A new topic's sends wait for its count (a topic being created answers without one at
      // first), as DynamicProducer's do (src/producer/place/unplaced.ts), unless each message has its partition;
      // once that wait was in vain, one read.
      const placedHere = messages.some((m) => typeof m !== 'object' || m === null || typeof m.partition !== 'number');
      await (counters.gaveUp || !placedHere ? this.read(topic) : this.awaitCount(topic));
      // Forgotten while it was read (sends to many new topics meanwhile): left to librdkafka this once.
      counters = this.topics.get(topic) ?? counters;
    }
    const n = counters.partitions;
    const out: KafkaJsMessage[] = new Array(messages.length);
    for (let i = 0; i < messages.length; i++) {
      const given = messages[i];
      if (typeof given !== 'object' || given === null) throw new InvalidArgTypeError(`${path}.messages[${i}]`, 'a message object', given);
      // A copy: the producer changes the messages it is given (partition, value, headers).
      const message: KafkaJsMessage = { ...given };
      out[i] = message;
      const span = spans?.tracing.start(topic, message.key, message.headers);
      if (span !== undefined) {
        spans!.list.push(span);
        // Headers that are not an object are left for KafkaJS to refuse.
        const rest = message.headers == null ? {} : typeof message.headers === 'object' ? spans!.tracing.replacing(message.headers) : null;
        if (rest !== null) message.headers = { ...rest, ...Object.fromEntries(spans!.tracing.traceHeaders(span)) };
      }
      // An explicit partition wins, as in KafkaJS's own partitioners; an unknown count leaves it to librdkafka.
      if (typeof message.partition === 'number' || n === 0) {
        dropForwarded(message);
        continue;
      }
      const p = this.partitioner.decide(topic, message.key, n);
      if (span !== undefined) spans!.tracing.decided(span, p);
      const order = this.partitioner.decision.order;
      if (order !== ORDER_NONE && this.options.orderHeaders === 'spread') message.headers = { ...(message.headers ?? {}), ...this.orders.header(order, n, p) };
      else dropForwarded(message);
      message.partition = p;
    }
    return { ...record, messages: out };
  }

  /** Runs the producer's send of `record`, counted per topic; its messages' spans end with it. */
  private async forward(record: KafkaJsRecord, send: () => Promise<any[]>, spans?: { tracing: ProducerSpans; list: OtelSpan[] }): Promise<any[]> {
    const counters = this.counters(record.topic);
    const count = record.messages.length;
    counters.produced += count;
    this.inflight += count;
    try {
      const result = await send();
      counters.delivered += count;
      if (spans !== undefined) for (const span of spans.list) spans.tracing.end(span, undefined);
      return result;
    } catch (err) {
      // The producer's send() rejects on the first failed message: the call counts as failed.
      counters.failed += count;
      if (spans !== undefined) for (const span of spans.list) spans.tracing.end(span, undefined, err);
      throw err;
    } finally {
      this.inflight -= count;
    }
  }

  /**
   * The entry of `topic`, made if new (beyond topicsKept(maxTopics) topics, the least recently
   * used quarter is forgotten first: one sort per quarter, not a scan per new topic); it becomes
   * the most recently used. A forgotten topic's next send reads its count again.
   */
  private counters(topic: string): TopicEntry {
    let c = this.topics.get(topic);
    if (!c) {
      if (this.topics.size >= this.kept) for (const victim of leastRecentQuarter([...this.topics])) this.topics.delete(victim);
      c = { partitions: 0, produced: 0, delivered: 0, failed: 0, queueDepth: [], lastUsed: 0, retryAt: 0, gaveUp: false };
      this.topics.set(topic, c);
    }
    c.lastUsed = ++this.use;
    return c;
  }

  /** Reads a topic's partition count (one read at a time per topic); a failed read is an 'error' event (when listened to). */
  private read(topic: string): Promise<void> {
    const under = this.reading.get(topic);
    if (under) return under;
    if ((this.topics.get(topic)?.retryAt ?? 0) > Date.now()) return Promise.resolve();
    const reading = this.fetch(topic)
      .then((answer) => {
        const t = Array.isArray(answer) ? answer.find((x) => x && x.name === topic) : undefined;
        const n = t && Array.isArray(t.partitions) ? t.partitions.length : 0;
        const c = this.topics.get(topic);
        // A topic forgotten while it was read is read again at its next send.
        if (c && n > 0) {
          c.partitions = n;
          c.retryAt = 0;
          c.gaveUp = false;
        } else {
          this.retryLater(topic);
        }
      }, (err) => {
        this.retryLater(topic);
        // Its messages go to librdkafka meanwhile: an 'error' event for whoever listens, not a failed send.
        if (!this.closed && this.listenerCount('error') > 0) this.emit('error', toKafkaError(err, `metadata of ${topic}`));
      })
      .finally(() => this.reading.delete(topic));
    this.reading.set(topic, reading);
    return reading;
  }

  /**
   * Resolves once `topic`'s count is known, asking again after 2 ms, doubling up to
   * WAITING_RETRY_MAX_MS, or after UNPLACED_WAIT_MS (the topic then gave up: its messages go to
   * librdkafka until its count is known). One wait per topic, shared by its sends, which go on
   * in the order they came.
   */
  private awaitCount(topic: string): Promise<void> {
    const under = this.awaiting.get(topic);
    if (under) return under;
    const waiting = (async () => {
      if (await this.askUntilKnown(topic, Date.now() + UNPLACED_WAIT_MS, 2, WAITING_RETRY_MAX_MS) || this.closed) return;
      const c = this.topics.get(topic);
      if (c) c.gaveUp = true;
    })().finally(() => this.awaiting.delete(topic));
    this.awaiting.set(topic, waiting);
    return waiting;
  }

  /**
   * Reads `topic`'s count until it is known (true), or until `deadline` or a disconnect (false):
   * again after `pauseMs`, doubling up to `maxPauseMs`. A read slower than the time left (an
   * admin's read timing out) is not waited for. connect(topics) and a new topic's first sends.
   */
  private async askUntilKnown(topic: string, deadline: number, pauseMs: number, maxPauseMs: number): Promise<boolean> {
    for (let pause = pauseMs; ; pause = Math.min(2 * pause, maxPauseMs)) {
      this.counters(topic).retryAt = 0;
      await within(this.read(topic), Math.max(0, deadline - Date.now()));
      if ((this.topics.get(topic)?.partitions ?? 0) > 0) return true;
      const left = deadline - Date.now();
      if (this.closed || left <= 0) return false;
      await delay(Math.min(pause, left));
    }
  }

  /** The metadata of `topic`: a list of { name, partitions }. */
  private fetch(topic: string): Promise<Array<{ name: string; partitions: unknown[] }>> {
    const timeout = this.options.metadataTimeoutMs;
    if (this.admin) return this.admin.fetchTopicMetadata({ topics: [topic], timeout });
    const client = this.producer._getInternalClient?.() as { getMetadata?: (o: object, cb: (err: any, m: any) => void) => void } | undefined;
    if (!client || typeof client.getMetadata !== 'function') return Promise.reject(new StateError('the producer is not connected'));
    return new Promise((resolve, reject) => {
      client.getMetadata?.({ topic, timeout }, (err, metadata) => (err ? reject(err) : resolve(Array.isArray(metadata?.topics) ? metadata.topics : [])));
    });
  }

  /** A topic whose count is not known (yet) is left to librdkafka for a while before it is asked again. */
  private retryLater(topic: string): void {
    const c = this.topics.get(topic);
    if (c) c.retryAt = Date.now() + RETRY_UNKNOWN_MS;
  }

  private refresh(): void {
    if (this.closed) return;
    for (const [topic, c] of this.topics) {
      c.retryAt = 0;
      void this.read(topic);
    }
  }
}

/**
 * Wraps a producer of Confluent's KafkaJS-compatible API (`new KafkaJS.Kafka(config).producer()`)
 * so that each message's partition is chosen by a DynamicPartitioner; use its connect / send /
 * sendBatch / disconnect instead of the producer's.
 */
export function wrapKafkaJsProducer(producer: KafkaJsProducerLike, options: KafkaJsProducerOptions = {}): KafkaJsDynamicProducer {
  return new KafkaJsDynamicProducer(producer, options);
}
