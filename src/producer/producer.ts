// DynamicProducer: node-rdkafka's Producer with the partition chosen here. The data path:
//   send(topic, value, key) → one WebAssembly decision (DynamicPartitioner) → produce() with
//   that explicit partition (+ an order header for a spread key) → delivery report →
//   the promise / 'delivery' event → metrics.
// This file is the coordinator: the public API, connect / flush / disconnect, and the send
// path. Its parts: metadata.ts (partition counts), unplaced.ts (a new topic's messages waiting
// for its count), backlog.ts (messages held while librdkafka's queue is full), delivery.ts
// (delivery reports and promises), handoff.ts (ordered handoffs of relocated keys), polling.ts,
// statistics.ts (queue depths into penalties), client.ts (the only reader of node-rdkafka's
// private fields), input.ts (argument checks), stream.ts.

// Node's global Buffer is a getter on globalThis, called at each read: the module's is a plain binding.
import { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';
import type * as Kafka from 'node-rdkafka';
import { kafkaLibrary, warnIfBothLoaded, type KafkaLibrary } from '../core/library';
import { DynamicPartitioner } from '../partitioner/partitioner';
import { ORDER_NONE } from '../core/abi';
import { DynamicPartitionerOptions, PARTITIONER_OPTION_NAMES, PRODUCER_DEFAULTS, PRODUCER_OPTION_NAMES, ProducerSettings, resolveProducerOptions } from '../core/options';
import { partitionerCode } from '../core/hash';
import { Handoff, Link } from './handoff';
import { ConsumerProgress, type TopicProgress } from './progress';
import { OrderChains, newProducerId } from '../partitioner/headers';
import { splitConfig, basePartitioner, checkNotOptions, configError, Config, LIBRDKAFKA_DEFAULT_PARTITIONER } from '../core/config';
import { InvalidArgTypeError, KafkaError, StateError, UndeliveredError, checkTimeout, toKafkaError } from '../core/errors';
import { delay, within } from '../core/time';
import { checkKey } from '../core/key';
import { Metrics, ProducerMetrics, registerPrometheus } from './metrics';
import { deliversReports, isHighLevel, nativeBinding } from './client';
import type { HighLevelLike, NativeProducer } from './client';
import type { Key } from '../core/key';
import { Metadata, type TopicInfo } from './metadata';
import { Unplaced, UNPLACED_WAIT_MS, type UnplacedMessage } from './unplaced';
import { topicsKept } from '../core/topic-table';
import { Backlog, ERR_QUEUE_FULL } from './backlog';
import { Delivery, OURS, interceptReports } from './delivery';
import { Polling } from './polling';
import { applyStatistics } from './statistics';
import { badTimestamp, checkHeaders, serialize, timestampError, withoutForwarded } from './input';
import { ConnectOptions, resolveConnectOptions } from './connect-options';
import { type Connectable, ERR__TIMED_OUT, connectClient } from '../core/connect';
import { hideSecrets } from '../core/secrets';
import { writableOf } from './stream';
import { SEND } from './types';
import { chosenEngine, nativeAddon, nativeMissing } from '../core/native';
import { NativeClient } from './native-client';
import { Batch, type BatchMessage, Member } from './batch';
import { LINK } from './handoff';
import type { DeliveryReport, DynamicProducerOptions, Headers, Pending, ProducerLike, Queued, Value, Waiting } from './types';

export { PRODUCER_DEFAULTS };
export type { BatchMessage };
export type { ConnectOptions, DeliveryReport, DynamicProducerOptions, Headers, ProducerLike, Value };

// librdkafka error codes (rdkafka.h) the producer reacts to.
const ERR_UNKNOWN_PARTITION = -190;
const ERR_UNKNOWN_TOPIC = -188;
/** Not a librdkafka code: a produce() that threw something without one. */
const ERR_UNKNOWN_FAILURE = -1_000_000;
/** How often a gated handoff is looked at again between a LagMonitor's reads (ms). */
const GATE_CHECK_MS = 100;

/** A send()'s promise handlers and key: the opaque its message goes with. */
class SendPending implements Pending {
  resolve!: (report: DeliveryReport) => void;
  reject!: (err: Error) => void;
  constructor(public key: Key | null) {}
}
// The mark on the prototype: one property fewer on each of them.
Object.defineProperty(SendPending.prototype, SEND, { value: true });

/** The SendPending a send()'s promise is being made for: its executor is one function, not a closure per call. */
let making: SendPending;
function takeHandlers(resolve: (report: DeliveryReport) => void, reject: (err: Error) => void): void {
  making.resolve = resolve;
  making.reject = reject;
}

/** What disconnect(timeoutMs) keeps of its budget for the client's own disconnect (and gives it at least). */
const CLIENT_DISCONNECT_MS = 100;

/** librdkafka's default queue.buffering.max.messages (CONFIGURATION.md). */
const LIBRDKAFKA_QUEUE_MESSAGES = 100_000;

/** queue.buffering.max.messages of a global configuration (a number or a numeric string), or librdkafka's default. */
function queueLimit(config: Config | undefined): number {
  const value = Number(config?.['queue.buffering.max.messages']);
  return Number.isInteger(value) && value > 0 ? value : LIBRDKAFKA_QUEUE_MESSAGES;
}

function librdkafkaMessage(code: number, library: KafkaLibrary | undefined): string {
  const name = Object.entries(library?.CODES?.ERRORS ?? {}).find(([, v]) => v === code)?.[0];
  return name ? `${name} (${code})` : `librdkafka error ${code}`;
}

export declare interface DynamicProducer {
  on(event: 'ready', listener: () => void): this;
  on(event: 'delivery', listener: (err: KafkaError | null, report: DeliveryReport) => void): this;
  on(event: 'drain', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'hot' | 'cooled', listener: (key: import('../partitioner/partitioner').HotKey) => void): this;
  on(event: 'stats', listener: (stats: unknown) => void): this;
  /** A CallbackError: options.spreadable threw (the key was kept on its own partition). */
  on(event: 'warning', listener: (err: Error) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

export class DynamicProducer extends EventEmitter {
  /** The node-rdkafka-style producer underneath. */
  readonly client: ProducerLike;
  /** The client library (options.kafka, or node-rdkafka) when this producer made its client, or was given one. */
  private readonly library: KafkaLibrary | undefined;
  readonly partitioner: DynamicPartitioner;
  readonly producerId: Buffer;
  private readonly options: ProducerSettings;
  private readonly code: number;
  private readonly owned: boolean;
  /** A wrapped node-rdkafka HighLevelProducer: produced through its plain produce(), its serializers applied here. */
  private readonly highLevel: boolean;
  /** Whether the client emits delivery reports (dr_cb / dr_msg_cb); send() needs them. */
  private readonly reports: boolean;
  /** Messages in flight (handed over, report not yet taken) beyond which a message waits as on a full queue. */
  private readonly maxInflight: number;
  /** The binding of a producer we own (calls skip node-rdkafka's JS wrapper and its exceptions), or the native engine's client. */
  private native: NativeProducer | undefined;
  /** The native engine's client, when this producer runs on it ('native' in metrics()). */
  private readonly engine: NativeClient | undefined;
  private lastProduceError: unknown;
  private readonly metadata: Metadata;
  private readonly backlog: Backlog<Queued>;
  /** Messages whose topic's partition count is not known yet, waiting for it. */
  private readonly unplaced: Unplaced;
  private readonly delivery: Delivery;
  private readonly polling: Polling;
  /** Whether the message being enqueued took an order header (given back if it is refused). */
  private marked = false;
  /** orderHeaders 'spread': spread and moved messages carry an order header. */
  private readonly marking: boolean;
  /** The order header object of the message being enqueued (when marked). */
  private lastHeader: Record<string, string> | undefined;
  private readonly orders: OrderChains;
  /** Relocated keys' ordered handoffs; none without order headers or delivery reports. */
  private readonly handoff: Handoff<Waiting> | undefined;
  /** A consumer group's progress, from an attached LagMonitor: it gates the handoffs. */
  private readonly progress = new ConsumerProgress();
  /** Asks the gate again while it is set (it holds a move at most holdMs). */
  private progressTimer: NodeJS.Timeout | undefined;
  private connected = false;
  private closing = false;
  private closed = false;
  /** The disconnect() under way, returned to any other call until it settles. */
  private disconnecting: Promise<void> | undefined;
  private readonly metrics$: Metrics;
  /** Undoes the interception of a wrapped client's reports, at disconnect. */
  private unintercept: (() => void) | undefined;
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
    const engine = chosenEngine(options, this.options.engine);
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
    this.partitioner.on('warning', (err) => this.emit('warning', err));
    let mark: Pending | undefined;
    if (existing) {
      // A wrapped producer's library is not loaded here (only its error names are read of it).
      this.library = this.options.kafka;
      warnIfBothLoaded();
      this.client = existing;
      this.owned = false;
      this.highLevel = isHighLevel(existing);
      this.reports = deliversReports(existing);
      mark = OURS;
      this.connected = existing.isConnected ? existing.isConnected() : true;
    } else {
      // librdkafka partitions the messages we leave unassigned (topic count not known yet)
      // with the same partitioner, so they land where we would have put them.
      const topic = { ...split.topic, partitioner: base };
      const global: Config = { ...split.global };
      if (global.dr_cb === undefined && !global.dr_msg_cb) global.dr_cb = true;
      this.library = kafkaLibrary(this.options.kafka);
      const addon = engine === 'client' ? undefined : nativeAddon(this.options.kafka);
      try {
        if (engine === 'native' && addon === undefined) {
          throw new StateError(`engine 'native': ${nativeMissing()}`);
        }
        if (addon !== undefined) {
          // Without reports, librdkafka still reports the messages it could not deliver: they are told as 'delivery' errors.
          if (!global.dr_cb && !global.dr_msg_cb && global['delivery.report.only.error'] === undefined) global['delivery.report.only.error'] = true;
          this.engine = new NativeClient(addon, global, topic);
          this.client = this.engine as unknown as ProducerLike;
        } else {
          this.client = new this.library.Producer(global as any, topic as any) as unknown as ProducerLike;
        }
      } catch (err) {
        this.partitioner.close();
        if (err instanceof StateError) throw err;
        throw configError(err, globalConfig, topicConfig);
      }
      hideSecrets(this.client);
      this.owned = true;
      this.highLevel = false;
      this.reports = Boolean(global.dr_cb || global.dr_msg_cb);
    }
    this.marking = this.options.orderHeaders === 'spread';
    // librdkafka frees a message's room in its queue when it hands the delivery report over,
    // and node-rdkafka passes reports to JavaScript in batches on later turns of the event loop:
    // a caller producing faster than they are passed would pile them up (and their memory)
    // without bound. Messages in flight count against librdkafka's queue limit instead.
    this.maxInflight = queueLimit(existing ? existing.globalConfig : split.global);
    this.handoff = this.marking && this.reports && this.partitioner.options.relocate && this.partitioner.options.spread
      ? new Handoff<Waiting>(this.partitioner.trackedKeysBound, (m) => this.released(m), (entry, held) => this.partitioner.hold(entry, held))
      : undefined;
    const nativeClient = this.engine;
    this.delivery = new Delivery(this.owned, mark, this.reports, nativeClient !== undefined ? () => nativeClient.inflightOpaques() : undefined);
    this.metadata = new Metadata({
      client: this.client,
      connected: () => this.connected,
      error: (err) => this.emit('error', err),
      refreshMs: this.options.metadataRefreshMs,
      // Beyond the partitioner's topics with state: a topic it places without state still needs its count here.
      maxEntries: topicsKept(this.partitioner.options.maxTopics),
      maxPartitions: this.partitioner.options.maxPartitions,
      known: (topic) => this.unplaced.known(topic),
      waiting: (topic) => this.unplaced.holds(topic),
    });
    this.unplaced = new Unplaced(UNPLACED_WAIT_MS, (m) => this.placeUnplaced(m), (topic) => {
      const info = this.metadata.topics.get(topic);
      if (info !== undefined) info.unassigned = true;
    });
    this.backlog = new Backlog<Queued>(this.options.maxQueued, {
      poll: () => this.poll(),
      handOver: (m) => this.handOver(m.topic, m.partition, m.value, m.key, m.timestamp, m.pending, m.headers, m.link),
      refused: (code, m) => this.refused(code, m),
      held: () => this.held(),
      drained: () => this.emit('drain'),
    });
    this.polling = new Polling(this.client, () => this.poll(), () => this.delivery.inflight);
    this.metrics$ = new Metrics();
    this.onReport = (err, report) => this.delivered(err, report);
    this.onStats = (event) => this.statistics(event);
    if (this.engine !== undefined) {
      this.engine.deliverTo(
        (opaque, code, topic, partition, offset, timestamp, size, key, value) => this.nativeReport(opaque, code, topic, partition, offset, timestamp, size, key, value),
        (opaque, code, topic, partition, key) => this.nativeRefused(opaque, code, topic, partition, key),
        (topic) => this.metadata.request(topic, true),
      );
    }
    else if (this.owned) this.client.on('delivery-report', this.onReport);
    else this.unintercept = interceptReports(this.client, this.delivery, this.onReport, () => this.closed);
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

  /**
   * Connects (if this producer owns its client) and reads the partition counts of all topics;
   * `options.topics`: also of these, waiting until each is known (a topic being created answers
   * with none at first), so that their first messages are partitioned here. A count not known
   * within `timeoutMs` rejects with a KafkaError (the client stays connected).
   */
  async connect(timeoutMs = 30_000, options?: ConnectOptions): Promise<void> {
    checkTimeout('timeoutMs', timeoutMs);
    const { topics } = resolveConnectOptions(options, this.partitioner.options.maxTopics);
    if (this.closed) throw new StateError('this producer was disconnected');
    const deadline = Date.now() + timeoutMs;
    if (!this.connected) {
      const client = this.client as unknown as Kafka.Producer;
      await connectClient(client as unknown as Connectable, timeoutMs);
      this.connected = true;
      this.native = this.engine ?? nativeBinding(client);
      this.started();
    }
    await this.refreshMetadata(undefined, timeoutMs).catch((err) => this.emit('error', err));
    await Promise.all(topics.map((topic) => this.metadata.whenKnown(topic, deadline)));
    this.emit('ready');
  }

  private started(): void {
    this.metadata.start();
    // The native engine is woken by librdkafka when reports come: nothing to poll.
    if (this.engine !== undefined) return;
    if (this.options.pollIntervalMs > 0) this.polling.every(this.options.pollIntervalMs);
    else if (this.reports) this.polling.watch();
  }

  /**
   * Produces one message; synchronous. Returns true when librdkafka took it (or a handoff
   * holds it), false when it was held here because librdkafka's queue is full, or because
   * maxQueued messages wait for handoffs: it is still sent, in order, and a 'drain' event
   * follows once there is room again (as Node streams do).
   */
  produce(topic: string, value: Value, key?: Key | null, headers?: Headers, timestamp?: number | null): boolean {
    if (this.backlog.waiting > 0) {
      // send() calls are waiting for room: this message goes behind them, in call order.
      this.checkMessage(topic, value, key, headers, timestamp);
      this.backlog.waitForRoom(() => {
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
      checkKey('key', key);
    }
    if (headers !== undefined && headers !== null) checkHeaders(headers);
    if (timestamp !== undefined && timestamp !== null && badTimestamp(timestamp)) throw timestampError(timestamp);
  }

  /** Produces one message and resolves with its delivery report (rejects with KafkaError). Waits while too much is held. */
  send(topic: string, value: Value, key?: Key | null, headers?: Headers, timestamp?: number | null): Promise<DeliveryReport> {
    if (!this.reports) {
      return Promise.reject(new StateError('send() needs delivery reports: this producer has dr_cb and dr_msg_cb off (use produce())'));
    }
    const pending = new SendPending(key ?? null);
    making = pending;
    const promise = new Promise<DeliveryReport>(takeHandlers);
    if (!this.closing && this.held() < this.options.maxQueued) {
      // The common case: room, no closure made.
      try {
        this.enqueue(topic, value, key, headers, timestamp, pending);
      } catch (err) {
        pending.reject(err as Error);
      }
      return promise;
    }
    const attempt = (): void => {
      if (this.closed) {
        pending.reject(new StateError('this producer was disconnected'));
        return;
      }
      if (this.closing) {
        pending.reject(new StateError('this producer is disconnecting'));
        return;
      }
      if (this.held() >= this.options.maxQueued) {
        this.backlog.waitForRoom(attempt);
        return;
      }
      try {
        this.enqueue(topic, value, key, headers, timestamp, pending);
      } catch (err) {
        pending.reject(err as Error);
      }
    };
    attempt();
    return promise;
  }

  private enqueue(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined, pending: Pending | undefined): boolean {
    if (!this.connected || this.closing) {
      throw new StateError(this.closed ? 'this producer was disconnected' : this.closing ? 'this producer is disconnecting' : 'connect() first');
    }
    const metadata = this.metadata;
    let info = metadata.last;
    if (topic !== metadata.lastName || info === undefined) info = metadata.entry(topic);
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
    if (timestamp !== undefined && timestamp !== null && badTimestamp(timestamp)) throw timestampError(timestamp);
    if (info.partitions <= 0 || this.unplaced.size > 0) {
      checkKey('key', key);
      if (this.unplaced.holds(topic) || (info.partitions <= 0 && !info.unassigned)) {
        // Its topic's count is not known yet: it waits here for it (unplaced.ts), behind the
        // topic's messages already waiting, and is placed when it comes. Taken.
        this.metadata.request(topic);
        const m: UnplacedMessage = { topic, value: payload, key, timestamp, headers, forwarded, pending };
        if (this.held() < this.options.maxQueued / 2) {
          this.unplaced.hold(m);
          return true;
        }
        // Too much held: the topic's messages go unassigned, in call order, this one last.
        this.unplaced.hold(m);
        this.unplaced.giveUp(topic);
        return !this.backlog.holding;
      }
    }
    return this.place(topic, info, payload, key, headers, forwarded, timestamp, pending, true);
  }

  /**
   * The partitioning decision, and the message handed over: the partition (-1: the count is
   * unknown, and librdkafka places it), the order header of a marked message, and its handoff.
   * `canThrow`: a refusal throws (produce()'s own call) rather than being reported.
   */
  private place(topic: string, info: TopicInfo, payload: Buffer | null, key: Key | null | undefined, headers: Headers | undefined,
    forwarded: number, timestamp: number | null | undefined, pending: Pending | undefined, canThrow: boolean): boolean {
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
      if (order !== ORDER_NONE && this.marking) {
        headers = this.orderHeaders(order, info.partitions, partition, headers, forwarded);
        forwarded = -1;
        if (this.handoff !== undefined) {
          entry = decision.entry;
          after = this.handoff.waitFor(entry, order, topic, partition, this.lastHeader!);
          link = this.handoff.track(entry, order, partition, pending ?? this.delivery.mark);
        }
      } else if (this.handoff !== undefined && this.handoff.held > 0) {
        entry = decision.entry;
      }
    } else {
      this.metadata.request(topic);
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
    pending = pending ?? this.delivery.mark;
    if (after !== undefined || (entry >= 0 && this.handoff!.busy(entry))) {
      // An ordered handoff: it goes once its predecessor's offset is known (and behind the
      // key's messages already waiting). Taken: it is sent, or its caller told.
      this.handoff!.hold(entry, { topic, partition, value: payload, key, timestamp, headers, pending, link, header: this.lastHeader, after });
      if (this.held() < this.options.maxQueued) return true;
      // The memory bound: produce() says false as on a full queue, and 'drain' follows.
      this.backlog.owe();
      return false;
    }
    if (this.backlog.holding) {
      this.backlog.hold({ topic, partition, value: payload, key, timestamp, headers, pending, link });
      return false;
    }
    const code = this.handOver(topic, partition, payload, key, timestamp, pending, headers, link);
    if (code === 0) return true;
    if (code === ERR_QUEUE_FULL) {
      this.backlog.hold({ topic, partition, value: payload, key, timestamp, headers, pending, link });
      return false;
    }
    // Refused for good: give its order sequence back, so the key's chain has no gap.
    if (this.marked) this.orders.undo();
    if (link !== undefined) this.handoff!.undo();
    return this.failed(code, topic, partition, key, pending, canThrow);
  }

  /** A message whose topic's count it waited for: placed now (unassigned if the count did not come). */
  private placeUnplaced(m: UnplacedMessage): void {
    const info = this.metadata.topics.get(m.topic) ?? this.metadata.entry(m.topic);
    try {
      this.place(m.topic, info, m.value, m.key, m.headers, m.forwarded, m.timestamp, m.pending, false);
    } catch (err) {
      // Not a refusal (those are reported by place()): a fault here; its caller is told.
      if (m.pending !== undefined && m.pending !== this.delivery.mark) m.pending.reject(err as Error);
      else this.emit('error', err);
    }
  }

  /** A message held for a handoff whose turn came: produced now, or behind the backlog. */
  private released(m: Waiting): void {
    const code = this.backlog.holding
      ? ERR_QUEUE_FULL
      : this.handOver(m.topic, m.partition, m.value, m.key, m.timestamp, m.pending, m.headers, m.link);
    if (code === ERR_QUEUE_FULL) this.backlog.hold(m);
    else if (code !== 0) this.refused(code, m);
  }

  /** A message taken earlier and refused for good now: its successors go on, its caller is told. */
  private refused(code: number, m: Queued): void {
    if (m.link !== undefined) this.handoff!.settled(m.link, -1, -1);
    this.failed(code, m.topic, m.partition, m.key, m.pending, false);
    // No report follows it: an owed 'drain' is looked at once the release under way is done.
    if (this.backlog.owing) setImmediate(() => this.backlog.drainedIfDue());
  }

  /**
   * Gives a message to librdkafka; returns librdkafka's error code (0 on success). A stale
   * partition count is handled here: librdkafka places the message instead, and the count is
   * re-read.
   */
  private handOver(topic: string, partition: number, value: Buffer | null, key: Key | null | undefined,
    timestamp: number | null | undefined, pending: Pending | undefined, headers: Headers | undefined, link?: Link): number {
    if (this.delivery.inflight >= this.maxInflight) return ERR_QUEUE_FULL;
    const opaque = link ?? pending;
    const code = this.native !== undefined
      ? this.native.produce(topic, partition, value, key, timestamp, opaque, headers)
      : this.produceThrowing(topic, partition, value, key, timestamp, opaque, headers);
    if ((code === ERR_UNKNOWN_PARTITION || code === ERR_UNKNOWN_TOPIC) && partition !== -1) {
      this.metadata.request(topic, true);
      return this.handOver(topic, -1, value, key, timestamp, pending, headers, link);
    }
    if (code === 0) this.delivery.handedOver(pending);
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
    const cause = code === ERR_UNKNOWN_FAILURE ? this.lastProduceError : { code, message: librdkafkaMessage(code, this.library) };
    const failure = toKafkaError(cause, `produce to ${topic}`);
    const info = this.metadata.topics.get(topic);
    if (info) info.failed++;
    if (pending !== undefined && pending !== this.delivery.mark) pending.reject(failure);
    else if (canThrow) throw failure;
    else this.emit('delivery', failure, { topic, partition, offset: -1, key: key as any });
    return true;
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
    const settled = this.delivery.settle(err, report);
    if (settled === undefined) return;
    const { failure, link } = settled;
    report = settled.report;
    const metadata = this.metadata;
    const info = report?.topic === metadata.lastName ? metadata.last : metadata.topics.get(report?.topic);
    if (failure) {
      if (info) info.failed++;
      if (failure.librdkafkaCode === ERR_UNKNOWN_PARTITION || failure.librdkafkaCode === ERR_UNKNOWN_TOPIC) {
        if (report?.topic) this.metadata.request(report.topic, true);
      }
      this.emit('delivery', failure, report);
    } else {
      if (info) info.delivered++;
      this.emit('delivery', null, report);
    }
    if (link !== undefined) {
      this.handoff!.settled(link, report.partition, failure ? -1 : report.offset);
      if (this.backlog.waiting > 0) this.backlog.wake();
    }
    if (this.backlog.holding && !this.backlog.scheduledDrain) this.backlog.drain();
    else if (this.backlog.owing) this.backlog.drainedIfDue();
  }

  /**
   * A delivery report from the native engine, as arguments (no report object unless a send()
   * or a 'delivery' listener takes one): the same accounting as delivered().
   */
  private nativeReport(opaque: unknown, code: number, topic: string, partition: number, offset: number, timestamp: number, size: number, key: unknown, value?: Buffer | null): void {
    let link: Link | undefined;
    let pending = opaque as Pending | undefined;
    if (typeof opaque === 'object' && opaque !== null && (opaque as Link)[LINK] === true) {
      link = opaque as Link;
      pending = link.opaque as Pending | undefined;
    }
    const failure = code === 0 ? null : toKafkaError({ code, message: librdkafkaMessage(code, this.library) }, `delivery to ${topic} [${partition}]`);
    if (!this.reports) {
      // Reports off: librdkafka reports only what it could not deliver, and its caller is told.
      if (failure) this.emit('delivery', failure, { topic, partition, offset, key: key as Key, value, timestamp, size });
      return;
    }
    const sent = pending !== undefined && pending[SEND] === true;
    const listening = this.listenerCount('delivery') > 0;
    const report: DeliveryReport | undefined = sent || listening
      ? (sent || value === undefined
        ? { topic, partition, offset, key: sent ? pending!.key : (key as Key | null), timestamp, size }
        // dr_msg_cb: node-rdkafka's reports carry the value.
        : { topic, partition, offset, key: key as Key | null, value, timestamp, size } as DeliveryReport)
      : undefined;
    this.delivery.confirmed(pending, failure, report);
    const metadata = this.metadata;
    const info = topic === metadata.lastName ? metadata.last : metadata.topics.get(topic);
    if (failure) {
      if (info) info.failed++;
      if (code === ERR_UNKNOWN_PARTITION || code === ERR_UNKNOWN_TOPIC) this.metadata.request(topic, true);
    } else if (info) info.delivered++;
    if (listening) this.emit('delivery', failure, report);
    if (link !== undefined) {
      this.handoff!.settled(link, partition, failure ? -1 : offset);
      if (this.backlog.waiting > 0) this.backlog.wake();
    }
    if (this.backlog.holding && !this.backlog.scheduledDrain) this.backlog.drain();
    else if (this.backlog.owing) this.backlog.drainedIfDue();
  }

  /**
   * A message the native engine handed over with its batch and librdkafka refused for good (no
   * report follows): as a refusal at produce(), its send() rejects or 'delivery' tells.
   */
  private nativeRefused(opaque: unknown, code: number, topic: string, partition: number, key: unknown): void {
    let link: Link | undefined;
    let pending = opaque as Pending | undefined;
    if (typeof opaque === 'object' && opaque !== null && (opaque as Link)[LINK] === true) {
      link = opaque as Link;
      pending = link.opaque as Pending | undefined;
    }
    if (this.reports) this.delivery.confirmed(pending, null, undefined, true);
    if (link !== undefined) this.handoff!.settled(link, -1, -1);
    this.failed(code, topic, partition, key as Key, pending, false);
    if (this.backlog.owing) setImmediate(() => this.backlog.drainedIfDue());
  }

  /**
   * Produces `messages` to `topic`, each placed as send() places it, and resolves with their
   * delivery reports in input order once all are in. Nothing is checked per message after the
   * first is handed over: every message is checked first, and a bad one rejects the call with
   * nothing sent. If any message is not written, rejects with a BatchError whose `outcomes`
   * holds each message's report or error. Waits (as send() does) while maxQueued messages are held.
   */
  sendBatch(topic: string, messages: readonly BatchMessage[]): Promise<DeliveryReport[]> {
    if (!this.reports) {
      return Promise.reject(new StateError('sendBatch() needs delivery reports: this producer has dr_cb and dr_msg_cb off (use produce())'));
    }
    try {
      if (!Array.isArray(messages)) throw new InvalidArgTypeError('messages', 'an array of { value, key?, headers?, timestamp? }', messages);
      for (let i = 0; i < messages.length; i++) {
        const m = messages[i];
        if (typeof m !== 'object' || m === null) throw new InvalidArgTypeError(`messages[${i}]`, 'an object { value, key?, headers?, timestamp? }', m);
        this.checkMessage(topic, m.value, m.key, m.headers, m.timestamp);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<DeliveryReport[]>((resolve, reject) => {
      // Its messages go without waiting linger.ms: the caller handed a whole batch (docs/native.md).
      const engine = messages.length > 0 ? this.engine : undefined;
      engine?.hurry(1);
      const batch = new Batch(messages.length, resolve, reject, () => engine?.hurry(-1));
      let i = 0;
      const attempt = (): void => {
        for (; i < messages.length; i++) {
          const m = messages[i];
          const member = new Member(batch, i, m.key ?? null);
          if (this.closing || this.closed) {
            member.reject(new StateError(this.closed ? 'this producer was disconnected' : 'this producer is disconnecting'));
            continue;
          }
          if (this.held() >= this.options.maxQueued) {
            this.backlog.waitForRoom(attempt);
            return;
          }
          try {
            this.enqueue(topic, m.value, m.key, m.headers, m.timestamp, member);
          } catch (err) {
            member.reject(err as Error);
          }
        }
      };
      attempt();
    });
  }

  /** The caller's headers with ours added, or in place of the first `kdp-order` among them (at `forwarded`, -1: none). */
  private orderHeaders(order: number, partitions: number, partition: number, headers: Headers | undefined, forwarded: number): Headers {
    const header = this.orders.header(order, partitions, partition);
    this.marked = true;
    this.lastHeader = header;
    if (headers === undefined) return [header];
    return forwarded === -1 ? headers.concat(header) : withoutForwarded(headers, forwarded, header);
  }

  /**
   * Re-reads partition counts: of one topic (from then on in the producer's table), or of
   * every topic this producer has used. The producer reads them by itself (at a topic's first
   * message, again while a count is unknown, every metadataRefreshMs); this is for a caller
   * that knows a topic just changed, or wants a count known before it produces.
   */
  refreshMetadata(topic?: string, timeoutMs = 10_000): Promise<void> {
    return this.metadata.refresh(topic, timeoutMs);
  }

  /**
   * A LagMonitor's (`source`'s) read of its group's progress on `topic` (undefined: it stopped). While it is
   * known, a relocated key's move waits here, rather than in the consumer of its new partition,
   * while the consumers of its old partition are far behind its last message there
   * (progress.ts).
   * @internal
   */
  consumerProgress(topic: string, progress: TopicProgress | undefined, source?: object): void {
    if (this.handoff === undefined || this.closed) return;
    this.progress.update(topic, progress, source);
    const gated = !this.progress.empty;
    this.handoff.gate = gated ? this.gate : undefined;
    if (gated && this.progressTimer === undefined) {
      this.progressTimer = setInterval(() => this.handoff!.recheck(), GATE_CHECK_MS);
      this.progressTimer.unref();
    } else if (!gated) {
      this.stopProgress();
    }
    this.handoff.recheck();
  }

  /**
   * The handoffs' gate: the consumers' progress says whether a move waits here, as long as
   * what is held stays under half of maxQueued (beyond, the whole producer would wait for one
   * key's consumers).
   */
  private readonly gate = (topic: string, partition: number, offset: number, heldMs: number): boolean =>
    this.held() < this.options.maxQueued / 2 && this.progress.holds(topic, partition, offset, heldMs);

  private stopProgress(): void {
    if (this.progressTimer !== undefined) clearInterval(this.progressTimer);
    this.progressTimer = undefined;
  }

  /** librdkafka statistics: each partition's queue depth becomes a penalty for hot keys. */
  private statistics(event: { message: string }): void {
    const stats = applyStatistics(event.message, this.metadata.topics, this.partitioner, this.options.queuePenalty);
    if (stats !== undefined) this.emit('stats', stats);
  }

  /** Waits until every message handed over (or held) has its delivery report, or the timeout. */
  async flush(timeoutMs = 30_000): Promise<void> {
    checkTimeout('timeoutMs', timeoutMs);
    const deadline = Date.now() + timeoutMs;
    const delivery = this.delivery;
    // Messages held for a handoff go as the delivery reports they wait for arrive (poll()),
    // and without waiting for the consumers of the partitions their keys left.
    this.progress.open(true);
    try {
      this.handoff?.recheck();
      while (this.held() > 0 || this.backlog.waiting > 0) {
        if (Date.now() > deadline) throw new UndeliveredError(`flush timed out with ${this.held()} messages still held`, this.held() + delivery.inflight);
        await delay(5);
        if (this.backlog.holding || this.backlog.waiting > 0) this.backlog.drain();
        else this.poll();
      }
    } finally {
      this.progress.open(false);
    }
    // Never connected (or a failed connect()): nothing can be in flight, and node-rdkafka's flush would throw.
    if (!this.connected) return;
    await new Promise<void>((resolve, reject) => {
      try {
        this.client.flush(Math.max(0, deadline - Date.now()), (err) => {
          if (!err) return resolve();
          // node-rdkafka reports a flush timeout as code -1 ("Local: Timed out"), or -185.
          if (err.code === ERR__TIMED_OUT || /timed out/i.test(String(err.message))) reject(new UndeliveredError(`flush timed out with ${delivery.inflight} messages unconfirmed`, delivery.inflight));
          else reject(toKafkaError(err, 'flush'));
        });
      } catch (err) {
        // A wrapped producer the application disconnected: node-rdkafka throws a plain Error.
        reject(toKafkaError(err, 'flush'));
      }
    });
    // Reports already queued by librdkafka are dispatched by poll().
    while (delivery.inflight > 0 && Date.now() < deadline) {
      this.poll();
      await delay(2);
    }
    if (delivery.inflight > 0) throw new UndeliveredError(`flush timed out with ${delivery.inflight} messages unconfirmed`, delivery.inflight);
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
    const undelivered = new UndeliveredError('disconnected before delivery was confirmed', this.delivery.inflight);
    this.delivery.rejectUnconfirmed(undelivered);
    for (const m of this.backlog.take()) this.delivery.reject(m.pending, undelivered);
    for (const m of this.handoff?.take() ?? []) this.delivery.reject(m.pending, undelivered);
    for (const m of this.unplaced.take()) this.delivery.reject(m.pending, undelivered);
    this.metadata.stop();
    this.polling.stop();
    this.stopProgress();
    this.partitioner.close();
    this.client.removeListener('delivery-report', this.onReport);
    this.client.removeListener('event.stats', this.onStats);
    this.unintercept?.();
    if (this.unregister !== undefined) this.unregister();
    if (this.engine !== undefined) {
      // The native handle exists from construction: closed even if it never connected.
      const engine = this.engine;
      await within(new Promise<void>((resolve) => engine.disconnect(0, () => resolve())), Math.max(CLIENT_DISCONNECT_MS, deadline - Date.now()));
    } else if (this.owned && this.connected) {
      // node-rdkafka's disconnect(ms) flushes for ms, then destroys the client, which waits for
      // requests in flight: past the deadline that goes on in the background.
      const left = Math.max(CLIENT_DISCONNECT_MS, deadline - Date.now());
      await within(new Promise<void>((resolve) => (this.client as unknown as Kafka.Producer).disconnect(left, () => resolve())), left);
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
    return writableOf(this, topic, () => this.backlog.holding);
  }

  /** Per-topic rates, per-partition load and imbalance, hot keys and queue depths; `engine`: 'native' or 'client'. */
  metrics(): ProducerMetrics {
    const snapshot = this.metrics$.snapshot(this.metadata.topics, this.partitioner, this.delivery.inflight, this.held());
    return { ...snapshot, engine: this.engine !== undefined ? 'native' : 'client' };
  }

  /** Messages taken and not yet handed to librdkafka: the backlog, those waiting for a handoff or for their topic's count. */
  private held(): number {
    return this.backlog.size + (this.handoff?.held ?? 0) + this.unplaced.size;
  }
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
