// DynamicProducer: node-rdkafka's Producer with the partition chosen here. The data path:
//   send(topic, value, key) → one WebAssembly decision (DynamicPartitioner) → produce() with
//   that explicit partition (+ an order header for a spread key) → delivery report →
//   the promise / 'delivery' event → metrics.
// This file is the public class: its API, the parts it is composed of (wired in the
// constructor), connect / flush / disconnect. The parts, one folder per stage of the data path:
//   take/       what is taken in: intake.ts (produce / send / sendBatch), room.ts (the calls waiting for room),
//               input.ts (argument checks), and the promise given back: send-promise.ts (one send()),
//               send-batch.ts (one sendBatch());
//   place/      where it goes: placement.ts, unplaced.ts (a new topic's messages waiting for its count),
//               metadata.ts (partition counts);
//   hold/       what waits: backlog.ts (librdkafka's queue full), key-handoffs.ts (ordered handoffs of
//               relocated keys), progress.ts (the consumers' progress that gates them);
//   hand-over/  to librdkafka: hand-over.ts (the client's produce()), client-adapter.ts (the client made or
//               wrapped, connected, flushed, disconnected; the native engine's is src/native/produce.ts),
//               client-fields.ts (the only reader of node-rdkafka's private fields), polling.ts;
//   settle/     and back: outcomes.ts (what a report or a refusal does), delivery.ts (the accounting),
//               opaque.ts (what a message's opaque settles, read in one place), send-groups.ts (send()
//               calls settled in groups on the native engine).
// Beside it: transactions.ts (its base class: initTransactions ... abortTransaction, with transactional.id),
// wrap.ts (wrapProducer: this class over an application's producer), types.ts,
// connect-options.ts, statistics.ts (queue depths into penalties), stream.ts, metrics.ts.

import type { Writable } from 'node:stream';
import { DynamicPartitioner } from '../partitioner/partitioner';
import { DynamicPartitionerOptions, PARTITIONER_OPTION_NAMES, PRODUCER_DEFAULTS, PRODUCER_OPTION_NAMES, ProducerSettings, resolveProducerOptions } from '../core/options';
import { partitionerCode } from '../core/hash';
import { KeyHandoffs } from './hold/key-handoffs';
import { ProgressGate, type TopicProgress } from './hold/progress';
import { OrderChains, newProducerId } from '../partitioner/headers';
import { splitConfig, basePartitioner, checkNotOptions, Config, LIBRDKAFKA_DEFAULT_PARTITIONER } from '../core/config';
import { InvalidArgTypeError, KafkaError, StateError, UndeliveredError, checkTimeout } from '../core/errors';
import { type TransactionalClient, TransactionCalls, Transactions } from './transactions';
import { delay } from '../core/time';
import { Metrics, ProducerMetrics, registerOrClose, relayPartitionerEvents } from './metrics';
import type { NativeProducer } from './hand-over/client-fields';
import type { Key } from '../core/key';
import { Metadata } from './place/metadata';
import { Unplaced, UNPLACED_WAIT_MS } from './place/unplaced';
import { topicsKept } from '../core/topic-table';
import { Backlog } from './hold/backlog';
import { Delivery } from './settle/delivery';
import { Polling } from './hand-over/polling';
import { applyStatistics } from './statistics';
import { ConnectOptions, resolveConnectOptions } from './connect-options';
import { writableOf } from './stream';
import { chosenEngine } from '../native/addon';
import { Lifecycle, type Phase } from '../core/lifecycle';
import { CLIENT_DISCONNECT_MS, ClientAdapter } from './hand-over/client-adapter';
import { HandOver } from './hand-over/hand-over';
import { Outcomes } from './settle/outcomes';
import { Placement } from './place/placement';
import { Intake, traceSends } from './take/intake';
import { Room } from './take/room';
import type { DeliveryReport, DynamicProducerOptions, Headers, OutgoingMessage, ProducerLike, Queued, Value, Waiting } from './types';

export { PRODUCER_DEFAULTS };
export type { ConnectOptions, DeliveryReport, DynamicProducerOptions, Headers, OutgoingMessage, ProducerLike, Value };

export declare interface DynamicProducer {
  on(event: 'ready', listener: () => void): this;
  on(event: 'delivery', listener: (err: KafkaError | null, report: DeliveryReport) => void): this;
  on(event: 'drain', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'hot' | 'cooled', listener: (key: import('../partitioner/hot-keys').HotKey) => void): this;
  on(event: 'stats', listener: (stats: unknown) => void): this;
  /** A CallbackError: options.spreadable threw (the key was kept on its own partition). */
  on(event: 'warning', listener: (err: Error) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

export class DynamicProducer extends TransactionCalls {
  /** The node-rdkafka-style producer underneath. */
  readonly client: ProducerLike;
  readonly partitioner: DynamicPartitioner;
  readonly producerId: Buffer;
  private readonly options: ProducerSettings;
  /** The client made or wrapped, and all done to it but produce (hand-over/client-adapter.ts). */
  private readonly adapter: ClientAdapter;
  private readonly metadata: Metadata;
  private readonly backlog: Backlog<Queued>;
  /** The calls waiting for room while maxQueued messages are held. */
  private readonly room: Room;
  /** Messages whose topic's partition count is not known yet, waiting for it. */
  private readonly unplaced: Unplaced;
  private readonly delivery: Delivery;
  private readonly polling: Polling;
  /** Relocated keys' ordered handoffs; none without order headers or delivery reports. */
  private readonly handoffs: KeyHandoffs<Waiting> | undefined;
  /** A consumer group's progress, from an attached LagMonitor: it gates the handoffs (with them only). */
  private readonly gate: ProgressGate | undefined;
  /** Spread keys' order chains (place/placement.ts marks messages with them; orderChains() counts them). */
  private readonly orders: OrderChains;
  private readonly handOver: HandOver;
  private readonly outcomes: Outcomes;
  private readonly placement: Placement;
  private readonly intake: Intake;
  /**
   * idle → connecting → connected → stopping → stopped (src/core/lifecycle.ts), never running;
   * 'connected' from construction for a wrapped client connected already. disconnect() stops it
   * for good, connected or not, and a connect() under way is shared; the send path (take/intake.ts)
   * reads the phase.
   */
  private readonly state = new Lifecycle('stopped', { stopIdle: true, joinConnect: true });
  private readonly metrics$: Metrics;
  /** Takes our gauges out of the prom-client Registry (none: no registry). */
  private unregister: (() => void) | undefined;

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
    this.partitioner.live();
    this.producerId = this.options.producerId ?? newProducerId();
    this.orders = new OrderChains(this.partitioner, this.producerId, partitionerCode(base));
    relayPartitionerEvents(this.partitioner, this);
    let adapter: ClientAdapter;
    if (existing) adapter = ClientAdapter.wrap(existing, this.options.kafka);
    else {
      try {
        adapter = ClientAdapter.make(split, base, engine, this.options.kafka, { global: globalConfig, topic: topicConfig }, this.options.nativeHandles);
      } catch (err) {
        this.partitioner.close();
        throw err;
      }
    }
    this.adapter = adapter;
    this.client = adapter.client;
    if (adapter.connected) this.state.to('connected');
    const marking = this.options.orderHeaders === 'spread';
    const handoffs = marking && adapter.reports && this.partitioner.options.relocate && this.partitioner.options.spread
      ? new KeyHandoffs<Waiting>(this.partitioner.trackedKeysBound, (m) => this.placement.released(m), (entry, held) => this.partitioner.hold(entry, held))
      : undefined;
    this.handoffs = handoffs;
    this.gate = handoffs && new ProgressGate(handoffs, () => this.placement.held(), this.options.maxQueued);
    const nativeClient = adapter.native;
    // The native engine writes order headers from their fields (headers.ts OrderFields).
    this.orders.fields = nativeClient !== undefined;
    const delivery = new Delivery(adapter.owned, adapter.fireAndForget, adapter.reports, nativeClient !== undefined ? () => nativeClient.inflightPendings() : undefined);
    this.delivery = delivery;
    const metadata = new Metadata({
      client: this.client,
      connected: () => this.live,
      error: (err) => this.emit('error', err),
      refreshMs: this.options.metadataRefreshMs,
      // Beyond the partitioner's topics with state: a topic it places without state still needs its count here.
      maxEntries: topicsKept(this.partitioner.options.maxTopics),
      maxPartitions: this.partitioner.options.maxPartitions,
      known: (topic) => this.unplaced.known(topic),
      waiting: (topic) => this.unplaced.holds(topic),
    });
    this.metadata = metadata;
    this.unplaced = new Unplaced(UNPLACED_WAIT_MS, (m) => this.placement.placeUnplaced(m), (topic) => {
      const info = metadata.topics.get(topic);
      if (info !== undefined) info.unassigned = true;
    });
    const handOver = new HandOver(this.client, adapter.highLevel, delivery, metadata, adapter.maxInflight);
    this.handOver = handOver;
    const room = new Room(this.options.maxQueued, () => this.placement.held());
    this.room = room;
    const backlog = new Backlog<Queued>(this.options.maxQueued, {
      poll: () => this.poll(),
      handOver: (m) => handOver.produce(m.topic, m.partition, m.value, m.key, m.timestamp, m.pending, m.headers, m.link),
      refused: (code, m) => this.outcomes.refused(code, m),
      held: () => this.placement.held(),
      wake: () => room.wake(),
      drained: () => this.emit('drain'),
    });
    this.backlog = backlog;
    const outcomes = new Outcomes({
      host: { listening: () => this.listenerCount('delivery') > 0, tell: (failure, report) => this.emit('delivery', failure, report) },
      library: adapter.library, reports: adapter.reports, delivery, metadata, handoffs, backlog, room, handOver,
    });
    this.outcomes = outcomes;
    this.placement = new Placement({
      client: this.client, highLevel: adapter.highLevel, marking, maxQueued: this.options.maxQueued, partitioner: this.partitioner, orders: this.orders,
      metadata, unplaced: this.unplaced, backlog, handoffs, fireAndForget: adapter.fireAndForget, handOver, outcomes, error: (err) => this.emit('error', err),
    });
    this.intake = new Intake({
      state: this.state, reports: adapter.reports, highLevel: adapter.highLevel, room, placement: this.placement,
      native: adapter.native, error: (err) => this.emit('error', err),
    });
    this.polling = new Polling(this.client, () => this.poll(), () => delivery.inflight);
    this.transactions = Transactions.of((adapter.native?.transactions ?? this.client) as unknown as TransactionalClient, adapter.native !== undefined, existing ? existing.globalConfig : globalConfig, {
      connected: () => this.state.phase === 'connected' && this.client.isConnected?.() !== false,
      handOver: (timeoutMs) => this.handOverHeld(Date.now() + timeoutMs),
      outside: (reason) => { this.intake.outside = reason; },
      hold: (on) => {
        if (on) this.room.hold();
        else if (this.room.release() > 0) this.emit('drain');
      },
      poll: () => this.poll(),
      written: () => this.orders.checkpoint(),
      aborted: () => this.orders.rollback(),
    });
    this.metrics$ = new Metrics();
    adapter.listen(outcomes, delivery, {
      stats: (event) => this.statistics(event),
      error: (err) => this.emit('error', err),
      unassigned: (topic) => metadata.request(topic, true),
      closed: () => this.state.phase === 'stopped',
    });
    this.unregister = registerOrClose(this.options.prometheus, () => this.metrics(), this.partitioner, this.producerId.toString('hex'));
    if (existing && adapter.connected) this.started();
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
    if (this.state.phase !== 'connected') {
      await this.state.connect(async () => {
        this.handOver.native = await this.adapter.connect(timeoutMs);
        this.started();
      });
    }
    // A disconnect() called meanwhile: its reads fail, and that is no error to report.
    await this.refreshMetadata(undefined, timeoutMs).catch((err) => this.closed || this.emit('error', err));
    await Promise.all(topics.map((topic) => this.metadata.whenKnown(topic, deadline))).catch((err) => {
      throw this.closed ? new StateError('this producer was disconnected') : err;
    });
    if (!this.closed) this.emit('ready');
  }

  /** disconnect() was called: nothing more is taken, connect() refuses. */
  private get closed(): boolean {
    const phase = this.state.phase;
    return phase === 'stopping' || phase === 'stopped';
  }

  /**
   * Whether the client may be polled and asked for metadata: connected, or a disconnect() under
   * way (which flushes it first; a producer stopped from idle has nothing to poll or ask for).
   */
  private get live(): boolean {
    const phase = this.state.phase;
    return phase === 'connected' || phase === 'stopping';
  }

  private started(): void {
    this.metadata.start();
    traceSends(this.intake, this.placement, this.partitioner, this.options);
    // The native engine is woken by librdkafka when reports come: nothing to poll.
    if (this.adapter.native !== undefined) return;
    if (this.options.pollIntervalMs > 0) this.polling.every(this.options.pollIntervalMs);
    else if (this.adapter.reports) this.polling.watch();
  }

  /** The binding messages are produced through (hand-over/hand-over.ts), from connect() on: a producer we own's, or the native engine's client. */
  private get native(): NativeProducer | undefined {
    return this.handOver.native;
  }

  /**
   * Produces one message; synchronous. Returns true when librdkafka took it (or a handoff
   * holds it), false when it was held here because librdkafka's queue is full, or because
   * maxQueued messages wait for handoffs: it is still sent, in order, and a 'drain' event
   * follows once there is room again (as Node streams do).
   */
  produce(topic: string, value: Value, key?: Key | null, headers?: Headers, timestamp?: number | null): boolean {
    return this.intake.produce(topic, value, key, headers, timestamp);
  }

  /**
   * Produces one message and resolves with its delivery report (rejects with KafkaError). Waits
   * while too much is held. On the native engine it resolves once the messages that went into
   * librdkafka with it (one batch, one partition) are reported (docs/native.md).
   */
  send(topic: string, value: Value, key?: Key | null, headers?: Headers, timestamp?: number | null): Promise<DeliveryReport> {
    return this.intake.send(topic, value, key, headers, timestamp);
  }

  /**
   * Produces `messages` to `topic`, each placed as send() places it, and resolves with their
   * delivery reports in input order once all are in. Nothing is checked per message after the
   * first is handed over: every message is checked first, and a bad one rejects the call with
   * nothing sent. If any message is not written, rejects with a BatchError whose `outcomes`
   * holds each message's report or error. Waits (as send() does) while maxQueued messages are held.
   */
  sendBatch(topic: string, messages: readonly OutgoingMessage[]): Promise<DeliveryReport[]> {
    return this.intake.sendBatch(topic, messages);
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
   * (hold/progress.ts).
   * @internal
   */
  consumerProgress(topic: string, progress: TopicProgress | undefined, source?: object): void {
    if (this.gate === undefined || this.state.phase === 'stopped') return;
    this.gate.update(topic, progress, source);
  }

  /**
   * The size of each table and the option that bounds what is held, for bench/soak/tables.js (read at sampling
   * time, never on the message path): the spread keys' order chains open and their slots (OrderChains.openChains()),
   * the topics known, the keys with messages held for a handoff, the send() calls handed over whose report has not come.
   * @internal
   */
  tableSizes(): { orderChains: number; orderChainSlots: number; topics: number; handoffKeys: number; unconfirmed: number; maxQueued: number } {
    const { open, slots } = this.orders.openChains();
    const { delivery, options } = this;
    return { orderChains: open, orderChainSlots: slots, topics: this.metadata.topics.size, handoffKeys: this.handoffs?.keys ?? 0, unconfirmed: delivery.unconfirmedCount, maxQueued: options.maxQueued };
  }

  private poll(): void {
    if (this.live) this.adapter.poll();
  }

  /** librdkafka statistics: each partition's queue depth becomes a penalty for hot keys. */
  private statistics(event: { message: string }): void {
    const stats = applyStatistics(event.message, this.metadata.topics, this.partitioner, this.options.queuePenalty);
    if (stats !== undefined) this.emit('stats', stats);
  }

  /** Waits until every message handed over (or held) has its delivery report, or the timeout. */
  async flush(timeoutMs = 30_000): Promise<void> {
    checkTimeout('timeoutMs', timeoutMs);
    return this.flushWithin(timeoutMs, this.live);
  }

  /** flush(); `connected`: the client was connected (else nothing can be in flight, and node-rdkafka's flush would throw). */
  private async flushWithin(timeoutMs: number, connected: boolean): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const delivery = this.delivery;
    await this.handOverHeld(deadline);
    // Never connected (or a failed connect()): nothing can be in flight, and node-rdkafka's flush would throw.
    if (!connected) return;
    await this.adapter.flush(Math.max(0, deadline - Date.now()), delivery);
    // Reports already queued by librdkafka are dispatched by poll().
    while (delivery.inflight > 0 && Date.now() < deadline) {
      this.poll();
      await delay(2);
    }
    if (delivery.inflight > 0) throw new UndeliveredError(`flush timed out with ${delivery.inflight} messages unconfirmed`, delivery.inflight);
  }

  /** Waits (up to `deadline`) until every message held here is handed to librdkafka: for flush() and a transaction's end. */
  private async handOverHeld(deadline: number): Promise<void> {
    // Messages held for a handoff go as the delivery reports they wait for arrive (poll()),
    // and without waiting for the consumers of the partitions their keys left.
    this.gate?.open(true);
    try {
      this.handoffs?.recheck();
      while (this.placement.held() > 0 || this.room.owed > 0) {
        if (Date.now() > deadline) throw new UndeliveredError(`flush timed out with ${this.placement.held()} messages still held`, this.placement.held() + this.delivery.inflight);
        await delay(5);
        if (this.backlog.holding || this.room.owed > 0) this.backlog.drain();
        else this.poll();
      }
    } finally {
      this.gate?.open(false);
    }
  }

  /** The engine messages go through: 'native' (the addon's librdkafka handles) or 'client' (the client library's produce()). */
  get engine(): 'native' | 'client' {
    return this.adapter.native !== undefined ? 'native' : 'client';
  }

  /**
   * Flushes, then disconnects, all within `timeoutMs`. If some messages could not be confirmed
   * in time, their send() promises reject and this rejects with an UndeliveredError that counts
   * them. A call while one is under way returns that one's promise; a call while connect() is
   * under way disconnects once it has ended (succeeded or failed).
   */
  disconnect(timeoutMs = 30_000): Promise<void> {
    try {
      checkTimeout('timeoutMs', timeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.state.stop((_running, from) => this.close(timeoutMs, from));
  }

  /** The stop of disconnect(), from `from`: 'connected' (the client is flushed and disconnected), or 'idle'. */
  private async close(timeoutMs: number, from: Phase): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const connected = from === 'connected';
    let failure: unknown;
    try {
      // The client's own disconnect needs a moment of the budget (it flushes again, then stops its threads).
      await this.flushWithin(Math.max(0, timeoutMs - (this.adapter.owned ? CLIENT_DISCONNECT_MS : 0)), connected);
    } catch (err) {
      failure = err;
    }
    // 'stopped' from here (what is still waiting is refused as disconnected); calls of disconnect() get this one until it settles.
    this.state.done();
    const undelivered = new UndeliveredError('disconnected before delivery was confirmed', this.delivery.inflight);
    this.delivery.rejectUnconfirmed(undelivered);
    this.room.releaseAll();
    for (const m of this.backlog.take()) this.delivery.reject(m.pending, undelivered);
    for (const m of this.handoffs?.take() ?? []) this.delivery.reject(m.pending, undelivered);
    for (const m of this.unplaced.take()) this.delivery.reject(m.pending, undelivered);
    this.metadata.stop();
    this.polling.stop();
    this.gate?.stop();
    this.partitioner.close();
    this.adapter.unlisten();
    if (this.unregister !== undefined) this.unregister();
    await this.adapter.disconnect(deadline, connected);
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
    const snapshot = this.metrics$.snapshot(this.metadata.topics, this.partitioner, this.delivery.inflight, this.placement.held());
    return { ...snapshot, engine: this.engine };
  }
}
