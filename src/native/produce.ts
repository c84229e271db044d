// The native engine's producer, shaped as the node-rdkafka Producer DynamicProducer drives
// (produce / poll / flush / getMetadata / connect / disconnect, the same events), with the two
// things that make it fast:
// - produce() copies a message into a batch (one buffer, typed-array tables) and returns;
//   the batch goes to librdkafka in one native call at the end of the current turn (or when it
//   is full), each message with its explicit partition and its slot id as librdkafka's opaque;
// - delivery reports come back in bulk into typed arrays (a wake-up from librdkafka's thread
//   when its queue fills, then poll()): one call of `onDelivery` per report, no object.
// A message librdkafka refuses for good when its batch is handed over gets a failed report.
// librdkafka's queue full: the rest of the batch stays here and goes at the next poll; a new
// message finds no room and gets ERR_QUEUE_FULL, as from node-rdkafka.
// The twin of native/src/produce.c. The librdkafka handle itself (made, connected, its thread
// pool calls, closed): handle.ts; the batch's bytes: produce-rows.ts; what a message needs at its
// report, kept under its slot id: slots.ts. How a message's opaque takes its slot is the
// producer's (SlotTaker: src/producer/settle/send-groups.ts groups send() calls); this file
// imports nothing of the producer.

import type { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';
import type { Config } from '../core/config';
import type { Key } from '../core/key';
import { ERR_QUEUE_FULL } from '../core/rdkafka-codes';
import { emitClientEvent } from './addon';
import { EVENT_DELIVERY_FAILED, type NativeAddon, type NativeEvent, PRODUCED_TAKEN, PRODUCED_UNASSIGNED } from './contract';
import { NativeHandle } from './handle';
import { ProduceRows, type RowHeaders } from './produce-rows';
import { Slots } from './slots';

/** Messages per batch handed over in one call. */
const BATCH = 1024;
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

/**
 * How a message's opaque takes its slot, and what a slot's message settles: the producer's
 * (src/producer/settle/send-groups.ts joins send() calls into groups); by default the opaque as it is.
 */
export interface SlotTaker {
  /** A slot for a message going to `partition` (-1: librdkafka's choice): its id. */
  take(slots: Slots, opaque: unknown, topic: string, partition: number, size: number, key: Key | null | undefined, value: Buffer | null): number;
  /** The batch was handed over: messages after it start afresh (new groups). */
  handedOver(): void;
  /** The message just taken under `id` was refused at once (produce()'s answer tells its caller). */
  refusedAtOnce(slots: Slots, id: number): void;
  /** What a slot's message settles (its opaque, or what stands for it), for a disconnect to tell its caller. */
  settles(opaque: unknown, member: number, key: unknown): unknown;
}

/** Each opaque takes a slot as it is. */
const AS_GIVEN: SlotTaker = {
  take: (slots, opaque, topic, _partition, size, key, value) => slots.take(opaque, topic, size, key, value, -1),
  handedOver: () => {},
  refusedAtOnce: () => {},
  settles: (opaque) => opaque,
};

export class NativeClient extends EventEmitter {
  readonly globalConfig: Config;
  readonly topicConfig: Config;
  /** The librdkafka handle (its `current` is the addon's, undefined while closed). */
  private readonly handle: NativeHandle;
  private onDelivery: OnDelivery = () => {};
  private onRefused: OnRefused = () => {};
  private onUnassigned: (topic: string) => void = () => {};
  /** message.max.bytes: a message near it is handed over at once, so that a refusal is produce()'s answer. */
  private readonly sizeLimit: number;

  // The batch being filled: messages [start, count) of `topic` not handed over yet.
  private topic = '';
  private start = 0;
  private count = 0;
  /** Their bytes and rows. */
  private readonly rows = new ProduceRows(BATCH);
  private readonly partitions = new Int32Array(BATCH);
  private readonly ids = new Int32Array(BATCH);
  private readonly timestamps = new Float64Array(BATCH);
  private readonly results = new Int32Array(BATCH);
  private submitQueued = false;
  private polling = false;
  private retryTimer: NodeJS.Timeout | undefined;

  /** A message's opaque, topic, key and size from produce() to its report, under its id (slots.ts). */
  private readonly slots: Slots;

  // Delivery reports, read in bulk.
  private readonly rIds = new Int32Array(REPORTS);
  private readonly rPartitions = new Int32Array(REPORTS);
  private readonly rOffsets = new Float64Array(REPORTS);
  private readonly rErrors = new Int32Array(REPORTS);
  private readonly rTimestamps = new Float64Array(REPORTS);

  constructor(private readonly addon: NativeAddon, globalConfig: Config, topicConfig: Config, private readonly taker: SlotTaker = AS_GIVEN) {
    super();
    this.globalConfig = globalConfig;
    this.topicConfig = topicConfig;
    // A bad setting throws here, as node-rdkafka's constructor does.
    this.handle = new NativeHandle(addon, 'producer', globalConfig, topicConfig, () => this.poll(), (...event) => this.event(...event));
    const limit = Number(globalConfig['message.max.bytes']);
    this.sizeLimit = Number.isFinite(limit) && limit > 0 ? limit : 1_000_000;
    this.slots = new Slots(Boolean(globalConfig.dr_msg_cb));
    const onlyErrors = globalConfig['delivery.report.only.error'];
    this.unslotted = !globalConfig.dr_cb && !globalConfig.dr_msg_cb && (onlyErrors === true || onlyErrors === 'true');
  }

  /**
   * librdkafka reports only the messages it could not deliver (no dr_cb, delivery.report.only.error):
   * messages then take no slot, which no report would free; a failure is told from what librdkafka
   * kept of the message (its topic, key and size), a refusal at hand-over from the batch's row.
   */
  private readonly unslotted: boolean;
  /** With `unslotted`: the key of each row of the batch, for a refusal. */
  private readonly rowKeys: unknown[] = [];

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
    return this.handle.isConnected();
  }

  /** Makes the librdkafka handle again if it was closed (a bad setting: `cb(err)`), then reads metadata as node-rdkafka's connect() does. */
  connect(options: { timeout?: number } | undefined, cb: (err: unknown) => void): void {
    this.handle.connect(options?.timeout ?? 30_000, () => this.emit('ready', { name: 'kdp-native' }), cb);
  }

  private event(...event: NativeEvent): void {
    if (emitClientEvent(this, this.addon, event) || event[0] !== EVENT_DELIVERY_FAILED) return;
    // A failed delivery of a message produced without a slot.
    const [, code, topic, partition, key, size, timestamp] = event;
    this.onDelivery(undefined, code, topic, partition, -1, timestamp, size, key, undefined, -1);
  }


  getMetadata(options: { topic?: string; timeout?: number; allTopics?: boolean }, cb: (err: any, metadata: any) => void): void {
    this.handle.getMetadata(options, cb);
  }

  /** Hands over what is batched, then waits (on the thread pool) until librdkafka has no message left. */
  flush(timeoutMs: number, cb: (err: any) => void): void {
    const current = this.handle.current;
    if (current === undefined) {
      cb(null);
      return;
    }
    this.submit();
    const deadline = Date.now() + timeoutMs;
    const wait = (): void => {
      // A batch stopped by a full queue goes before librdkafka is asked to flush.
      if (this.start < this.count) {
        if (Date.now() > deadline) {
          cb(Object.assign(new Error('Local: Timed out'), { code: -185 }));
          return;
        }
        this.poll();
        setTimeout(wait, RETRY_MS);
        return;
      }
      this.handle.flush(current, Math.max(0, deadline - Date.now()), (err) => {
        this.poll();
        cb(err);
      });
    };
    wait();
  }

  /** Reads the delivery reports (and statistics, errors, logs) librdkafka has, and retries a stopped batch. */
  poll(): void {
    const current = this.handle.current;
    // A report's handler may poll again (DynamicProducer's backlog does): the reports read are being gone through.
    if (current === undefined || this.polling) return;
    if (this.start < this.count) this.submit();
    this.polling = true;
    try {
      this.readReports(current);
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
   * Takes one message into the batch: 0, or ERR_QUEUE_FULL when librdkafka's queue stopped the
   * batch and it has no room (the message is not taken). librdkafka refusing it for good later
   * comes as its failed delivery report.
   */
  produce(topic: string, partition: number | null, value: Buffer | null, key?: Key | null, timestamp?: number | null, opaque?: unknown, headers?: RowHeaders): number {
    if (topic !== this.topic || this.count === BATCH) {
      if (this.start < this.count) this.submit();
      if (this.start < this.count) return ERR_QUEUE_FULL;
      this.topic = topic;
    }
    const i = this.count;
    const size = this.rows.write(i, value, key, headers);
    this.partitions[i] = partition ?? -1;
    this.timestamps[i] = timestamp ?? 0;
    if (this.unslotted) {
      this.ids[i] = -1;
      this.rowKeys[i] = key;
    } else {
      const valueLength = value === null || value === undefined ? 0 : value.length;
      this.ids[i] = this.taker.take(this.slots, opaque, topic, partition ?? -1, valueLength, key, value);
    }
    this.count = i + 1;
    if (size > this.sizeLimit) return this.produceNow(i);
    if (this.count === BATCH) this.submit();
    else if (!this.submitQueued) {
      this.submitQueued = true;
      queueMicrotask(this.submitLater);
    }
    return 0;
  }

  /**
   * A message librdkafka may refuse for its size: the batch goes now, and a refusal of this
   * message is produce()'s answer (as from node-rdkafka), not a report.
   */
  private produceNow(i: number): number {
    this.answerAt = i;
    this.answer = 0;
    try {
      this.submit();
    } finally {
      this.answerAt = -1;
    }
    // Stopped before it by a full queue, it waits in the batch like the rest: taken.
    return this.answer;
  }

  /** The batch index whose refusal is produce()'s answer (produceNow), and that answer. */
  private answerAt = -1;
  private answer = 0;

  private readonly submitLater = (): void => {
    this.submitQueued = false;
    this.submit();
  };

  /** Hands the batch over; what librdkafka refuses for good gets a failed report, a full queue stops it until later. */
  private submit(): void {
    const current = this.handle.current;
    if (current === undefined || this.start === this.count) return;
    const start = this.start;
    const topic = this.topic;
    // send() calls after this hand-over form new groups.
    this.taker.handedOver();
    const rows = this.rows;
    const end = this.addon.produce(current, topic, start, this.count, this.partitions, this.ids, rows.data, rows.layout,
      this.timestamps, rows.headerTable, this.results);
    // While sendBatch() calls are in flight, what was handed over leaves without waiting
    // linger.ms: a pulse of librdkafka's flushing state (native/src/hurry.c).
    if (this.hurrying > 0 && end > start) this.addon.hurry(current);
    // Refusals are reported after the batch's state is settled: a report's handler may produce again.
    let refused: unknown[] | undefined;
    let unassigned = false;
    for (let i = start; i < end; i++) {
      const result = this.results[i];
      if (result === PRODUCED_TAKEN) continue;
      if (result === PRODUCED_UNASSIGNED) unassigned = true;
      else if (i === this.answerAt) {
        this.answer = result;
        if (this.ids[i] >= 0) {
          this.taker.refusedAtOnce(this.slots, this.ids[i]);
          this.slots.release(this.ids[i]);
        }
      } else (refused ??= []).push(this.ids[i], result, this.partitions[i], this.unslotted ? this.rowKeys[i] : undefined);
    }
    this.start = end;
    if (end === this.count) {
      this.start = this.count = 0;
      rows.clear();
    } else if (this.retryTimer === undefined) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.poll();
      }, RETRY_MS);
    }
    if (unassigned) this.onUnassigned(topic);
    if (refused === undefined) return;
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

  /**
   * One more (1) or one less (-1) batch in flight whose messages should not wait linger.ms:
   * while any is, each hand-over is followed by a pulse (submit()).
   */
  hurry(delta: 1 | -1): void {
    this.hurrying += delta;
  }

  /** Batches in flight that should not linger (hurry()). */
  private hurrying = 0;

  /**
   * What each message taken and not reported yet settles (for a disconnect to tell their
   * callers), as the SlotTaker says.
   */
  *inflightPendings(): Iterable<unknown> {
    const slots = this.slots;
    for (const id of slots.inflight()) yield this.taker.settles(slots.opaques[id], slots.members[id], slots.keys[id]);
  }

  /** Messages taken and not handed to librdkafka yet (a batch its full queue stopped). */
  get batched(): number {
    return this.count - this.start;
  }

  /**
   * Closes the handle once the calls on the thread pool are done (librdkafka's destroy on the
   * pool too): what is still batched, or in librdkafka's queue, is dropped (DynamicProducer
   * flushes first, and tells the callers of what did not make it).
   */
  disconnect(timeoutMs: number | ((err?: unknown) => void), cb?: (err?: unknown) => void): void {
    const done = typeof timeoutMs === 'function' ? timeoutMs : cb ?? (() => {});
    if (this.handle.current === undefined) {
      done();
      return;
    }
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.handle.close(() => {
      this.emit('disconnected');
      done();
    });
  }
}
