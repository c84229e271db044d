// Dynamic partitioning for @platformatic/kafka's producer (`new Producer(...)`, 2.x) through its
// send(): each message's partition is chosen here and set explicitly, with the order header on
// the messages of spread keys, which its partitioner hook cannot write (it runs after the
// headers are serialized: partitioner.ts beside it). Partition counts come from the producer's
// own metadata (producer.metadata({ topics })), read on a topic's first send and every
// metadataRefreshMs. The producer object is given: nothing of @platformatic/kafka (an ES module,
// Node >= 22) is imported. The order header's handling: producer-headers.ts.

import { EventEmitter } from 'node:events';
import { DynamicPartitioner } from '../partitioner/partitioner';
import { ORDER_NONE } from '../core/abi';
import type { HotKey } from '../partitioner/hot-keys';
import { type DynamicPartitionerOptions, type PlatformaticProducerSettings, resolvePlatformaticProducerOptions } from '../core/options';
import { partitionerCode } from '../core/hash';
import { OrderChains, newProducerId } from '../partitioner/headers';
import { InvalidArgTypeError, KafkaError, StateError, checkTimeout, toKafkaError } from '../core/errors';
import { Metrics, type ProducerMetrics, type TopicCounters, registerOrClose, relayPartitionerEvents } from '../producer/metrics';
import { ERR__TIMED_OUT } from '../core/connect';
import { leastRecentQuarter, topicsKept } from '../core/topic-table';
import { delay, within } from '../core/time';
import { unplacedPartition, type PlatformaticMetadataLike } from './partitioner';
import { type PlatformaticHeaders, withHeader, withOrderHeader, withoutOrderHeader, serializedKey } from './producer-headers';
import type { OtelSpan } from '../core/tracing';
import { ProducerSpans } from '../producer/take/traced-sends';

/** A message as @platformatic/kafka's send() takes it (the fields read here; the others are passed on). */
export interface PlatformaticMessage {
  topic: string;
  key?: unknown;
  value?: unknown;
  partition?: number;
  headers?: PlatformaticHeaders;
  [field: string]: unknown;
}

/** send()'s options: the messages, and the producer's per-send options (acks, compression...), passed on. */
export interface PlatformaticSendOptions {
  messages: PlatformaticMessage[];
  [option: string]: unknown;
}

/** What is used of @platformatic/kafka's Producer. */
export interface PlatformaticProducerLike {
  send(options: PlatformaticSendOptions): Promise<any>;
  metadata(options: { topics: string[]; forceUpdate?: boolean }): Promise<PlatformaticMetadataLike>;
  close(force?: boolean): Promise<void>;
  /** Runs the producer's key serializer (and the partitioner given): keys that are neither strings nor Buffers. */
  getSendTopicPartitions?(options: { messages: PlatformaticMessage[]; partitioner: (m: unknown, key: Buffer | undefined) => number }): unknown;
}

export interface PlatformaticProducerOptions extends Omit<DynamicPartitionerOptions, 'partitioner'> {
  /** Kafka's murmur2 ('murmur2_random', the default: Java's; 'murmur2': null keys hash as empty, as librdkafka's). */
  readonly partitioner?: 'murmur2_random' | 'murmur2';
  /** 'spread' (default): the order header on the messages of spread keys; 'none': never. */
  readonly orderHeaders?: 'spread' | 'none';
  /** Traced sends: 'keep' (default), a message's own `traceparent` stays; 'replace', the producer span's replaces it. */
  readonly traceHeaders?: 'keep' | 'replace';
  /**
   * What the order header's name and value are handed to the producer's header serializers as:
   * 'string' (default: stringSerializers, or any serializer of strings), 'buffer' (no header
   * serializers: the producer writes Buffers as they are; headers then become a Map).
   */
  readonly headerType?: 'string' | 'buffer';
  /** Partition counts are read again this often (ms; default 30000). */
  readonly metadataRefreshMs?: number;
  /** How long a metadata read is waited for (ms; default 5000). */
  readonly metadataTimeoutMs?: number;
  /** A prom-client Registry to expose metrics in. */
  readonly prometheus?: unknown;
  /** 8 bytes naming this producer in order headers (default: random). */
  readonly producerId?: Buffer;
}

/** How long a topic whose count could not be read is partitioned as Kafka does before it is asked again (ms). */
const RETRY_UNKNOWN_MS = 1000;

interface TopicEntry extends TopicCounters {
  /** When a send last used it: the least recent go beyond topicsKept(maxTopics) topics. */
  lastUsed: number;
  /** While its count is not known: when it may be asked again (Date.now() ms). */
  retryAt: number;
  /** This send's messages of the topic (counted per send). */
  sending: number;
}

export declare interface PlatformaticDynamicProducer {
  on(event: 'hot' | 'cooled', listener: (key: HotKey) => void): this;
  /** A KafkaError: a partition count could not be read (the topic's messages are partitioned as Kafka does meanwhile). */
  on(event: 'error', listener: (err: Error) => void): this;
  /** A CallbackError: options.spreadable threw (the key was kept on its own partition). */
  on(event: 'warning', listener: (err: Error) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

/** @platformatic/kafka's producer with the partition (and order header) of each message chosen by a DynamicPartitioner. */
export class PlatformaticDynamicProducer extends EventEmitter {
  readonly producer: PlatformaticProducerLike;
  readonly partitioner: DynamicPartitioner;
  readonly producerId: Buffer;
  private readonly settings: PlatformaticProducerSettings;
  private readonly orders: OrderChains;
  private readonly nullKeysHashed: boolean;
  private readonly topics = new Map<string, TopicEntry>();
  private readonly kept: number;
  private use = 0;
  /** Reads of a topic's count under way, shared by the sends that wait for it. */
  private readonly reading = new Map<string, Promise<void>>();
  private readonly metrics$ = new Metrics();
  private inflight = 0;
  private roundRobin = 0;
  private readonly timer: NodeJS.Timeout;
  private closing: Promise<void> | undefined;
  /** OpenTelemetry spans of the messages, from the first send with a tracer provider registered. */
  private tracing: ProducerSpans | undefined;
  private readonly unregister: (() => void) | undefined;

  constructor(producer: PlatformaticProducerLike, options: PlatformaticProducerOptions = {}) {
    super();
    if (typeof producer !== 'object' || producer === null || typeof producer.send !== 'function' || typeof producer.metadata !== 'function' || typeof producer.close !== 'function') {
      throw new InvalidArgTypeError('producer', "@platformatic/kafka's Producer (with send, metadata and close)", producer);
    }
    const { producer: settings, partitioner } = resolvePlatformaticProducerOptions(options);
    this.settings = settings;
    this.producer = producer;
    this.partitioner = new DynamicPartitioner({ ...(partitioner as DynamicPartitionerOptions), partitioner: settings.partitioner });
    this.nullKeysHashed = settings.partitioner === 'murmur2';
    this.producerId = settings.producerId ?? newProducerId();
    this.kept = topicsKept(this.partitioner.options.maxTopics);
    this.orders = new OrderChains(this.partitioner, this.producerId, partitionerCode(settings.partitioner));
    relayPartitionerEvents(this.partitioner, this);
    this.unregister = registerOrClose(settings.prometheus, () => this.metrics(), this.partitioner, this.producerId.toString('hex'));
    this.timer = setInterval(() => this.refresh(), settings.metadataRefreshMs);
    this.timer.unref();
  }

  /**
   * Waits until the partition counts of `topics` are known, asking every 100 ms (a topic being
   * created answers without one at first), so that their first messages are placed here; a count
   * not known within `timeoutMs` rejects with a KafkaError. Optional: a send to a new topic
   * reads its count first (once; partitioned as Kafka does when that read fails).
   */
  async connect(topics: string[] = [], timeoutMs = 30_000): Promise<void> {
    if (this.closing) throw new StateError('this producer was closed');
    if (!Array.isArray(topics) || !topics.every((t) => typeof t === 'string' && t.length > 0)) {
      throw new InvalidArgTypeError('topics', 'an array of topic names', topics);
    }
    checkTimeout('timeoutMs', timeoutMs);
    const deadline = Date.now() + timeoutMs;
    await Promise.all(topics.map(async (topic) => {
      for (;;) {
        this.counters(topic).retryAt = 0;
        await within(this.read(topic), Math.max(0, deadline - Date.now()));
        if ((this.topics.get(topic)?.partitions ?? 0) > 0) return;
        if (this.closing) throw new StateError('this producer was closed');
        if (Date.now() + 100 > deadline) throw new KafkaError(`connect: no partition count for topic '${topic}' in time`, ERR__TIMED_OUT);
        await delay(100);
      }
    }));
  }

  /**
   * The producer's send(), each message placed here (a copy of it: the caller's is not changed);
   * resolves with the producer's result, or rejects with its error.
   */
  async send(options: PlatformaticSendOptions): Promise<any> {
    if (this.closing) throw new StateError('this producer was closed');
    if (typeof options !== 'object' || options === null || !Array.isArray(options.messages)) {
      throw new InvalidArgTypeError('options', 'an object with messages (an array)', options);
    }
    const messages = options.messages;
    // A new topic's count is read first (one read per topic, shared by concurrent sends).
    let unknown: Promise<void>[] | undefined;
    let last = '';
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      if (typeof m !== 'object' || m === null) throw new InvalidArgTypeError(`options.messages[${i}]`, 'a message object', m);
      const topic = m.topic;
      if (topic === last) continue;
      if (typeof topic !== 'string' || topic.length === 0) throw new InvalidArgTypeError(`options.messages[${i}].topic`, 'a non-empty string', topic);
      last = topic;
      const c = this.counters(topic);
      if (c.partitions === 0 && c.retryAt <= Date.now()) (unknown ??= []).push(this.read(topic));
    }
    if (unknown) await within(Promise.all(unknown), this.settings.metadataTimeoutMs);
    if (this.closing) throw new StateError('this producer was closed');
    // The topics of this send, and their messages in it.
    const sending: TopicEntry[] = [];
    let placed: PlatformaticMessage[];
    this.tracing ??= ProducerSpans.ifActive(this.partitioner, this.settings);
    const spans: OtelSpan[] | undefined = this.tracing === undefined ? undefined : [];
    try {
      placed = this.place(messages, sending, spans);
    } catch (err) {
      for (const span of spans ?? []) this.tracing!.end(span, undefined, err);
      // A key the producer's serializer refused: nothing was sent, nothing counted.
      for (const c of sending) c.sending = 0;
      throw err;
    }
    const counts = sending.map((c) => c.sending);
    for (const c of sending) {
      c.produced += c.sending;
      c.sending = 0;
    }
    this.inflight += messages.length;
    try {
      const result = await this.producer.send({ ...options, messages: placed });
      for (let i = 0; i < sending.length; i++) sending[i].delivered += counts[i];
      for (const span of spans ?? []) this.tracing!.end(span, undefined);
      return result;
    } catch (err) {
      // The producer's send() rejects as a whole: its messages count as failed.
      for (let i = 0; i < sending.length; i++) sending[i].failed += counts[i];
      for (const span of spans ?? []) this.tracing!.end(span, undefined, err);
      throw err;
    } finally {
      this.inflight -= messages.length;
    }
  }

  /**
   * Copies of `messages` with the partition (and order header) chosen here; counts each topic's
   * in its entry's `sending`, and puts the entries counted in `sending`. With `spans`: a span
   * each (OpenTelemetry), its trace in the message's headers unless it keeps a `traceparent` of its own.
   */
  private place(messages: PlatformaticMessage[], sending: TopicEntry[], spans?: OtelSpan[]): PlatformaticMessage[] {
    const out: PlatformaticMessage[] = new Array(messages.length);
    const spread = this.settings.orderHeaders === 'spread';
    const asBuffer = this.settings.headerType === 'buffer';
    const max = this.partitioner.options.maxPartitions;
    let last = '';
    let c: TopicEntry | undefined;
    for (let i = 0; i < messages.length; i++) {
      const message: PlatformaticMessage = { ...messages[i] };
      out[i] = message;
      const topic = message.topic;
      if (topic !== last || c === undefined) {
        last = topic;
        // A topic forgotten meanwhile (sends to many topics) is made again: its count is read at its next send.
        c = this.topics.get(topic) ?? this.counters(topic);
      }
      if (c.sending++ === 0) sending.push(c);
      let span: OtelSpan | undefined;
      if (spans !== undefined) {
        span = this.tracing!.start(topic, message.key, message.headers);
        spans.push(span);
        // Headers that are neither an object nor a Map are left for the producer to refuse.
        const given = message.headers;
        if (given == null || typeof given === 'object') {
          const rest = given == null ? undefined : this.tracing!.replacing(given);
          if (rest !== null) {
            message.headers = rest;
            for (const [name, text] of this.tracing!.traceHeaders(span)) message.headers = withHeader(message.headers, name, text, asBuffer);
          }
        }
      }
      const headers = message.headers;
      // An explicit partition wins, as with the producer's own partitioner.
      if (typeof message.partition === 'number') {
        if (headers != null) message.headers = withoutOrderHeader(headers);
        continue;
      }
      const key = serializedKey(this.producer, message);
      const n = c.partitions;
      if (n === 0 || n > max) {
        // Count not known: Kafka's hash, which the producer reduces as Kafka does (null keys: a round robin).
        message.partition = unplacedPartition(key, this.nullKeysHashed, this.roundRobin++);
        if (headers != null) message.headers = withoutOrderHeader(headers);
        continue;
      }
      const p = this.partitioner.decide(topic, key, n);
      if (span !== undefined) this.tracing!.decided(span, p);
      const order = this.partitioner.decision.order;
      if (order !== ORDER_NONE && spread) message.headers = withOrderHeader(headers, this.orders.header(order, n, p)['kdp-order'], asBuffer);
      else if (headers != null) message.headers = withoutOrderHeader(headers);
      message.partition = p;
    }
    return out;
  }

  /**
   * Closes the producer (`force`: without waiting for its requests in flight) and the
   * partitioner, for good; sends after it reject with a StateError. A second call returns the first's promise.
   */
  close(force = false): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.timer);
      try {
        await this.producer.close(force);
      } finally {
        this.unregister?.();
        this.partitioner.close();
      }
    })();
    return this.closing;
  }

  /** A snapshot of the per-topic counters, load, hot keys and tracked-key table (as DynamicProducer's). */
  metrics(): ProducerMetrics {
    return this.metrics$.snapshot(this.topics, this.partitioner, this.inflight, 0);
  }

  /** The entry of `topic`, made if new (beyond topicsKept(maxTopics), the least recently used quarter is forgotten); it becomes the most recent. */
  private counters(topic: string): TopicEntry {
    let c = this.topics.get(topic);
    if (!c) {
      if (this.topics.size >= this.kept) for (const victim of leastRecentQuarter([...this.topics])) this.topics.delete(victim);
      c = { partitions: 0, produced: 0, delivered: 0, failed: 0, queueDepth: [], lastUsed: 0, retryAt: 0, sending: 0 };
      this.topics.set(topic, c);
    }
    c.lastUsed = ++this.use;
    return c;
  }

  /** Reads a topic's partition count (one read at a time per topic); a failed read is an 'error' event (when listened to). */
  private read(topic: string, forceUpdate = false): Promise<void> {
    const under = this.reading.get(topic);
    if (under) return under;
    const reading = this.producer.metadata({ topics: [topic], forceUpdate })
      .then((metadata) => {
        const n = metadata?.topics?.get(topic)?.partitionsCount ?? 0;
        const c = this.topics.get(topic);
        if (c && n > 0) {
          c.partitions = n;
          c.retryAt = 0;
        } else if (c) {
          c.retryAt = Date.now() + RETRY_UNKNOWN_MS;
        }
      }, (err) => {
        const c = this.topics.get(topic);
        if (c) c.retryAt = Date.now() + RETRY_UNKNOWN_MS;
        // Its messages are partitioned as Kafka does meanwhile: an 'error' event for whoever listens, not a failed send.
        if (!this.closing && this.listenerCount('error') > 0) this.emit('error', toKafkaError(err, `metadata of ${topic}`));
      })
      .finally(() => this.reading.delete(topic));
    this.reading.set(topic, reading);
    return reading;
  }

  /** Every metadataRefreshMs: the counts of the topics sent to, read again (partitions added). */
  private refresh(): void {
    if (this.closing) return;
    for (const topic of this.topics.keys()) void this.read(topic, true);
  }
}

/**
 * Wraps @platformatic/kafka's producer so that each message's partition is chosen by a
 * DynamicPartitioner and spread keys carry order headers; use its send() and close() instead of
 * the producer's.
 */
export function wrapPlatformaticProducer(producer: PlatformaticProducerLike, options: PlatformaticProducerOptions = {}): PlatformaticDynamicProducer {
  return new PlatformaticDynamicProducer(producer, options);
}
