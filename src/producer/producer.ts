// DynamicProducer: node-rdkafka's Producer with the partition chosen here. The data path:
//   send(topic, value, key) → one WebAssembly decision (DynamicPartitioner) → produce() with
//   that explicit partition (+ an order header for a spread key) → delivery report →
//   the promise / 'delivery' event → metrics.
// Around it: partition counts from metadata, back-pressure when librdkafka's queue is full,
// ordered handoffs of relocated keys (handoff.ts: a move waits for its predecessor's offset),
// and librdkafka statistics turned into per-partition penalties.

import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import * as Kafka from 'node-rdkafka';
import { DynamicPartitioner, ORDER_NONE } from '../partitioner/partitioner';
import { DynamicPartitionerOptions, PARTITIONER_OPTION_NAMES, PRODUCER_DEFAULTS, PRODUCER_OPTION_NAMES, ProducerSettings, resolveProducerOptions } from '../core/options';
import { partitionerCode } from '../core/hash';
import { Handoff, Link, LINK } from './handoff';
import { OrderChains, newProducerId, ORDER_HEADER } from '../partitioner/headers';
import { splitConfig, basePartitioner, checkNotOptions, configError, Config, LIBRDKAFKA_DEFAULT_PARTITIONER } from '../core/config';
import { InvalidArgTypeError, InvalidOptionError, KafkaError, OutOfRangeError, StateError, UndeliveredError, describe, toKafkaError } from '../core/errors';
import { notAKey } from '../core/key';
import { Metrics, ProducerMetrics, registerPrometheus } from './metrics';
import { deliversReports, isHighLevel, nativeBinding } from './client';
import type { HighLevelLike, NativeProducer } from './client';
import type { Key } from '../core/key';

export { PRODUCER_DEFAULTS };

export type Value = Buffer | Uint8Array | string | null;
export type Headers = Array<Record<string, string | Buffer>>;

export interface DeliveryReport {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** send(): the key as the caller gave it (null for none). */
  readonly key?: Key | null;
  readonly timestamp?: number;
  readonly size?: number;
}

/** What DynamicProducer needs of a node-rdkafka-style producer (wrapProducer duck-types it). */
export interface ProducerLike {
  produce(topic: string, partition: number | null, message: Buffer | null, key?: Key | null, timestamp?: number | null, opaque?: unknown, headers?: Headers): unknown;
  on(event: string, listener: (...args: any[]) => void): unknown;
  removeListener(event: string, listener: (...args: any[]) => void): unknown;
  getMetadata(options: { topic?: string; timeout?: number; allTopics?: boolean }, cb: (err: any, metadata: any) => void): unknown;
  flush(timeout: number, cb: (err: any) => void): unknown;
  poll(): unknown;
  isConnected?(): boolean;
  topicConfig?: Config;
}

export interface DynamicProducerOptions extends DynamicPartitionerOptions {
  /** Partition counts are re-read from metadata this often (ms). */
  readonly metadataRefreshMs?: number;
  /** Messages held here (while librdkafka's queue is full, or for a handoff) before send() waits (memory bound). */
  readonly maxQueued?: number;
  /** How often librdkafka is polled for delivery reports (ms); 0 = the wrapped producer already polls. */
  readonly pollIntervalMs?: number;
  /** 'spread': order headers on the messages of spread keys (default); 'none': never. */
  readonly orderHeaders?: 'spread' | 'none';
  /** Turn librdkafka's per-partition queue depth (statistics.interval.ms) into penalties (default true). */
  readonly queuePenalty?: boolean;
  /** A prom-client Registry to expose metrics in. */
  readonly prometheus?: unknown;
  /** 8 bytes naming this producer in order headers (default: random). */
  readonly producerId?: Buffer;
}

// librdkafka error codes (rdkafka.h) the producer reacts to.
const ERR_QUEUE_FULL = -184;
const ERR_UNKNOWN_PARTITION = -190;
const ERR_UNKNOWN_TOPIC = -188;
const ERR_TIMED_OUT = -185;
/** Not a librdkafka code: a produce() that threw something without one. */
const ERR_UNKNOWN_FAILURE = -1_000_000;
/** pollIntervalMs 0: how long our messages may wait with nothing polling before we poll ourselves. */
const NO_POLL_CHECK_MS = 1000;
/** What disconnect(timeoutMs) keeps of its budget for the client's own disconnect (and gives it at least). */
const CLIENT_DISCONNECT_MS = 100;

function librdkafkaMessage(code: number): string {
  const name = Object.entries((Kafka as any).CODES?.ERRORS ?? {}).find(([, v]) => v === code)?.[0];
  return name ? `${name} (${code})` : `librdkafka error ${code}`;
}

/** node-rdkafka's binding under Producer.produce(): it returns librdkafka's error code instead of throwing. */
/** Opaque of our fire-and-forget messages on a wrapped producer, to tell its reports from the app's own. */
const OURS = Object.freeze({ ours: true });

/** Marks the opaque of a send() (to tell our reports from a wrapped producer's app's own). */
const SEND = Symbol('kdp.send');

interface Pending {
  resolve(report: DeliveryReport): void;
  reject(err: Error): void;
  readonly [SEND]?: true;
  /** A send()'s key as the caller gave it (a HighLevelProducer's: as serialized), for its report. */
  key?: Key | null;
}

interface Queued {
  topic: string;
  partition: number;
  value: Buffer | null;
  key: Key | null | undefined;
  timestamp: number | null | undefined;
  headers: Headers | undefined;
  pending: Pending | undefined;
  /** A marked message's link (the opaque it is produced with, for a later handoff). */
  link: Link | undefined;
}

/** A message held for an ordered handoff (src/producer/handoff.ts). */
interface Waiting extends Queued {
  readonly header: Record<string, string> | undefined;
  readonly after: Link | undefined;
}

interface TopicInfo {
  /** Partition count from metadata; 0 while unknown (librdkafka partitions those messages). */
  partitions: number;
  produced: number;
  delivered: number;
  failed: number;
  queueDepth: number[];
  /** When the producer last switched to this topic (topicUse): the least recent goes beyond maxTopics. */
  lastUsed: number;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Checks the caller's headers (not null or undefined) in one scan; returns the index of the
 * first one named `kdp-order` (a copy of a consumed message's, as a consume-transform-produce
 * app forwards them), or -1. A for-in, not Object.entries: no allocation per message.
 */
function checkHeaders(headers: unknown): number {
  if (!Array.isArray(headers)) throw new InvalidArgTypeError('headers', 'an array of { name: string | Buffer } objects', headers);
  let forwarded = -1;
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i];
    if (typeof h !== 'object' || h === null || Array.isArray(h)) {
      throw new InvalidArgTypeError(`headers[${i}]`, 'an object { name: string | Buffer }', h);
    }
    // node-rdkafka sends only the first property of each header object.
    let count = 0;
    let name = '';
    for (const own in h) {
      if (!hasOwn.call(h, own)) continue;
      count++;
      name = own;
    }
    if (count !== 1) throw new InvalidArgTypeError(`headers[${i}]`, 'an object with exactly one name: value', h);
    const value = h[name];
    if (typeof value !== 'string' && !Buffer.isBuffer(value)) throw new InvalidArgTypeError(`headers[${i}]['${name}']`, 'a string or Buffer', value);
    if (name === ORDER_HEADER && forwarded === -1) forwarded = i;
  }
  return forwarded;
}

/**
 * The caller's headers without any `kdp-order` one (the first at `from`), in their order; a
 * new array, the caller's is left alone. `ours`: put in place of the first instead.
 */
function withoutForwarded(headers: Headers, from: number, ours?: Record<string, string>): Headers {
  const out = headers.slice(0, from);
  if (ours !== undefined) out.push(ours);
  for (let i = from + 1; i < headers.length; i++) {
    if (!hasOwn.call(headers[i], ORDER_HEADER)) out.push(headers[i]);
  }
  return out;
}

/** A timestamp that is not a number, or one no message can have (NaN, negative, beyond 2^53). */
function timestampError(timestamp: unknown): InvalidArgTypeError | OutOfRangeError {
  if (typeof timestamp !== 'number') return new InvalidArgTypeError('timestamp', 'a number (ms since the epoch), null or undefined', timestamp);
  return new OutOfRangeError('timestamp', 'ms since the epoch: a number from 0 to Number.MAX_SAFE_INTEGER', timestamp);
}

/** A timeout argument: a number of ms, 0 or more and finite. */
function checkTimeout(argument: string, ms: unknown): void {
  if (typeof ms !== 'number') throw new InvalidArgTypeError(argument, 'a number of milliseconds', ms);
  if (!(ms >= 0 && ms < Infinity)) throw new OutOfRangeError(argument, 'a finite number of milliseconds, 0 or more', ms);
}

export declare interface DynamicProducer {
  on(event: 'ready', listener: () => void): this;
  on(event: 'delivery', listener: (err: KafkaError | null, report: DeliveryReport) => void): this;
  on(event: 'drain', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'hot' | 'cooled', listener: (key: import('../partitioner/partitioner').HotKey) => void): this;
  on(event: 'stats', listener: (stats: unknown) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

export class DynamicProducer extends EventEmitter {
  /** The node-rdkafka producer underneath. */
  readonly client: ProducerLike;
  readonly partitioner: DynamicPartitioner;
  readonly producerId: Buffer;
  private readonly options: ProducerSettings;
  private readonly code: number;
  private readonly owned: boolean;
  /** A wrapped node-rdkafka HighLevelProducer: produced through its plain produce(), its serializers applied here. */
  private readonly highLevel: boolean;
  /** Whether the client emits delivery reports (dr_cb / dr_msg_cb); send() needs them. */
  private readonly reports: boolean;
  /** The opaque of fire-and-forget messages: none when we own the client, OURS on a wrapped one. */
  private readonly mark: Pending | undefined;
  /** The binding of a producer we own (calls skip node-rdkafka's JS wrapper and its exceptions). */
  private native: NativeProducer | undefined;
  private lastProduceError: unknown;
  private readonly topics = new Map<string, TopicInfo>();
  private lastTopicName = '';
  private lastTopic: TopicInfo | undefined;
  private topicUse = 0;
  private readonly metadataInFlight = new Set<string>();
  private backlog: Queued[] = [];
  private backlogHead = 0;
  private drainScheduled = false;
  private readonly roomWaiters: Array<() => void> = [];
  private readonly unconfirmed = new Set<Pending>();
  private inflight = 0;
  /** Whether the message being enqueued took an order header (given back if it is refused). */
  private marked = false;
  /** The order header object of the message being enqueued (when marked). */
  private lastHeader: Record<string, string> | undefined;
  private readonly orders: OrderChains;
  /** Relocated keys' ordered handoffs; none without order headers or delivery reports. */
  private readonly handoff: Handoff<Waiting> | undefined;
  private connected = false;
  private closing = false;
  private closed = false;
  /** The disconnect() under way, returned to any other call until it settles. */
  private disconnecting: Promise<void> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private readonly metrics$: Metrics;
  /** Undoes what was patched on the client (interceptReports, watchPolling), at disconnect. */
  private readonly unpatch: Array<() => void> = [];
  /** Takes our gauges out of the prom-client Registry (none: no registry). */
  private unregister: (() => void) | undefined;
  private readonly onReport: (err: any, report: any) => void;
  private readonly onStats: (event: { message: string }) => void;

  constructor(globalConfig: Config = {}, topicConfig: Config = {}, options: DynamicProducerOptions = {}, existing?: ProducerLike) {
    super();
    if (typeof globalConfig !== 'object' || globalConfig === null) throw new InvalidArgTypeError('globalConfig', 'an object', globalConfig);
    if (typeof topicConfig !== 'object' || topicConfig === null) throw new InvalidArgTypeError('topicConfig', 'an object', topicConfig);
    const checked = resolveProducerOptions(options);
    this.options = checked.producer;
    for (const names of [PARTITIONER_OPTION_NAMES, PRODUCER_OPTION_NAMES]) {
      checkNotOptions(globalConfig, 'globalConfig', names);
      checkNotOptions(topicConfig, 'topicConfig', names);
    }
    const split = splitConfig(globalConfig, topicConfig);
    // A wrapped producer without a `partitioner` setting uses librdkafka's default.
    const existingPartitioner = existing ? existing.topicConfig?.partitioner ?? LIBRDKAFKA_DEFAULT_PARTITIONER : split.topic.partitioner;
    const base = basePartitioner(checked.partitioner.partitioner, existingPartitioner);
    this.partitioner = new DynamicPartitioner({ ...(checked.partitioner as DynamicPartitionerOptions), partitioner: base });
    this.code = partitionerCode(base);
    this.producerId = this.options.producerId ?? newProducerId();
    this.orders = new OrderChains(this.partitioner, this.producerId, this.code);
    this.partitioner.on('hot', (h) => this.emit('hot', h));
    this.partitioner.on('cooled', (h) => this.emit('cooled', h));
    if (existing) {
      this.client = existing;
      this.owned = false;
      this.highLevel = isHighLevel(existing);
      this.reports = deliversReports(existing);
      this.mark = OURS as unknown as Pending;
      this.connected = existing.isConnected ? existing.isConnected() : true;
    } else {
      // librdkafka partitions the messages we leave unassigned (topic count not known yet)
      // with the same partitioner, so they land where we would have put them.
      const topic = { ...split.topic, partitioner: base };
      const global: Config = { ...split.global };
      if (global.dr_cb === undefined && !global.dr_msg_cb) global.dr_cb = true;
      try {
        this.client = new Kafka.Producer(global as any, topic as any) as unknown as ProducerLike;
      } catch (err) {
        this.partitioner.close();
        throw configError(err, globalConfig, topicConfig);
      }
      this.owned = true;
      this.highLevel = false;
      this.reports = Boolean(global.dr_cb || global.dr_msg_cb);
      this.mark = undefined;
    }
    this.handoff = this.options.orderHeaders === 'spread' && this.reports && this.partitioner.options.relocate && this.partitioner.options.spread
      ? new Handoff<Waiting>(this.partitioner.options.maxTrackedKeys, (m) => this.released(m))
      : undefined;
    this.metrics$ = new Metrics();
    this.onReport = (err, report) => this.delivered(err, report);
    this.onStats = (event) => this.statistics(event);
    if (this.owned) this.client.on('delivery-report', this.onReport);
    else this.interceptReports();
    this.client.on('event.stats', this.onStats);
    this.client.on('event.error', (err: any) => this.emit('error', toKafkaError(err, 'librdkafka')));
    if (this.options.prometheus !== undefined) {
      try {
        this.unregister = registerPrometheus(this.options.prometheus, () => this.metrics());
      } catch (err) {
        this.partitioner.close();
        throw err;
      }
    }
    if (existing && this.connected) this.started();
  }

  /** Connects (if this producer owns its client) and reads the partition counts of all topics. */
  async connect(timeoutMs = 30_000): Promise<void> {
    checkTimeout('timeoutMs', timeoutMs);
    if (this.closed) throw new StateError('this producer was disconnected');
    if (!this.connected) {
      const client = this.client as unknown as Kafka.Producer;
      await new Promise<void>((resolve, reject) => {
        client.connect({ timeout: timeoutMs }, (err) => (err ? reject(toKafkaError(err, 'connect')) : resolve()));
      });
      this.connected = true;
      this.native = nativeBinding(client);
      this.started();
    }
    await this.refreshMetadata(undefined, timeoutMs).catch((err) => this.emit('error', err));
    this.emit('ready');
  }

  private started(): void {
    this.refreshTimer = setInterval(() => {
      this.refreshMetadata().catch((err) => this.emit('error', err));
    }, this.options.metadataRefreshMs);
    this.refreshTimer.unref();
    if (this.options.pollIntervalMs > 0) {
      this.pollTimer = setInterval(() => this.poll(), this.options.pollIntervalMs);
      this.pollTimer.unref();
    } else if (this.reports) {
      this.watchPolling();
    }
  }

  /**
   * A wrapped producer's delivery reports of our messages are taken before its listeners see
   * them, and its application's never reach us: node-rdkafka (3.6, lib/producer.js) hands each
   * report to this.emit('delivery-report', ...), looked up on the instance. Undone at
   * disconnect, once none of ours is in flight (a late one would reach the application).
   */
  private interceptReports(): void {
    type Emitting = ProducerLike & { emit(event: string | symbol, ...args: any[]): boolean };
    const client = this.client as Emitting;
    const emit = client.emit;
    const hadOwn = hasOwn.call(client, 'emit');
    const mark = this.mark;
    const self = this;
    const restore = (): void => {
      if (client.emit !== intercepted) return;
      if (hadOwn) client.emit = emit;
      else delete (client as Partial<Emitting>).emit;
    };
    function intercepted(this: unknown, event: string | symbol, ...args: any[]): boolean {
      const report = args[1];
      if (event === 'delivery-report' && typeof report === 'object' && report !== null) {
        const opaque = report.opaque;
        if (opaque === mark || (typeof opaque === 'object' && opaque !== null && (opaque[SEND] === true || opaque[LINK] === true))) {
          self.delivered(args[0], report);
          if (self.closed && self.inflight <= 0) restore();
          return true;
        }
      }
      return emit.call(this, event, ...args);
    }
    client.emit = intercepted;
    this.unpatch.push(() => {
      if (this.inflight <= 0) restore();
    });
  }

  /**
   * pollIntervalMs 0: the application polls the client. If nothing calls its poll() for a
   * whole NO_POLL_CHECK_MS while our messages await their reports, no report ever comes and
   * send() never settles: warn once (process warning KDP_NO_POLL), and poll from here on.
   */
  private watchPolling(): void {
    const client = this.client;
    const poll = client.poll;
    const hadOwn = hasOwn.call(client, 'poll');
    let polled = false;
    let waiting = false;
    function counting(this: unknown, ...args: unknown[]): unknown {
      polled = true;
      return (poll as (...a: unknown[]) => unknown).apply(this, args);
    }
    client.poll = counting;
    this.unpatch.push(() => {
      if (client.poll !== counting) return;
      if (hadOwn) client.poll = poll;
      else delete (client as Partial<ProducerLike>).poll;
    });
    this.pollTimer = setInterval(() => {
      const stuck = waiting && !polled && this.inflight > 0;
      waiting = this.inflight > 0;
      polled = false;
      if (!stuck) return;
      clearInterval(this.pollTimer);
      process.emitWarning(`DynamicProducer: ${this.inflight} messages await delivery reports, and nothing polled the producer for ${NO_POLL_CHECK_MS} ms ` +
        `(pollIntervalMs is 0): polling it every ${PRODUCER_DEFAULTS.pollIntervalMs} ms from now on. Call setPollInterval() on it, or pass pollIntervalMs.`,
      { type: 'DynamicProducerWarning', code: 'KDP_NO_POLL' });
      this.pollTimer = setInterval(() => this.poll(), PRODUCER_DEFAULTS.pollIntervalMs);
      this.pollTimer.unref();
    }, NO_POLL_CHECK_MS);
    this.pollTimer.unref();
  }

  /**
   * Produces one message; synchronous. Returns true when librdkafka took it, false when it
   * was held here because librdkafka's queue is full: it is still sent, in order, and a
   * 'drain' event follows once everything held is handed over (as Node streams do).
   */
  produce(topic: string, value: Value, key?: Key | null, headers?: Headers, timestamp?: number | null): boolean {
    if (this.roomWaiters.length > 0) {
      // send() calls are waiting for room: this message goes behind them, in call order.
      this.checkMessage(topic, value, key, headers, timestamp);
      this.roomWaiters.push(() => {
        try {
          this.enqueue(topic, value, key, headers, timestamp, undefined);
        } catch (err) {
          this.emit('error', err);
        }
      });
      return false;
    }
    return this.enqueue(topic, value, key, headers, timestamp, undefined);
  }

  /** The checks enqueue() makes, for a message whose enqueue is deferred. */
  private checkMessage(topic: unknown, value: unknown, key: unknown, headers: unknown, timestamp: unknown): void {
    if (!this.connected || this.closing) throw new StateError(this.closing ? 'this producer is disconnecting' : 'connect() first');
    if (typeof topic !== 'string' || topic.length === 0) throw new InvalidArgTypeError('topic', 'a non-empty string', topic);
    // A HighLevelProducer's serializers may take other types: checked after them, in enqueue().
    if (!this.highLevel) {
      if (typeof value !== 'string' && value !== null && value !== undefined && !(value instanceof Uint8Array)) throw new InvalidArgTypeError('value', 'a Buffer, Uint8Array, string or null', value);
      if (key !== null && key !== undefined && typeof key !== 'string' && !(key instanceof Uint8Array)) {
        throw notAKey('key', key);
      }
    }
    if (headers !== undefined && headers !== null) checkHeaders(headers);
    if (timestamp !== undefined && timestamp !== null && (typeof timestamp !== 'number' || !(timestamp >= 0 && timestamp <= Number.MAX_SAFE_INTEGER))) throw timestampError(timestamp);
  }

  /** Produces one message and resolves with its delivery report (rejects with KafkaError). Waits while too much is held. */
  send(topic: string, value: Value, key?: Key | null, headers?: Headers, timestamp?: number | null): Promise<DeliveryReport> {
    if (!this.reports) {
      return Promise.reject(new StateError('send() needs delivery reports: this producer has dr_cb and dr_msg_cb off (use produce())'));
    }
    return new Promise<DeliveryReport>((resolve, reject) => {
      const pending: Pending = { resolve, reject, key: key ?? null, [SEND]: true };
      const attempt = (): void => {
        if (this.closed) {
          reject(new StateError('this producer was disconnected'));
          return;
        }
        if (this.closing) {
          reject(new StateError('this producer is disconnecting'));
          return;
        }
        if (this.held() >= this.options.maxQueued) {
          this.roomWaiters.push(attempt);
          return;
        }
        try {
          this.enqueue(topic, value, key, headers, timestamp, pending);
        } catch (err) {
          reject(err);
        }
      };
      attempt();
    });
  }

  private enqueue(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined, pending: Pending | undefined): boolean {
    if (!this.connected || this.closing) {
      throw new StateError(this.closed ? 'this producer was disconnected' : this.closing ? 'this producer is disconnecting' : 'connect() first');
    }
    let info = this.lastTopic;
    if (topic !== this.lastTopicName || info === undefined) info = this.topicInfo(topic);
    if (this.highLevel) {
      // What the HighLevelProducer's own produce() would send: its serializers' output.
      const client = this.client as HighLevelLike;
      value = serialize(client.valueSerializer, value, 'value') as Value;
      key = serialize(client.keySerializer, key, 'key') as Key | null | undefined;
      if (pending !== undefined) pending.key = key ?? null;
    }
    let payload: Buffer | null;
    if (typeof value === 'string') payload = Buffer.from(value);
    else if (value === null || value === undefined) payload = null;
    else if (Buffer.isBuffer(value)) payload = value;
    // node-rdkafka takes only a Buffer: a view of the same memory, not a copy.
    else if (value instanceof Uint8Array) payload = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    else throw new InvalidArgTypeError('value', 'a Buffer, Uint8Array, string or null', value);
    // A kdp-order header among the caller's (copied from a consumed message) is never sent as
    // ours: a Resequencer would read it, stale, or find two. Ours replaces it, or it goes.
    let forwarded = -1;
    if (headers === null) headers = undefined;
    else if (headers !== undefined) forwarded = checkHeaders(headers);
    if (timestamp !== undefined && timestamp !== null && (typeof timestamp !== 'number' || !(timestamp >= 0 && timestamp <= Number.MAX_SAFE_INTEGER))) {
      throw timestampError(timestamp);
    }
    let partition = -1;
    let zero = -1; // whether a string key has U+0000: -1 not known yet
    let entry = -1;
    let link: Link | undefined;
    let after: Link | undefined;
    this.marked = false;
    if (info.partitions > 0) {
      partition = this.partitioner.decide(topic, key, info.partitions);
      const decision = this.partitioner.decision;
      zero = decision.keyZero;
      const order = decision.order;
      if (order !== ORDER_NONE && this.options.orderHeaders === 'spread') {
        headers = this.orderHeaders(order, info.partitions, partition, headers, forwarded);
        forwarded = -1;
        if (this.handoff !== undefined) {
          entry = decision.entry;
          after = this.handoff.waitFor(entry, order, partition, this.lastHeader!);
          link = this.handoff.track(entry, order, partition, pending ?? this.mark);
        }
      } else if (this.handoff !== undefined && this.handoff.held > 0) {
        entry = decision.entry;
      }
    } else {
      if (key !== null && key !== undefined && typeof key !== 'string' && !(key instanceof Uint8Array)) {
        throw notAKey('key', key);
      }
      this.requestMetadata(topic);
    }
    if (forwarded !== -1) headers = withoutForwarded(headers!, forwarded);
    // node-rdkafka (3.6, src/producer.cc) sends an empty Buffer key as a null key and cuts a
    // string key at its first U+0000: hand both over in a form that survives.
    if (typeof key === 'string') {
      if (zero !== 0 && key.indexOf('\u0000') !== -1) key = Buffer.from(key);
    } else if (key instanceof Uint8Array) {
      if (key.length === 0) key = '';
      else if (!Buffer.isBuffer(key)) key = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
    }
    info.produced++;
    pending = pending ?? this.mark;
    if (after !== undefined || (entry >= 0 && this.handoff!.busy(entry))) {
      // An ordered handoff: it goes once its predecessor's offset is known (and behind the
      // key's messages already waiting). Taken: it is sent, or its caller told.
      this.handoff!.hold(entry, { topic, partition, value: payload, key, timestamp, headers, pending, link, header: this.lastHeader, after });
      return true;
    }
    if (this.backlog.length > this.backlogHead) {
      this.hold({ topic, partition, value: payload, key, timestamp, headers, pending, link });
      return false;
    }
    const code = this.handOver(topic, partition, payload, key, timestamp, pending, headers, link);
    if (code === 0) return true;
    if (code === ERR_QUEUE_FULL) {
      this.hold({ topic, partition, value: payload, key, timestamp, headers, pending, link });
      return false;
    }
    // Refused for good: give its order sequence back, so the key's chain has no gap.
    if (this.marked) this.orders.undo();
    if (link !== undefined) this.handoff!.undo();
    return this.failed(code, topic, partition, key, pending, true);
  }

  /** A message held for a handoff whose turn came: produced now, or behind the backlog. */
  private released(m: Waiting): void {
    const code = this.backlog.length > this.backlogHead
      ? ERR_QUEUE_FULL
      : this.handOver(m.topic, m.partition, m.value, m.key, m.timestamp, m.pending, m.headers, m.link);
    if (code === ERR_QUEUE_FULL) this.hold(m);
    else if (code !== 0) this.refused(code, m);
  }

  /** A message taken earlier and refused for good now: its successors go on, its caller is told. */
  private refused(code: number, m: Queued): void {
    if (m.link !== undefined) this.handoff!.settled(m.link, -1, -1);
    this.failed(code, m.topic, m.partition, m.key, m.pending, false);
  }

  /**
   * Gives a message to librdkafka; returns librdkafka's error code (0 on success). A stale
   * partition count is handled here: librdkafka places the message instead, and the count is
   * re-read.
   */
  private handOver(topic: string, partition: number, value: Buffer | null, key: Key | null | undefined,
    timestamp: number | null | undefined, pending: Pending | undefined, headers: Headers | undefined, link?: Link): number {
    const opaque = link ?? pending;
    const code = this.native !== undefined
      ? this.native.produce(topic, partition, value, key, timestamp, opaque, headers)
      : this.produceThrowing(topic, partition, value, key, timestamp, opaque, headers);
    if ((code === ERR_UNKNOWN_PARTITION || code === ERR_UNKNOWN_TOPIC) && partition !== -1) {
      this.requestMetadata(topic, true);
      return this.handOver(topic, -1, value, key, timestamp, pending, headers, link);
    }
    if (code === 0) {
      if (this.reports) this.inflight++;
      if (pending !== undefined && pending !== this.mark) this.unconfirmed.add(pending);
    }
    return code;
  }

  /** The public produce() of a wrapped producer, its exception turned into the error code. */
  private produceThrowing(topic: string, partition: number, value: Buffer | null, key: Key | null | undefined,
    timestamp: number | null | undefined, pending: unknown, headers: Headers | undefined): number {
    try {
      if (this.highLevel) (this.client as HighLevelLike)._oldProduce(topic, partition, value, key, timestamp, pending, headers);
      else this.client.produce(topic, partition, value, key, timestamp, pending, headers);
      return 0;
    } catch (err: any) {
      if (typeof err?.code === 'number' && err.code !== 0) return err.code;
      this.lastProduceError = err;
      return ERR_UNKNOWN_FAILURE;
    }
  }

  /** A message librdkafka refused for good: its caller is told (promise, exception or 'delivery'). */
  private failed(code: number, topic: string, partition: number, key: Key | null | undefined, pending: Pending | undefined, canThrow: boolean): boolean {
    const cause = code === ERR_UNKNOWN_FAILURE ? this.lastProduceError : { code, message: librdkafkaMessage(code) };
    const failure = toKafkaError(cause, `produce to ${topic}`);
    const info = this.topics.get(topic);
    if (info) info.failed++;
    if (pending !== undefined && pending !== this.mark) pending.reject(failure);
    else if (canThrow) throw failure;
    else this.emit('delivery', failure, { topic, partition, offset: -1, key: key as any });
    return true;
  }

  private hold(m: Queued): void {
    this.backlog.push(m);
    this.scheduleDrain();
  }

  /**
   * Retries the held messages on the next turn of the event loop (librdkafka's queue empties
   * as its threads send); delivery reports also retry as they arrive.
   */
  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  /** Hands held messages over in order until the queue is full again; 'drain' once all are. */
  private drain(): void {
    this.poll();
    const backlog = this.backlog;
    while (this.backlogHead < backlog.length) {
      const m = backlog[this.backlogHead];
      const code = this.handOver(m.topic, m.partition, m.value, m.key, m.timestamp, m.pending, m.headers, m.link);
      if (code === ERR_QUEUE_FULL) break;
      backlog[this.backlogHead++] = undefined as unknown as Queued;
      if (code !== 0) this.refused(code, m);
    }
    if (this.backlogHead === backlog.length) {
      this.backlog = [];
      this.backlogHead = 0;
      this.wakeRoomWaiters();
      this.emit('drain');
    } else {
      if (this.backlogHead > 4096 && this.backlogHead * 2 > backlog.length) {
        this.backlog = backlog.slice(this.backlogHead);
        this.backlogHead = 0;
      }
      this.wakeRoomWaiters();
      this.scheduleDrain();
    }
  }

  private wakeRoomWaiters(): void {
    while (this.roomWaiters.length > 0 && this.held() < this.options.maxQueued) {
      this.roomWaiters.shift()!();
    }
  }

  private poll(): void {
    if (!this.connected) return;
    try {
      this.client.poll();
    } catch {
      // poll() throws only when not connected; the next connect() restarts it.
    }
  }

  private delivered(err: any, report: any): void {
    let opaque = report?.opaque;
    let link: Link | undefined;
    if (typeof opaque === 'object' && opaque !== null && (opaque as Link)[LINK] === true) {
      link = opaque as Link;
      opaque = link.opaque;
      // The report shows the opaque the message has without its link.
      report = { ...report, opaque };
    }
    const pending = opaque as Pending | undefined;
    // On a wrapped producer, the app's own messages (any other opaque, or none) are not ours.
    if (!this.owned && link === undefined && pending !== this.mark && (typeof pending !== 'object' || pending === null || (pending as Pending)[SEND] !== true)) return;
    // A send()'s report: the key as the caller gave it (librdkafka's is a Buffer), and not our opaque.
    if (typeof pending === 'object' && pending !== null && pending[SEND] === true) {
      report = { topic: report.topic, partition: report.partition, offset: report.offset, key: pending.key, timestamp: report.timestamp, size: report.size };
    }
    this.inflight--;
    const info = this.topics.get(report?.topic);
    if (err) {
      const failure = toKafkaError(err, `delivery to ${report?.topic} [${report?.partition}]`);
      if (info) info.failed++;
      if (failure.librdkafkaCode === ERR_UNKNOWN_PARTITION || failure.librdkafkaCode === ERR_UNKNOWN_TOPIC) {
        if (report?.topic) this.requestMetadata(report.topic, true);
      }
      if (pending && typeof pending.reject === 'function') {
        this.unconfirmed.delete(pending);
        pending.reject(failure);
      }
      this.emit('delivery', failure, report);
    } else {
      if (info) info.delivered++;
      if (pending && typeof pending.resolve === 'function') {
        this.unconfirmed.delete(pending);
        pending.resolve(report);
      }
      this.emit('delivery', null, report);
    }
    if (link !== undefined) {
      this.handoff!.settled(link, report.partition, err ? -1 : report.offset);
      if (this.roomWaiters.length > 0) this.wakeRoomWaiters();
    }
    if (this.backlog.length > this.backlogHead && !this.drainScheduled) this.drain();
  }

  /** The caller's headers with ours added, or in place of the first `kdp-order` among them (at `forwarded`, -1: none). */
  private orderHeaders(order: number, partitions: number, partition: number, headers: Headers | undefined, forwarded: number): Headers {
    const header = this.orders.header(order, partitions, partition);
    this.marked = true;
    this.lastHeader = header;
    if (headers === undefined) return [header];
    return forwarded === -1 ? headers.concat(header) : withoutForwarded(headers, forwarded, header);
  }

  private topicInfo(topic: string): TopicInfo {
    let info = this.topics.get(topic);
    if (info === undefined) {
      if (typeof topic !== 'string' || topic.length === 0) throw new InvalidArgTypeError('topic', 'a non-empty string', topic);
      // As many topics as the partitioner keeps (it forgets the least recently used beyond them).
      if (this.topics.size >= this.partitioner.options.maxTopics) this.forgetLeastRecentTopic();
      info = { partitions: 0, produced: 0, delivered: 0, failed: 0, queueDepth: [], lastUsed: 0 };
      this.topics.set(topic, info);
      this.requestMetadata(topic);
    }
    // Stamped when the producer switches topics, not per message: the topic in use stays the most recent.
    info.lastUsed = ++this.topicUse;
    this.lastTopicName = topic;
    this.lastTopic = info;
    return info;
  }

  private forgetLeastRecentTopic(): void {
    let victim: string | undefined;
    let oldest = Infinity;
    for (const [name, info] of this.topics) {
      if (info.lastUsed < oldest) {
        oldest = info.lastUsed;
        victim = name;
      }
    }
    if (victim === undefined) return;
    this.topics.delete(victim);
    if (this.lastTopicName === victim) {
      this.lastTopicName = '';
      this.lastTopic = undefined;
    }
  }

  /** Reads one topic's partition count in the background (once at a time per topic). */
  private requestMetadata(topic: string, force = false): void {
    if (!this.connected || this.metadataInFlight.has(topic)) return;
    const info = this.topics.get(topic);
    if (info && info.partitions > 0 && !force) return;
    this.metadataInFlight.add(topic);
    this.refreshMetadata(topic)
      .catch((err) => this.emit('error', err))
      .finally(() => this.metadataInFlight.delete(topic));
  }

  /** Re-reads partition counts: of one topic, or of every topic this producer has used. */
  refreshMetadata(topic?: string, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const query = topic !== undefined ? { topic, timeout: timeoutMs } : { allTopics: true, timeout: timeoutMs };
      this.client.getMetadata(query, (err, metadata) => {
        if (err) return reject(toKafkaError(err, `metadata${topic ? ` of ${topic}` : ''}`));
        try {
          this.applyMetadata(metadata, topic);
          resolve();
        } catch (e) {
          reject(e);
        }
      });
    });
  }

  private applyMetadata(metadata: any, only: string | undefined): void {
    if (!metadata || !Array.isArray(metadata.topics)) throw new KafkaError(`a metadata answer without topics: ${describe(metadata)}`, undefined);
    for (const t of metadata.topics) {
      if (only !== undefined && t.name !== only) continue;
      const info = this.topics.get(t.name) ?? (only !== undefined ? this.topicInfo(t.name) : undefined);
      if (!info) continue;
      const partitions = Array.isArray(t.partitions) ? t.partitions.length : -1;
      if (partitions < 0 || (partitions > 0 && !t.partitions.every((p: any) => Number.isInteger(p.id) && p.id >= 0 && p.id < partitions))) {
        this.emit('error', new KafkaError(`a broken metadata answer for ${t.name}: ${describe(t.partitions)} partitions`, undefined));
        continue;
      }
      // 0 partitions: a topic being created; keep letting librdkafka place its messages.
      if (partitions > this.partitioner.options.maxPartitions) {
        this.emit('error', new InvalidOptionError('options.maxPartitions', `at least ${partitions} (the partitions of ${t.name})`, this.partitioner.options.maxPartitions));
        continue;
      }
      info.partitions = partitions;
    }
  }

  /** librdkafka statistics: each partition's queue depth becomes a penalty for hot keys. */
  private statistics(event: { message: string }): void {
    let stats: any;
    try {
      stats = JSON.parse(event.message);
    } catch {
      return;
    }
    if (!stats?.topics) {
      this.emit('stats', stats);
      return;
    }
    for (const [name, t] of Object.entries<any>(stats.topics)) {
      const info = this.topics.get(name);
      if (!info || info.partitions === 0) continue;
      const depth: number[] = new Array(info.partitions).fill(0);
      for (const [id, p] of Object.entries<any>(t.partitions ?? {})) {
        const i = Number(id);
        if (i >= 0 && i < info.partitions) depth[i] = (p.msgq_cnt ?? 0) + (p.xmit_msgq_cnt ?? 0);
      }
      info.queueDepth = depth;
      if (!this.options.queuePenalty) continue;
      // A queued message is load not yet visible to the broker: as a share of what a
      // partition receives over the load horizon, above the least queued partition.
      const perPartition = this.partitioner.recentMessagesPerPartition(name);
      if (perPartition <= 0) continue;
      const least = Math.min(...depth);
      depth.forEach((d, p) => this.partitioner.setPartitionPenalty(name, p, (d - least) / perPartition));
    }
    this.emit('stats', stats);
  }

  /** Waits until every message handed over (or held) has its delivery report, or the timeout. */
  async flush(timeoutMs = 30_000): Promise<void> {
    checkTimeout('timeoutMs', timeoutMs);
    const deadline = Date.now() + timeoutMs;
    // Messages held for a handoff go as the delivery reports they wait for arrive (poll()).
    while (this.held() > 0 || this.roomWaiters.length > 0) {
      if (Date.now() > deadline) throw new UndeliveredError(`flush timed out with ${this.held()} messages still held`, this.held() + this.inflight);
      await new Promise((r) => setTimeout(r, 5));
      if (this.backlog.length > this.backlogHead || this.roomWaiters.length > 0) this.drain();
      else this.poll();
    }
    // Never connected (or a failed connect()): nothing can be in flight, and node-rdkafka's flush would throw.
    if (!this.connected) return;
    await new Promise<void>((resolve, reject) => {
      try {
        this.client.flush(Math.max(0, deadline - Date.now()), (err) => {
          if (!err) return resolve();
          // node-rdkafka reports a flush timeout as code -1 ("Local: Timed out"), or -185.
          if (err.code === ERR_TIMED_OUT || /timed out/i.test(String(err.message))) reject(new UndeliveredError(`flush timed out with ${this.inflight} messages unconfirmed`, this.inflight));
          else reject(toKafkaError(err, 'flush'));
        });
      } catch (err) {
        // A wrapped producer the application disconnected: node-rdkafka throws a plain Error.
        reject(toKafkaError(err, 'flush'));
      }
    });
    // Reports already queued by librdkafka are dispatched by poll().
    while (this.inflight > 0 && Date.now() < deadline) {
      this.poll();
      await new Promise((r) => setTimeout(r, 2));
    }
    if (this.inflight > 0) throw new UndeliveredError(`flush timed out with ${this.inflight} messages unconfirmed`, this.inflight);
  }

  /**
   * Flushes, then disconnects, all within `timeoutMs`. If some messages could not be confirmed
   * in time, their send() promises reject and this rejects with an UndeliveredError that counts
   * them. A call while one is under way returns that one's promise.
   */
  disconnect(timeoutMs = 30_000): Promise<void> {
    try {
      checkTimeout('timeoutMs', timeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.disconnecting !== undefined) return this.disconnecting;
    if (this.closed) return Promise.resolve();
    const done = this.close(timeoutMs);
    this.disconnecting = done;
    const forget = (): void => {
      this.disconnecting = undefined;
    };
    done.then(forget, forget);
    return done;
  }

  private async close(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.closing = true;
    let failure: unknown;
    try {
      // The client's own disconnect needs a moment of the budget (it flushes again, then stops its threads).
      await this.flush(Math.max(0, timeoutMs - (this.owned ? CLIENT_DISCONNECT_MS : 0)));
    } catch (err) {
      failure = err;
    }
    this.closed = true;
    const undelivered = new UndeliveredError('disconnected before delivery was confirmed', this.inflight);
    for (const pending of this.unconfirmed) pending.reject(undelivered);
    this.unconfirmed.clear();
    for (const waiter of this.roomWaiters.splice(0)) waiter();
    for (let i = this.backlogHead; i < this.backlog.length; i++) {
      const pending = this.backlog[i].pending;
      if (pending && pending !== this.mark) pending.reject(undelivered);
    }
    for (const m of this.handoff?.take() ?? []) {
      if (m.pending && m.pending !== this.mark) m.pending.reject(undelivered);
    }
    this.backlog = [];
    this.backlogHead = 0;
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.partitioner.close();
    this.client.removeListener('delivery-report', this.onReport);
    this.client.removeListener('event.stats', this.onStats);
    for (const undo of this.unpatch.splice(0)) undo();
    if (this.unregister !== undefined) this.unregister();
    if (this.owned && this.connected) {
      // node-rdkafka's disconnect(ms) flushes for ms, then destroys the client, which waits for
      // requests in flight: past the deadline that goes on in the background.
      const left = Math.max(CLIENT_DISCONNECT_MS, deadline - Date.now());
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
        (this.client as unknown as Kafka.Producer).disconnect(left, () => resolve());
      });
      clearTimeout(timer);
    }
    this.connected = false;
    if (failure) throw failure;
  }

  /**
   * A Writable stream of messages to `topic`: write `{ value, key?, headers?, timestamp? }`
   * objects (or a Buffer / string value). It honours back-pressure, and fails with the first
   * delivery error; 'finish' comes after every written message is delivered.
   */
  writable(topic: string): Writable {
    if (typeof topic !== 'string' || topic.length === 0) throw new InvalidArgTypeError('topic', 'a non-empty string', topic);
    let outstanding = 0;
    let finishing: (() => void) | undefined;
    let failed: Error | undefined;
    const settle = (): void => {
      outstanding--;
      if (outstanding === 0 && finishing) finishing();
    };
    const stream: Writable = new Writable({
      objectMode: true,
      write: (chunk: any, _encoding, callback) => {
        if (failed) return callback(failed);
        const isValue = typeof chunk === 'string' || chunk instanceof Uint8Array;
        const message = isValue ? { value: chunk } : chunk;
        if (typeof message !== 'object' || message === null) return callback(new InvalidArgTypeError('chunk', 'a message object, Buffer, Uint8Array or string', chunk));
        outstanding++;
        let held = false;
        let sent: Promise<DeliveryReport>;
        try {
          held = this.backlog.length > this.backlogHead;
          sent = this.send(topic, message.value ?? null, message.key, message.headers, message.timestamp);
        } catch (err) {
          outstanding--;
          return callback(err as Error);
        }
        sent.then(settle, (err) => {
          failed = failed ?? err;
          settle();
          stream.destroy(err);
        });
        if (this.backlog.length > this.backlogHead || held) this.once('drain', () => callback());
        else callback();
      },
      final: (callback) => {
        if (outstanding === 0) return callback(failed);
        finishing = () => callback(failed);
      },
    });
    return stream;
  }

  /** Per-topic rates, per-partition load and imbalance, hot keys and queue depths. */
  metrics(): ProducerMetrics {
    return this.metrics$.snapshot(this.topics, this.partitioner, this.inflight, this.held());
  }

  /** Messages taken and not yet handed to librdkafka: the backlog and those waiting for a handoff. */
  private held(): number {
    return this.backlog.length - this.backlogHead + (this.handoff?.held ?? 0);
  }
}

/** A HighLevelProducer serializer applied to one key or value; only synchronous ones can be. */
function serialize(serializer: HighLevelLike['keySerializer'], value: unknown, what: 'key' | 'value'): unknown {
  if (serializer === undefined || typeof serializer.apply !== 'function') return value;
  if (serializer.async) {
    throw new StateError(`the wrapped HighLevelProducer has an asynchronous ${what} serializer: DynamicProducer must know the ${what} before it partitions; use a synchronous one`);
  }
  const out = serializer.apply(value);
  if (out !== null && typeof out === 'object' && typeof (out as Promise<unknown>).then === 'function') {
    throw new StateError(`the wrapped HighLevelProducer's ${what} serializer returned a Promise: DynamicProducer needs a synchronous one`);
  }
  return out;
}

/**
 * Swaps dynamic partitioning into an app that already has a connected node-rdkafka
 * Producer or HighLevelProducer (or a producer with the same interface). The existing
 * producer keeps its configuration; its `partitioner` topic setting (librdkafka's default if
 * unset) becomes the base partitioner. send() needs delivery reports (dr_cb) enabled on it
 * (a HighLevelProducer always has them). A HighLevelProducer's key and value serializers are
 * applied here, before partitioning, so the partition is the serialized key's; they must be
 * synchronous.
 */
export function wrapProducer(existing: ProducerLike, options: DynamicProducerOptions = {}): DynamicProducer {
  if (typeof existing !== 'object' || existing === null || typeof existing.produce !== 'function' ||
    typeof existing.getMetadata !== 'function' || typeof existing.on !== 'function') {
    throw new InvalidArgTypeError('existing', 'a node-rdkafka Producer (with produce, getMetadata and on)', existing);
  }
  if (typeof existing.isConnected === 'function' && !existing.isConnected()) {
    throw new StateError('wrapProducer needs a connected producer: call connect() on it first');
  }
  // A HighLevelProducer polls fast only for messages of its own produce(): poll for ours.
  // pollIntervalMs defaults differently here; anything but an options object is left for the schema to refuse.
  const given = options as Record<string, unknown> | null | undefined;
  const withPolling = typeof given === 'object' && given !== null && !Array.isArray(given) && given.pollIntervalMs === undefined
    ? { ...given, pollIntervalMs: isHighLevel(existing) ? 5 : 0 }
    : given;
  const producer = new DynamicProducer({}, {}, withPolling as DynamicProducerOptions, existing);
  producer.refreshMetadata().catch((err) => producer.emit('error', err));
  return producer;
}

