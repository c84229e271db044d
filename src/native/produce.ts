// The native engine's producer, shaped as the node-rdkafka Producer DynamicProducer drives
// (produce / poll / flush / getMetadata / connect / disconnect, the same events), with the
// things that make it fast:
// - produce() copies a message into a batch (one buffer, typed-array tables) and returns;
//   the batch goes to librdkafka in one native call at the end of the current turn (or when it
//   is full), each message with its explicit partition and its slot id as librdkafka's opaque
//   (produce-batch.ts);
// - delivery reports come back in bulk into typed arrays (a wake-up from librdkafka's thread
//   when its queue fills, then poll()): one call of `onDelivery` per report, no object;
// - `handles` librdkafka producer handles, partition p always on handle p % handles: a broker
//   serves one connection's requests one at a time, and librdkafka puts one partition in a
//   produce request, so more handles keep more requests in progress per broker. Their reports
//   share one table of slots; their statistics are merged into one message per interval
//   (statistics-merge.ts).
// A message librdkafka refuses for good when its batch is handed over gets a failed report.
// librdkafka's queue full: the rest of the batch stays here and goes at the next poll; a new
// message finds no room and gets ERR_QUEUE_FULL, as from node-rdkafka.
// The twin of native/src/produce.c. The librdkafka handle itself (made, connected, its thread
// pool calls, closed): handle.ts; the batch's bytes: produce-rows.ts; what a message needs at its
// report, kept under its slot id: slots.ts. How a message's opaque takes its slot is the
// producer's (SlotTaker: src/producer/settle/opaque.ts groups send() calls); this file
// imports nothing of the producer.

import type { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';
import type { Config } from '../core/config';
import type { Key } from '../core/key';
import { emitClientEvent } from './addon';
import { EVENT_DELIVERY_FAILED, EVENT_STATS, type NativeAddon, type NativeEvent } from './contract';
import { NativeHandle } from './handle';
import { NativeTransactions } from './produce-transactions';
import { type BatchOwner, HandleBatch, type SlotTaker } from './produce-batch';
import type { RowHeaders } from './produce-rows';
import { Slots } from './slots';
import { StatisticsRounds } from './statistics-merge';

/** Reports read per native poll() call. */
const REPORTS = 4096;
/** Retry of a batch librdkafka's full queue stopped (ms). */
const RETRY_MS = 1;
/**
 * One delivery report, as arguments: the message's opaque, librdkafka's code (0: delivered),
 * where it went; `member`: the member index its SlotTaker gave it (a send()'s in its group), else -1.
 */
export type OnDelivery = (opaque: unknown, code: number, topic: string, partition: number, offset: number, timestamp: number, size: number, key: unknown, value: Buffer | null | undefined, member: number) => void;

/** A message librdkafka refused for good as its batch was handed over (no report follows). */
export type OnRefused = (opaque: unknown, code: number, topic: string, partition: number, key: unknown, member: number) => void;

export type { SlotTaker };

/** Each opaque takes a slot as it is. */
const AS_GIVEN: SlotTaker = {
  take: (slots, opaque, topic, _partition, size, key, value) => slots.take(opaque, topic, size, key, value, -1),
  handedOver: () => {},
  refusedAtOnce: () => {},
  settles: (opaque) => opaque,
};

export class NativeClient extends EventEmitter implements BatchOwner {
  readonly globalConfig: Config;
  readonly topicConfig: Config;
  /** One batch per librdkafka handle; partition p's messages go through batches[p % batches.length]. */
  private readonly batches: HandleBatch[];
  private onDelivery: OnDelivery = () => {};
  private onRefused: OnRefused = () => {};
  private onUnassigned: (topic: string) => void = () => {};
  /** message.max.bytes: a message near it is handed over at once, so that a refusal is produce()'s answer. */
  readonly sizeLimit: number;
  private polling = false;
  private retryTimer: NodeJS.Timeout | undefined;
  /** With more than one handle: their statistics, merged once each has given its own. */
  private readonly rounds: StatisticsRounds | undefined;

  /** A message's opaque, topic, key and size from produce() to its report, under its id (slots.ts). */
  readonly slots: Slots;
  /** With transactional.id (one handle): node-rdkafka's transactional calls on it (produce-transactions.ts). */
  readonly transactions: NativeTransactions;

  // Delivery reports, read in bulk.
  private readonly rIds = new Int32Array(REPORTS);
  private readonly rPartitions = new Int32Array(REPORTS);
  private readonly rOffsets = new Float64Array(REPORTS);
  private readonly rErrors = new Int32Array(REPORTS);
  private readonly rTimestamps = new Float64Array(REPORTS);

  /**
   * `handles`: librdkafka producer handles to spread the partitions over (1 or more). A bad
   * setting throws here, as node-rdkafka's constructor does.
   */
  constructor(readonly addon: NativeAddon, globalConfig: Config, topicConfig: Config, readonly taker: SlotTaker = AS_GIVEN, handles = 1) {
    super();
    this.globalConfig = globalConfig;
    this.topicConfig = topicConfig;
    const limit = Number(globalConfig['message.max.bytes']);
    this.sizeLimit = Number.isFinite(limit) && limit > 0 ? limit : 1_000_000;
    this.slots = new Slots(Boolean(globalConfig.dr_msg_cb));
    const onlyErrors = globalConfig['delivery.report.only.error'];
    this.unslotted = !globalConfig.dr_cb && !globalConfig.dr_msg_cb && (onlyErrors === true || onlyErrors === 'true');
    this.rounds = handles > 1 ? new StatisticsRounds(handles) : undefined;
    this.batches = [];
    // On librdkafka's mock cluster, each handle would make a cluster of its own: the first makes
    // it, the others are made at connect() to join it through the brokers its metadata lists.
    this.mock = globalConfig['test.mock.num.brokers'] !== undefined;
    const handleConfig = handles > 1 ? sharedQueue(globalConfig, handles) : globalConfig;
    try {
      for (let i = 0; i < handles; i++) {
        const handle = new NativeHandle(addon, 'producer', handleConfig, topicConfig, () => this.poll(), (...event) => this.event(i, ...event), this.mock && i > 0);
        this.batches.push(new HandleBatch(handle, this));
      }
    } catch (err) {
      for (const batch of this.batches) batch.handle.close(() => {});
      throw err;
    }
    this.transactions = new NativeTransactions(addon, this.batches[0].handle, this);
  }

  /**
   * librdkafka reports only the messages it could not deliver (no dr_cb, delivery.report.only.error):
   * messages then take no slot, which no report would free; a failure is told from what librdkafka
   * kept of the message (its topic, key and size), a refusal at hand-over from the batch's row.
   */
  readonly unslotted: boolean;

  /** Whether the handles are on librdkafka's mock cluster (the first one's). */
  private readonly mock: boolean;

  /** The librdkafka producer handles the partitions are spread over. */
  get handles(): number {
    return this.batches.length;
  }

  /**
   * Where delivery reports go (DynamicProducer's), messages refused for good when their batch
   * was handed over, and the topics whose partition count librdkafka did not know (the
   * message went to librdkafka's partitioner).
   */
  deliverTo(onDelivery: OnDelivery, onRefused: OnRefused, onUnassigned: (topic: string) => void): void {
    this.onDelivery = onDelivery;
    this.onRefused = onRefused;
    this.onUnassigned = onUnassigned;
  }

  /** The version of the librdkafka the addon runs on: the one the client library loaded. */
  get librdkafkaVersion(): string {
    return this.addon.version();
  }

  isConnected(): boolean {
    return this.batches.every((b) => b.handle.isConnected());
  }

  /** Makes the librdkafka handles again if they were closed (a bad setting: `cb(err)`), then reads metadata on each as node-rdkafka's connect() does. */
  connect(options: { timeout?: number } | undefined, cb: (err: unknown) => void): void {
    const timeout = options?.timeout ?? 30_000;
    const all = (batches: HandleBatch[], done: (err: unknown) => void): void =>
      onEach(batches, ({ handle }, back) => handle.connect(timeout, () => {}, back), done);
    const ready = (err: unknown): void => {
      if (!err) this.emit('ready', { name: 'kdp-native' });
      cb(err);
    };
    if (!this.mock || this.batches.length === 1) {
      all(this.batches, ready);
      return;
    }
    // The mock cluster: the first handle makes it, the others join it through its brokers.
    const [first, ...rest] = this.batches;
    all([first], (err) => {
      if (err) return ready(err);
      first.handle.getMetadata({ timeout }, (err, metadata) => {
        if (err) return ready(err);
        const brokers = (metadata?.brokers ?? []).map((b: { host: string; port: number }) => `${b.host}:${b.port}`).join(',');
        for (const { handle } of rest) {
          handle.configure('test.mock.num.brokers', undefined);
          handle.configure('bootstrap.servers', brokers);
        }
        all(rest, ready);
      });
    });
  }

  private event(handle: number, ...event: NativeEvent): void {
    if (event[0] === EVENT_STATS && this.rounds !== undefined) {
      const merged = this.rounds.add(handle, event[1]);
      if (merged !== undefined) this.emit('event.stats', { message: merged });
      return;
    }
    if (emitClientEvent(this, this.addon, event) || event[0] !== EVENT_DELIVERY_FAILED) return;
    // A failed delivery of a message produced without a slot.
    const [, code, topic, partition, key, size, timestamp] = event;
    this.onDelivery(undefined, code, topic, partition, -1, timestamp, size, key, undefined, -1);
  }

  /**
   * Metadata, read by every handle: each takes the partition counts into its own cache, so that
   * none meets a partition it does not know yet once the producer uses a new count (it would
   * place the message with librdkafka's partitioner instead). The first handle's answer, once
   * all have answered.
   */
  getMetadata(options: { topic?: string; timeout?: number; allTopics?: boolean }, cb: (err: any, metadata: any) => void): void {
    const open = this.batches.filter((b, i) => i === 0 || b.handle.current !== undefined);
    let first: [any, any] = [null, undefined];
    onEach(open, ({ handle }, back) => handle.getMetadata(options, (err, metadata) => {
      if (handle === open[0].handle) first = [err, metadata];
      back(null);
    }), () => cb(first[0], first[1]));
  }

  /** Hands over what is batched, then waits (on the thread pool) until librdkafka has no message left on any handle. */
  flush(timeoutMs: number, cb: (err: any) => void): void {
    if (this.batches[0].handle.current === undefined) {
      cb(null);
      return;
    }
    for (const batch of this.batches) batch.submit();
    const deadline = Date.now() + timeoutMs;
    const wait = (): void => {
      // A batch stopped by a full queue goes before librdkafka is asked to flush.
      if (this.batched > 0) {
        if (Date.now() > deadline) {
          cb(Object.assign(new Error('Local: Timed out'), { code: -185 }));
          return;
        }
        this.poll();
        setTimeout(wait, RETRY_MS);
        return;
      }
      onEach(this.batches, ({ handle }, back) => {
        const current = handle.current;
        if (current === undefined) back(null);
        else handle.flush(current, Math.max(0, deadline - Date.now()), back);
      }, (err) => {
        this.poll();
        cb(err);
      });
    };
    wait();
  }

  /** Hands what is batched to librdkafka (a full queue stops a batch: `batched` counts what is left). */
  submitAll(): void {
    for (const batch of this.batches) batch.submit();
  }

  /** Reads the delivery reports (and statistics, errors, logs) librdkafka has, and retries a stopped batch. */
  poll(): void {
    // A report's handler may poll again (DynamicProducer's backlog does): the reports read are being gone through.
    if (this.polling) return;
    this.polling = true;
    try {
      for (const batch of this.batches) {
        const current = batch.handle.current;
        if (current === undefined) continue;
        if (batch.batched > 0) batch.submit();
        this.readReports(current);
      }
    } finally {
      this.polling = false;
    }
  }

  private readReports(current: object): void {
    const { rIds, rPartitions, rOffsets, rErrors, rTimestamps, slots } = this;
    let n: number;
    do {
      n = this.addon.poll(current, rIds, rPartitions, rOffsets, rErrors, rTimestamps);
      for (let i = 0; i < n; i++) {
        const id = rIds[i];
        const opaque = slots.opaques[id];
        const topic = slots.topics[id];
        const key = slots.keys[id];
        const value = slots.values[id];
        slots.release(id);
        this.onDelivery(opaque, rErrors[i], topic, rPartitions[i], rOffsets[i], rTimestamps[i], slots.sizes[id], key, value, slots.members[id]);
      }
    } while (n === REPORTS);
  }

  /**
   * Takes one message into its handle's batch: 0, or ERR_QUEUE_FULL when librdkafka's queue
   * stopped the batch and it has no room (the message is not taken). librdkafka refusing it
   * for good later comes as its failed delivery report.
   */
  produce(topic: string, partition: number | null, value: Buffer | null, key?: Key | null, timestamp?: number | null, opaque?: unknown, headers?: RowHeaders): number {
    const p = partition ?? -1;
    const batches = this.batches;
    // An unassigned message (-1) goes through the first handle.
    return batches[p > 0 ? p % batches.length : 0].produce(topic, p, value, key, timestamp, opaque, headers);
  }

  /** BatchOwner: messages librdkafka refused for good as a batch was handed over, told after its state is settled. */
  refused(topic: string, refused: unknown[]): void {
    for (let k = 0; k < refused.length; k += 4) {
      const id = refused[k] as number;
      let opaque: unknown;
      let key = refused[k + 3];
      let member = -1;
      if (id >= 0) {
        opaque = this.slots.opaques[id];
        key = this.slots.keys[id];
        member = this.slots.members[id];
        this.slots.release(id);
      }
      this.onRefused(opaque, refused[k + 1] as number, topic, refused[k + 2] as number, key, member);
    }
  }

  /** BatchOwner: the topic's count was not known to librdkafka. */
  unassigned(topic: string): void {
    this.onUnassigned(topic);
  }

  /** BatchOwner: a batch was stopped by a full queue; poll (which hands it over again) soon. */
  retry(): void {
    if (this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.poll();
    }, RETRY_MS);
  }

  /**
   * One more (1) or one less (-1) batch in flight whose messages should not wait linger.ms:
   * while any is, each hand-over is followed by a pulse (HandleBatch.submit()).
   */
  hurry(delta: 1 | -1): void {
    this.hurried += delta;
  }

  /** BatchOwner: whether any sendBatch() is in flight. */
  hurrying(): boolean {
    return this.hurried > 0;
  }

  /** Batches in flight that should not linger (hurry()). */
  private hurried = 0;

  /**
   * What each message taken and not reported yet settles (for a disconnect to tell their
   * callers), as the SlotTaker says.
   */
  *inflightPendings(): Iterable<unknown> {
    const slots = this.slots;
    for (const id of slots.inflight()) yield this.taker.settles(slots.opaques[id], slots.members[id], slots.keys[id]);
  }

  /** Messages taken and not handed to librdkafka yet (batches a full queue stopped). */
  get batched(): number {
    let n = 0;
    for (const batch of this.batches) n += batch.batched;
    return n;
  }

  /**
   * Closes the handles once the calls on the thread pool are done (librdkafka's destroy on the
   * pool too): what is still batched, or in librdkafka's queues, is dropped (DynamicProducer
   * flushes first, and tells the callers of what did not make it).
   */
  disconnect(timeoutMs: number | ((err?: unknown) => void), cb?: (err?: unknown) => void): void {
    const done = typeof timeoutMs === 'function' ? timeoutMs : cb ?? (() => {});
    const open = this.batches.filter((b) => b.handle.current !== undefined);
    if (open.length === 0) {
      done();
      return;
    }
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.rounds?.clear();
    onEach(open, ({ handle }, back) => handle.close(() => back(null)), () => {
      this.emit('disconnected');
      done();
    });
  }
}

/** Calls `call` for each of `items`, then `done` once every one has called back, with the first error (null: none). */
function onEach<T>(items: readonly T[], call: (item: T, back: (err: unknown) => void) => void, done: (err: unknown) => void): void {
  let left = items.length;
  let failure: unknown = null;
  for (const item of items) {
    call(item, (err) => {
      if (err && failure === null) failure = err;
      if (--left === 0) done(failure);
    });
  }
}

/** librdkafka's default queue.buffering.max.kbytes (CONFIGURATION.md). */
const LIBRDKAFKA_QUEUE_KBYTES = 1_048_576;

/**
 * The configuration of each of `handles` handles: librdkafka's queue bounds (messages and
 * kbytes) shared among them, so that the producer's whole queue stays within what was set.
 */
export function sharedQueue(config: Config, handles: number): Config {
  const out: Config = { ...config };
  for (const [name, fallback] of [['queue.buffering.max.messages', undefined], ['queue.buffering.max.kbytes', LIBRDKAFKA_QUEUE_KBYTES]] as const) {
    const value = config[name] === undefined ? fallback : Number(config[name]);
    // A value librdkafka will refuse is left for it to refuse, naming it.
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) out[name] = Math.max(1, Math.ceil(value / handles));
  }
  return out;
}
