// The native engine's consumer, shaped as the node-rdkafka KafkaConsumer that DynamicConsumer
// drives (connect, subscribe, consume(n, cb), pause / resume, commit / commitSync, committed,
// assign / incrementalAssign / unassign / incrementalUnassign in its rebalance_cb,
// rebalanceProtocol, disconnect; 'offset.commit', 'event.error', 'event.log', 'event.stats').
// What makes it fast: consume() takes what librdkafka has in one native call into one new
// buffer per batch, and each message's key and value are views of that buffer (never reused
// while a view lives: the buffer is the batch's own). librdkafka's callbacks (rebalance, commit
// results) are served by that call and reach JS within it, as node-rdkafka's reach it later.
// The twin of native/src/consume.c; the librdkafka handle: handle.ts; the rows it reads: contract.ts.

import { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';
import { inspect } from 'node:util';
import type { Config } from '../core/config';
import { partitionKey } from '../core/partition-key';
import { emitClientEvent } from './addon';
import {
  ASSIGN_ADD, ASSIGN_CLEAR, ASSIGN_REMOVE, ASSIGN_SET, EVENT_COMMITTED, EVENT_ERROR, EVENT_REBALANCE,
  HEADER_ROW_NAME_AT, HEADER_ROW_NAME_LENGTH, HEADER_ROW_SIZE, HEADER_ROW_VALUE_AT, HEADER_ROW_VALUE_LENGTH, MESSAGE_ROW_ERROR,
  MESSAGE_ROW_FIRST_HEADER, MESSAGE_ROW_HEADER_COUNT, MESSAGE_ROW_KEY_AT, MESSAGE_ROW_KEY_LENGTH, MESSAGE_ROW_OFFSET, MESSAGE_ROW_PARTITION,
  MESSAGE_ROW_SIZE, MESSAGE_ROW_TIMESTAMP, MESSAGE_ROW_TOPIC, MESSAGE_ROW_VALUE_AT, MESSAGE_ROW_VALUE_LENGTH, type NativeAddon,
  type NativeEvent, type NativePartition,
} from './contract';
import { NativeHandle, notConnected } from './handle';
import { ORDER_HEADER } from '../partitioner/headers';

/**
 * Where a message that keeps its headers unread (a native batch's) holds its order header's
 * value: a Buffer, or null when it has none. Other messages have no such property
 * (src/delivery/message-order.ts reads it).
 */
export const ORDER_VALUE: unique symbol = Symbol('kdp.orderValue');

/**
 * A native batch's message's method that gives the value of its header named `name` (bytes) as
 * latin1 text, or null when it has none, without making its header list (the trace headers:
 * delivery/tracing.ts); undefined once its list was made (read that: it may have been changed).
 */
export const HEADER_TEXT: unique symbol = Symbol('kdp.headerText');

/** librdkafka's codes a rebalance comes with (rdkafka.h). */
const ERR__ASSIGN_PARTITIONS = -175;
const ERR__REVOKE_PARTITIONS = -174;
interface TopicPartition {
  topic: string;
  partition: number;
  offset?: number;
  /** Committed with the offset (commit, commitSync: a string is sent as its latin1 bytes), or read with it (committed: a Buffer). */
  metadata?: Buffer | string;
}

/** A consumed message, as node-rdkafka's: key and value are views of its batch's buffer. */
export interface NativeMessage {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  size: number;
  headers?: Array<Record<string, Buffer>>;
}

/** The order header's name (src/partitioner/headers.ts), as bytes to find it by without making a string. */
const ORDER_NAME = Buffer.from(ORDER_HEADER, 'latin1');

/** Whether the header at `e` in a batch's header table is the order header. */
function isOrderHeader(data: Buffer, table: Int32Array, e: number): boolean {
  if (table[e + HEADER_ROW_NAME_LENGTH] !== ORDER_NAME.length) return false;
  const at = table[e + HEADER_ROW_NAME_AT];
  for (let i = 0; i < ORDER_NAME.length; i++) if (data[at + i] !== ORDER_NAME[i]) return false;
  return true;
}

/**
 * A message of a native batch. Its headers stay in the batch until read: `headers` is an
 * accessor on the prototype that makes node-rdkafka's array (`[{ name: Buffer }, ...]`) on first
 * read, so that a message whose headers nobody reads costs no header objects (`{ ...message }`
 * does not copy them: read `message.headers`). The order header's value is found without it
 * (ORDER_VALUE), for the resequencer.
 */
class BatchMessage implements NativeMessage {
  [ORDER_VALUE]: Buffer | null = null;
  private list: Array<Record<string, Buffer>> | undefined = undefined;
  constructor(
    public topic: string,
    public partition: number,
    public offset: number,
    public timestamp: number,
    public key: Buffer | null,
    public value: Buffer | null,
    public size: number,
    private readonly data: Buffer,
    private readonly table: Int32Array,
    private readonly first: number,
    private readonly count: number,
  ) {}

  get headers(): Array<Record<string, Buffer>> | undefined {
    if (this.list === undefined && this.count > 0) {
      const list: Array<Record<string, Buffer>> = [];
      const { data, table } = this;
      for (let k = this.first, end = k + this.count; k < end; k++) {
        const e = k * HEADER_ROW_SIZE;
        const at = table[e + HEADER_ROW_NAME_AT];
        const name = data.toString('utf8', at, at + table[e + HEADER_ROW_NAME_LENGTH]);
        const value = table[e + HEADER_ROW_VALUE_AT];
        list.push({ [name]: data.subarray(value, value + Math.max(0, table[e + HEADER_ROW_VALUE_LENGTH])) });
      }
      this.list = list;
    }
    return this.list;
  }

  set headers(list: Array<Record<string, Buffer>> | undefined) {
    this.list = list;
  }

  [HEADER_TEXT](name: Buffer): string | null | undefined {
    if (this.list !== undefined) return undefined;
    const { data, table } = this;
    for (let k = this.first, end = k + this.count; k < end; k++) {
      const e = k * HEADER_ROW_SIZE;
      if (table[e + HEADER_ROW_NAME_LENGTH] !== name.length || data.compare(name, 0, name.length, table[e + HEADER_ROW_NAME_AT], table[e + HEADER_ROW_NAME_AT] + name.length) !== 0) continue;
      const at = table[e + HEADER_ROW_VALUE_AT];
      return data.toString('latin1', at, at + Math.max(0, table[e + HEADER_ROW_VALUE_LENGTH]));
    }
    return null;
  }

  /** The message as node-rdkafka's would be: its fields, and `headers` when it has some. */
  toJSON(): object {
    const { topic, partition, offset, timestamp, key, value, size, headers } = this;
    return headers === undefined ? { topic, partition, offset, timestamp, key, value, size } : { topic, partition, offset, timestamp, key, value, size, headers };
  }

  [inspect.custom](): object {
    return this.toJSON();
  }
}

/** A list of partitions as the addon takes it: names, partitions and (optionally) offsets. */
export function columns(list: readonly TopicPartition[], withOffsets: boolean): [string[], Int32Array, Float64Array | undefined] {
  const topics = list.map((p) => p.topic);
  const partitions = Int32Array.from(list, (p) => p.partition);
  const offsets = withOffsets ? Float64Array.from(list, (p) => p.offset ?? -1001) : undefined;
  return [topics, partitions, offsets];
}

/**
 * Each partition's metadata as commit() takes it, or undefined when none has any. A string
 * goes with a NUL after it, as Confluent's client writes its own: that client reads every
 * commit's metadata less its last byte (src/common.cc), so a member of the group on it
 * reads this one whole.
 */
export function metadataOf(list: readonly TopicPartition[]): Array<Uint8Array | undefined> | undefined {
  return list.some((p) => p.metadata !== undefined)
    ? list.map((p) => (typeof p.metadata === 'string' ? Buffer.from(`${p.metadata}\0`, 'latin1') : p.metadata))
    : undefined;
}

export class NativeConsumer extends EventEmitter {
  readonly globalConfig: Config;
  readonly topicConfig: Config;
  /** The librdkafka handle (its `current` is the addon's, undefined while closed). */
  private readonly handle: NativeHandle;
  private timeoutMs = 1000;
  private readonly rebalanceCb: ((err: { code: number; message: string }, assignment: TopicPartition[]) => void) | undefined;
  /** A consume() waiting for messages: called at the next wake-up, or at its timeout. */
  private waiting: (() => void) | undefined;
  /** What assign / incrementalAssign gave and unassign / incrementalUnassign did not take back. */
  private readonly owned = new Map<string, TopicPartition>();

  constructor(private readonly addon: NativeAddon, globalConfig: Config, topicConfig: Config) {
    super();
    this.globalConfig = globalConfig;
    this.topicConfig = topicConfig;
    this.rebalanceCb = typeof globalConfig.rebalance_cb === 'function' ? (globalConfig.rebalance_cb as NativeConsumer['rebalanceCb']) : undefined;
    // A bad setting throws here, as node-rdkafka's constructor does.
    this.handle = new NativeHandle(addon, 'consumer', globalConfig, topicConfig, () => this.wake(), (...event) => this.event(...event));
  }

  private wake(): void {
    // Logs first: connect() reads a refused login from them before anything is consumed.
    const current = this.handle.current;
    if (current !== undefined) this.addon.logs(current);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  private event(...event: NativeEvent): void {
    if (emitClientEvent(this, this.addon, event)) return;
    switch (event[0]) {
      case EVENT_REBALANCE:
        this.rebalance(event[1], event[2]);
        break;
      case EVENT_COMMITTED: {
        const code = event[1];
        const err = code === 0 ? null : Object.assign(new Error(this.addon.errstr(code)), { code });
        this.emit('offset.commit', err, event[2]);
        break;
      }
    }
  }

  /** A rebalance, within a consume call: the application's rebalance_cb assigns, or the default. */
  private rebalance(code: number, partitions: NativePartition[]): void {
    const assignment = partitions.map(({ topic, partition }) => ({ topic, partition }));
    if (this.rebalanceCb !== undefined) {
      this.rebalanceCb.call(this, { code, message: this.addon.errstr(code) }, assignment);
      return;
    }
    const cooperative = this.rebalanceProtocol() === 'COOPERATIVE';
    if (code === ERR__ASSIGN_PARTITIONS) {
      if (cooperative) this.incrementalAssign(assignment);
      else this.assign(assignment);
    } else if (code === ERR__REVOKE_PARTITIONS) {
      if (cooperative) this.incrementalUnassign(assignment);
      else this.unassign();
    }
  }

  isConnected(): boolean {
    return this.handle.isConnected();
  }

  connect(options: { timeout?: number } | undefined, cb: (err: unknown) => void): void {
    this.handle.connect(options?.timeout ?? 30_000, () => this.emit('ready', { name: 'kdp-native-consumer' }), cb);
  }

  getMetadata(options: { topic?: string; timeout?: number }, cb: (err: any, metadata: any) => void): void {
    this.handle.getMetadata(options, cb);
  }

  subscribe(topics: string[]): void {
    this.addon.subscribe(this.handle.live, topics);
  }

  setDefaultConsumeTimeout(ms: number): void {
    this.timeoutMs = ms;
  }

  /** The consume timeout (ms) setDefaultConsumeTimeout() set. */
  get consumeTimeout(): number {
    return this.timeoutMs;
  }

  /**
   * Up to `n` messages: those librdkafka has now, or, when it has none, the first to come
   * within the consume timeout (then none). Calls back on a later turn, as node-rdkafka does.
   */
  consume(n: number, cb: (err: unknown, messages: NativeMessage[]) => void): void {
    let messages: NativeMessage[];
    try {
      messages = this.read(n);
    } catch (err) {
      setImmediate(() => cb(err, []));
      return;
    }
    if (messages.length > 0 || this.timeoutMs <= 0) {
      setImmediate(() => cb(null, messages));
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const again = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      this.waiting = undefined;
      let later: NativeMessage[] = [];
      let error: unknown = null;
      try {
        if (this.handle.current !== undefined) later = this.read(n);
      } catch (err) {
        error = err;
      }
      cb(error, later);
    };
    this.waiting = again;
    timer = setTimeout(again, this.timeoutMs);
  }

  /** What librdkafka has now, as messages (a batch's keys and values are views of its one buffer). */
  private read(n: number): NativeMessage[] {
    const batch = this.addon.consume(this.handle.live, n);
    if (batch === undefined) return [];
    const { data, table, headers, topics } = batch;
    const count = table.length / MESSAGE_ROW_SIZE;
    const out: BatchMessage[] = [];
    for (let i = 0; i < count; i++) {
      const r = i * MESSAGE_ROW_SIZE;
      const code = table[r + MESSAGE_ROW_ERROR];
      if (code !== 0) {
        // A consumer error (not a message): reported as node-rdkafka does, through 'event.error'.
        this.event(EVENT_ERROR, code, this.addon.errstr(code), false);
        continue;
      }
      const keyAt = table[r + MESSAGE_ROW_KEY_AT];
      const keyLength = table[r + MESSAGE_ROW_KEY_LENGTH];
      const valueAt = table[r + MESSAGE_ROW_VALUE_AT];
      const valueLength = table[r + MESSAGE_ROW_VALUE_LENGTH];
      const first = table[r + MESSAGE_ROW_FIRST_HEADER];
      const headerCount = table[r + MESSAGE_ROW_HEADER_COUNT];
      const message = new BatchMessage(
        topics[table[r + MESSAGE_ROW_TOPIC]],
        table[r + MESSAGE_ROW_PARTITION],
        table[r + MESSAGE_ROW_OFFSET],
        table[r + MESSAGE_ROW_TIMESTAMP],
        keyLength < 0 ? null : data.subarray(keyAt, keyAt + keyLength),
        valueLength < 0 ? null : data.subarray(valueAt, valueAt + valueLength),
        Math.max(0, valueLength),
        data,
        headers,
        first,
        headerCount,
      );
      for (let k = first, end = first + headerCount; k < end; k++) {
        const e = k * HEADER_ROW_SIZE;
        if (isOrderHeader(data, headers, e)) {
          const at = headers[e + HEADER_ROW_VALUE_AT];
          message[ORDER_VALUE] = data.subarray(at, at + Math.max(0, headers[e + HEADER_ROW_VALUE_LENGTH]));
          break;
        }
      }
      out.push(message);
    }
    return out;
  }

  pause(list: TopicPartition[]): void {
    const [topics, partitions] = columns(list, false);
    this.addon.pause(this.handle.live, true, topics, partitions);
  }

  resume(list: TopicPartition[]): void {
    const [topics, partitions] = columns(list, false);
    this.addon.pause(this.handle.live, false, topics, partitions);
  }

  assign(list: TopicPartition[]): void {
    const [topics, partitions, offsets] = columns(list, true);
    this.addon.assignment(this.handle.live, ASSIGN_SET, topics, partitions, offsets);
    this.owned.clear();
    for (const { topic, partition } of list) this.owned.set(partitionKey(topic, partition), { topic, partition });
  }

  unassign(): void {
    this.addon.assignment(this.handle.live, ASSIGN_CLEAR);
    this.owned.clear();
  }

  incrementalAssign(list: TopicPartition[]): void {
    const [topics, partitions, offsets] = columns(list, true);
    this.addon.assignment(this.handle.live, ASSIGN_ADD, topics, partitions, offsets);
    for (const { topic, partition } of list) this.owned.set(partitionKey(topic, partition), { topic, partition });
  }

  incrementalUnassign(list: TopicPartition[]): void {
    const [topics, partitions] = columns(list, false);
    this.addon.assignment(this.handle.live, ASSIGN_REMOVE, topics, partitions, undefined);
    for (const { topic, partition } of list) this.owned.delete(partitionKey(topic, partition));
  }

  /** The partitions assigned (as node-rdkafka's assignments(): throws while not connected). */
  assignments(): TopicPartition[] {
    if (!this.isConnected()) throw notConnected('consumer');
    return [...this.owned.values()];
  }

  rebalanceProtocol(): string {
    const current = this.handle.current;
    return current === undefined ? 'NONE' : this.addon.protocol(current);
  }

  commit(list: TopicPartition[]): void {
    const [topics, partitions, offsets] = columns(list, true);
    this.addon.commit(this.handle.live, topics, partitions, offsets!, metadataOf(list), true);
  }

  commitSync(list: TopicPartition[]): void {
    const [topics, partitions, offsets] = columns(list, true);
    this.addon.commit(this.handle.live, topics, partitions, offsets!, metadataOf(list), false);
  }

  committed(list: TopicPartition[], timeoutMs: number, cb: (err: any, offsets?: TopicPartition[]) => void): void {
    const current = this.handle.current;
    if (current === undefined) {
      setImmediate(() => cb(notConnected('consumer')));
      return;
    }
    const [topics, partitions] = columns(list, false);
    this.handle.job((done) => this.addon.committed(current, topics, partitions, timeoutMs, done), cb);
  }

  /** Reads `list`'s partitions again from their offsets (rd_kafka_seek_partitions, on the thread pool): after an aborted transaction. */
  seekPartitions(list: TopicPartition[], timeoutMs: number, cb: (err: any) => void): void {
    const current = this.handle.current;
    if (current === undefined) {
      setImmediate(() => cb(notConnected('consumer')));
      return;
    }
    const [topics, partitions, offsets] = columns(list, true);
    this.handle.job((done) => this.addon.seek(current, topics, partitions, offsets!, timeoutMs, done), cb);
  }

  /** The addon's handle, whose group metadata (generation, member id) a native producer sends offsets to a transaction with. */
  get groupHandle(): object {
    return this.handle.live;
  }

  /** Leaves the group and closes the handle (on the thread pool), once the calls there are done. */
  disconnect(cb?: (err?: unknown) => void): void {
    const current = this.handle.current;
    if (current === undefined) {
      cb?.();
      return;
    }
    const waiting = this.waiting;
    this.waiting = undefined;
    this.handle.close(() => {
      this.emit('disconnected');
      cb?.();
    }, () => {
      this.owned.clear();
      // A consume() waiting for messages gets none.
      waiting?.();
    });
  }
}
