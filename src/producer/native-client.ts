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
// The librdkafka handle itself (made, connected, its thread pool calls, closed): src/native/handle.ts;
// what a message needs at its report, kept under its slot id: native-slots.ts.

import { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';
import type { Config } from '../core/config';
import { type Key, writeAscii } from '../core/key';
import { emitClientEvent } from '../native/addon';
import {
  EVENT_DELIVERY_FAILED, HEADER_ROW_NAME_AT, HEADER_ROW_NAME_LENGTH, HEADER_ROW_SIZE,
  HEADER_ROW_VALUE_AT, HEADER_ROW_VALUE_LENGTH, type NativeAddon, type NativeEvent, PRODUCE_ROW_FIRST_HEADER, PRODUCE_ROW_HEADER_COUNT,
  PRODUCE_ROW_KEY_AT, PRODUCE_ROW_KEY_LENGTH, PRODUCE_ROW_SIZE, PRODUCE_ROW_VALUE_AT, PRODUCE_ROW_VALUE_LENGTH, PRODUCED_TAKEN,
  PRODUCED_UNASSIGNED,
} from '../native/contract';
import { NativeHandle } from '../native/handle';
import { ORDER_FIELDS_MAX_BYTES, ORDER_HEADER, OrderFields, writeOrderFields } from '../partitioner/headers';
import { ERR_QUEUE_FULL } from './backlog';
import { Link } from './handoff';
import { Slots } from './native-slots';
import { LaterSend, SendGroup } from './send-group';
import type { Headers } from './types';

/** Messages per batch handed over in one call. */
const BATCH = 1024;
/** Reports read per native poll() call. */
const REPORTS = 4096;
/** Retry of a batch librdkafka's full queue stopped (ms). */
const RETRY_MS = 1;
/**
 * One delivery report, as arguments: the message's opaque, librdkafka's code (0: delivered),
 * where it went; `member`: a send()'s index in its group (the opaque, or its link's, is a SendGroup), else -1.
 */
export type OnDelivery = (opaque: unknown, code: number, topic: string, partition: number, offset: number, timestamp: number, size: number, key: unknown, value: Buffer | null | undefined, member: number) => void;

/** A message librdkafka refused for good as its batch was handed over (no report follows). */
export type OnRefused = (opaque: unknown, code: number, topic: string, partition: number, key: unknown, member: number) => void;

/** Bytes librdkafka adds to a message's key, value and headers in its size check (RD_KAFKAP_MESSAGE_V2_MAX_OVERHEAD, rdkafka_proto.h), with room for the headers' own varints. */
const OVERHEAD = 36;

/** String keys up to this many UTF-16 units are tried as ASCII first (writeAscii). */
const SHORT_KEY = 64;

/** The order header's name, as bytes. */
const ORDER_NAME = Buffer.from(ORDER_HEADER, 'latin1');

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
  private pos = 0;
  private data: Buffer = Buffer.allocUnsafeSlow(1 << 18);
  private readonly partitions = new Int32Array(BATCH);
  private readonly ids = new Int32Array(BATCH);
  private readonly layout = new Int32Array(BATCH * PRODUCE_ROW_SIZE);
  private readonly timestamps = new Float64Array(BATCH);
  private headerTable = new Int32Array(BATCH * HEADER_ROW_SIZE);
  private headerCount = 0;
  private readonly results = new Int32Array(BATCH);
  private submitQueued = false;
  private polling = false;
  private retryTimer: NodeJS.Timeout | undefined;

  /** A message's opaque, topic, key and size from produce() to its report, under its id (native-slots.ts). */
  private readonly slots: Slots;

  // Delivery reports, read in bulk.
  private readonly rIds = new Int32Array(REPORTS);
  private readonly rPartitions = new Int32Array(REPORTS);
  private readonly rOffsets = new Float64Array(REPORTS);
  private readonly rErrors = new Int32Array(REPORTS);
  private readonly rTimestamps = new Float64Array(REPORTS);

  constructor(private readonly addon: NativeAddon, globalConfig: Config, topicConfig: Config) {
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
    const handle = this.handle.current;
    if (handle === undefined) {
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
      this.handle.flush(handle, Math.max(0, deadline - Date.now()), (err) => {
        this.poll();
        cb(err);
      });
    };
    wait();
  }

  /** Reads the delivery reports (and statistics, errors, logs) librdkafka has, and retries a stopped batch. */
  poll(): void {
    const handle = this.handle.current;
    // A report's handler may poll again (DynamicProducer's backlog does): the reports read are being gone through.
    if (handle === undefined || this.polling) return;
    if (this.start < this.count) this.submit();
    this.polling = true;
    try {
      this.readReports(handle);
    } finally {
      this.polling = false;
    }
  }

  private readReports(handle: object): void {
    const { rIds, rPartitions, rOffsets, rErrors, rTimestamps, slots } = this;
    let n: number;
    do {
      n = this.addon.poll(handle, rIds, rPartitions, rOffsets, rErrors, rTimestamps);
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
  produce(topic: string, partition: number | null, value: Buffer | null, key?: Key | null, timestamp?: number | null, opaque?: unknown, headers?: Headers): number {
    if (topic !== this.topic || this.count === BATCH) {
      if (this.start < this.count) this.submit();
      if (this.start < this.count) return ERR_QUEUE_FULL;
      this.topic = topic;
    }
    let pos = this.pos;
    let data = this.data;
    const i = this.count;
    const valueLength = value === null || value === undefined ? 0 : value.length;
    // Room for the value, the key (a string: at most 3 bytes per UTF-16 unit) and the headers.
    const need = pos + valueLength + (key == null ? 0 : typeof key === 'string' ? key.length * 3 : key.length) + (headers === undefined ? 0 : 4096);
    if (need > data.length) data = this.grow(need);
    const l = i * PRODUCE_ROW_SIZE;
    const layout = this.layout;
    if (value === null || value === undefined) {
      layout[l + PRODUCE_ROW_VALUE_AT] = pos;
      layout[l + PRODUCE_ROW_VALUE_LENGTH] = -1;
    } else {
      layout[l + PRODUCE_ROW_VALUE_AT] = pos;
      layout[l + PRODUCE_ROW_VALUE_LENGTH] = valueLength;
      data.set(value, pos);
      pos += valueLength;
    }
    if (key === null || key === undefined) {
      layout[l + PRODUCE_ROW_KEY_AT] = pos;
      layout[l + PRODUCE_ROW_KEY_LENGTH] = -1;
    } else if (typeof key === 'string') {
      // A short ASCII key byte by byte: cheaper than a call into Buffer's UTF-8 encoder.
      let n = key.length <= SHORT_KEY ? writeAscii(data, pos, key) : -1;
      if (n < 0) n = data.write(key, pos);
      layout[l + PRODUCE_ROW_KEY_AT] = pos;
      layout[l + PRODUCE_ROW_KEY_LENGTH] = n;
      pos += n;
    } else {
      layout[l + PRODUCE_ROW_KEY_AT] = pos;
      layout[l + PRODUCE_ROW_KEY_LENGTH] = key.length;
      data.set(key, pos);
      pos += key.length;
    }
    layout[l + PRODUCE_ROW_FIRST_HEADER] = this.headerCount;
    layout[l + PRODUCE_ROW_HEADER_COUNT] = 0;
    if (headers !== undefined) {
      this.pos = pos;
      layout[l + PRODUCE_ROW_HEADER_COUNT] = this.writeHeaders(headers);
      pos = this.pos;
    }
    this.pos = pos;
    this.partitions[i] = partition ?? -1;
    this.timestamps[i] = timestamp ?? 0;
    if (this.unslotted) {
      this.ids[i] = -1;
      this.rowKeys[i] = key;
    } else if (opaque instanceof LaterSend) {
      // A send() (send-group.ts): a member of its partition's group in this batch.
      const group = this.groupOf(partition ?? -1);
      this.ids[i] = this.slots.take(group, topic, valueLength, opaque.key, value, this.join(opaque, group));
    } else if (opaque instanceof Link && opaque.opaque instanceof LaterSend) {
      // A spread send(): its link goes with the message, the group in the link.
      const later = opaque.opaque;
      const group = this.groupOf(partition ?? -1);
      opaque.opaque = group;
      this.ids[i] = this.slots.take(opaque, topic, valueLength, later.key, value, this.join(later, group));
    } else this.ids[i] = this.slots.take(opaque, topic, valueLength, key, value, -1);
    this.count = i + 1;
    if (pos - layout[l + PRODUCE_ROW_VALUE_AT] + OVERHEAD * (1 + layout[l + PRODUCE_ROW_HEADER_COUNT]) > this.sizeLimit) return this.produceNow(i);
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

  /** Per partition (+1): the group of this batch's send() calls to it (send-group.ts); which are set. */
  private readonly groups: Array<SendGroup | undefined> = [];
  private readonly grouped: number[] = [];
  /** The LaterSend of the last send() joined to a group. */
  private joiner: LaterSend | undefined;

  /** Makes `later`'s send() a member of `group`; its index. */
  private join(later: LaterSend, group: SendGroup): number {
    const member = group.add();
    later.joined(group, member);
    this.joiner = later;
    return member;
  }

  /** The group of this batch's send() calls to `partition` (-1: librdkafka's choice). */
  private groupOf(partition: number): SendGroup {
    let group = this.groups[partition + 1];
    if (group === undefined || group.done) {
      group = new SendGroup();
      if (this.groups[partition + 1] === undefined) this.grouped.push(partition + 1);
      this.groups[partition + 1] = group;
    }
    return group;
  }

  /**
   * A send() refused at once (produceNow: the message just produced, slot `id`) leaves its
   * group: its caller is told by the refusal.
   */
  private unjoin(id: number): void {
    const joiner = this.joiner;
    if (this.slots.members[id] < 0 || joiner === undefined) return;
    const opaque = this.slots.opaques[id];
    if (opaque instanceof Link) opaque.opaque = joiner;
    joiner.left();
  }

  private readonly submitLater = (): void => {
    this.submitQueued = false;
    this.submit();
  };

  /** Writes a message's headers into the batch; returns how many. */
  private writeHeaders(headers: Headers): number {
    let count = 0;
    // An index, not for..of: no iterator per message.
    for (let k = 0; k < headers.length; k++) {
      const header = headers[k];
      if (header instanceof OrderFields) {
        // Our order header: its text written from its fields (no string made for it).
        this.reserveHeader(ORDER_NAME.length + ORDER_FIELDS_MAX_BYTES);
        const h = this.headerCount++ * HEADER_ROW_SIZE;
        const table = this.headerTable;
        const data = this.data;
        table[h + HEADER_ROW_NAME_AT] = this.pos;
        table[h + HEADER_ROW_NAME_LENGTH] = ORDER_NAME.length;
        data.set(ORDER_NAME, this.pos);
        this.pos += ORDER_NAME.length;
        table[h + HEADER_ROW_VALUE_AT] = this.pos;
        const end = writeOrderFields(data, this.pos, header);
        table[h + HEADER_ROW_VALUE_LENGTH] = end - this.pos;
        this.pos = end;
        count++;
        continue;
      }
      for (const name in header) {
        const value = header[name];
        const bytes = typeof value === 'string' ? Buffer.byteLength(value) : value == null ? 0 : value.length;
        this.reserveHeader(name.length * 3 + bytes);
        const h = this.headerCount++ * HEADER_ROW_SIZE;
        const table = this.headerTable;
        const data = this.data;
        table[h + HEADER_ROW_NAME_AT] = this.pos;
        table[h + HEADER_ROW_NAME_LENGTH] = data.write(name, this.pos);
        this.pos += table[h + HEADER_ROW_NAME_LENGTH];
        table[h + HEADER_ROW_VALUE_AT] = this.pos;
        if (value == null) table[h + HEADER_ROW_VALUE_LENGTH] = -1;
        else if (typeof value === 'string') {
          table[h + HEADER_ROW_VALUE_LENGTH] = data.write(value, this.pos);
        } else {
          data.set(value, this.pos);
          table[h + HEADER_ROW_VALUE_LENGTH] = value.length;
        }
        this.pos += Math.max(0, table[h + HEADER_ROW_VALUE_LENGTH]);
        count++;
      }
    }
    return count;
  }

  /** Room for one more header in the header table, and for `bytes` more in the batch buffer. */
  private reserveHeader(bytes: number): void {
    if (this.headerCount + 1 > this.headerTable.length / HEADER_ROW_SIZE) {
      const table = new Int32Array(this.headerTable.length * 2);
      table.set(this.headerTable);
      this.headerTable = table;
    }
    if (this.pos + bytes > this.data.length) this.grow(this.pos + bytes);
  }

  /** A bigger batch buffer, with what is written so far. */
  private grow(need: number): Buffer {
    const data = Buffer.allocUnsafeSlow(Math.max(need, this.data.length * 2));
    this.data.copy(data, 0, 0, this.pos);
    this.data = data;
    return data;
  }

  /** Hands the batch over; what librdkafka refuses for good gets a failed report, a full queue stops it until later. */
  private submit(): void {
    const handle = this.handle.current;
    if (handle === undefined || this.start === this.count) return;
    const start = this.start;
    const topic = this.topic;
    // send() calls after this hand-over form new groups.
    const grouped = this.grouped;
    for (let k = 0; k < grouped.length; k++) this.groups[grouped[k]] = undefined;
    grouped.length = 0;
    const end = this.addon.produce(handle, topic, start, this.count, this.partitions, this.ids, this.data, this.layout,
      this.timestamps, this.headerTable, this.results);
    // While sendBatch() calls are in flight, what was handed over leaves without waiting
    // linger.ms: a pulse of librdkafka's flushing state (native/src/hurry.c).
    if (this.hurrying > 0 && end > start) this.addon.hurry(handle);
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
          this.unjoin(this.ids[i]);
          this.slots.release(this.ids[i]);
        }
      } else (refused ??= []).push(this.ids[i], result, this.partitions[i], this.unslotted ? this.rowKeys[i] : undefined);
    }
    this.start = end;
    if (end === this.count) {
      this.start = this.count = this.pos = this.headerCount = 0;
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
   * callers): its opaque, inside its handoff link if it has one; a grouped send() as its member.
   */
  *inflightPendings(): Iterable<unknown> {
    const slots = this.slots;
    for (const id of slots.inflight()) {
      const opaque = slots.opaques[id];
      const inner = opaque instanceof Link ? opaque.opaque : opaque;
      yield inner instanceof SendGroup ? inner.member(slots.members[id], slots.keys[id] as Key | null) : inner;
    }
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
