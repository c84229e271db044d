// Generated from native/contract.js by scripts/native-contract.js: do not edit.
// The numbers, events, objects and functions the addon (native/src/contract.h) and this side agree on.

import type { Buffer } from 'node:buffer';

// Per message in produce()'s layout table (Int32Array): where its value, key and headers are in the batch's data.
/** the value's first byte in data */
export const PRODUCE_ROW_VALUE_AT = 0;
/** its length (-1: null) */
export const PRODUCE_ROW_VALUE_LENGTH = 1;
/** the key's first byte in data */
export const PRODUCE_ROW_KEY_AT = 2;
/** its length (-1: null) */
export const PRODUCE_ROW_KEY_LENGTH = 3;
/** its first row in the header table */
export const PRODUCE_ROW_FIRST_HEADER = 4;
/** its number of headers */
export const PRODUCE_ROW_HEADER_COUNT = 5;
/** numbers per row */
export const PRODUCE_ROW_SIZE = 6;

// Per header in the header tables of produce() and consume() (Int32Array).
/** the name's first byte in data */
export const HEADER_ROW_NAME_AT = 0;
/** the name's length */
export const HEADER_ROW_NAME_LENGTH = 1;
/** the value's first byte in data */
export const HEADER_ROW_VALUE_AT = 2;
/** its length (-1: null) */
export const HEADER_ROW_VALUE_LENGTH = 3;
/** numbers per row */
export const HEADER_ROW_SIZE = 4;

// Per message in a consume() batch's table (Float64Array).
/** its topic's index in the batch's topics */
export const MESSAGE_ROW_TOPIC = 0;
/** its partition */
export const MESSAGE_ROW_PARTITION = 1;
/** its offset */
export const MESSAGE_ROW_OFFSET = 2;
/** its timestamp (ms) */
export const MESSAGE_ROW_TIMESTAMP = 3;
/** the key's first byte in data */
export const MESSAGE_ROW_KEY_AT = 4;
/** its length (-1: null) */
export const MESSAGE_ROW_KEY_LENGTH = 5;
/** the value's first byte in data */
export const MESSAGE_ROW_VALUE_AT = 6;
/** its length (-1: null) */
export const MESSAGE_ROW_VALUE_LENGTH = 7;
/** its first row in the header table */
export const MESSAGE_ROW_FIRST_HEADER = 8;
/** its number of headers */
export const MESSAGE_ROW_HEADER_COUNT = 9;
/** librdkafka's error code: not 0 for a consumer error, which is no message */
export const MESSAGE_ROW_ERROR = 10;
/** numbers per row */
export const MESSAGE_ROW_SIZE = 11;

// Events: onEvent(kind, ...args) on the JS thread, each kind's arguments after it.
/** librdkafka's statistics (statistics.interval.ms): (json) */
export const EVENT_STATS = 1;
/** its arguments after the kind */
export const EVENT_STATS_ARGC = 1;
/** a client error, as librdkafka reports it: (code, reason, fatal) */
export const EVENT_ERROR = 2;
/** its arguments after the kind */
export const EVENT_ERROR_ARGC = 3;
/** a log line: (level, facility, message) */
export const EVENT_LOG = 3;
/** its arguments after the kind */
export const EVENT_LOG_ARGC = 3;
/** a producer: the failed delivery of a message produced without a slot (its report has no id): (code, topic, partition, key, size, timestamp) */
export const EVENT_DELIVERY_FAILED = 4;
/** its arguments after the kind */
export const EVENT_DELIVERY_FAILED_ARGC = 6;
/** a consumer: partitions assigned or revoked (the JS side assigns), within a consume() call: (code, partitions) */
export const EVENT_REBALANCE = 5;
/** its arguments after the kind */
export const EVENT_REBALANCE_ARGC = 2;
/** a consumer: an offset commit's result, within a consume() or synchronous commit() call: (code, partitions) */
export const EVENT_COMMITTED = 6;
/** its arguments after the kind */
export const EVENT_COMMITTED_ARGC = 2;

// PRODUCED: produce()'s result per message.
/** librdkafka took it on the partition given */
export const PRODUCED_TAKEN = 0;
/** librdkafka took it without the partition given (unknown to it): placed by librdkafka's partitioner */
export const PRODUCED_UNASSIGNED = 1;

// ASSIGN: assignment()'s modes.
/** assign the list (eager) */
export const ASSIGN_SET = 0;
/** unassign everything (eager) */
export const ASSIGN_CLEAR = 1;
/** incremental assign */
export const ASSIGN_ADD = 2;
/** incremental unassign */
export const ASSIGN_REMOVE = 3;

// JOB: the calls run on libuv's thread pool (native/src/jobs.c), each ending in its callback.
/** rd_kafka_metadata() */
export const JOB_METADATA = 0;
/** rd_kafka_flush() */
export const JOB_FLUSH = 1;
/** the consumer closed, the handle destroyed */
export const JOB_CLOSE = 2;
/** rd_kafka_committed() */
export const JOB_COMMITTED = 3;
/** rd_kafka_init_transactions() */
export const JOB_TXN_INIT = 4;
/** rd_kafka_begin_transaction() */
export const JOB_TXN_BEGIN = 5;
/** rd_kafka_commit_transaction() */
export const JOB_TXN_COMMIT = 6;
/** rd_kafka_abort_transaction() */
export const JOB_TXN_ABORT = 7;
/** rd_kafka_send_offsets_to_transaction() */
export const JOB_TXN_OFFSETS = 8;
/** rd_kafka_seek_partitions() */
export const JOB_SEEK = 9;

/** An event as onEvent receives it: its kind, then its arguments. */
export type NativeEvent =
  | [kind: typeof EVENT_STATS, json: string]
  | [kind: typeof EVENT_ERROR, code: number, reason: string, fatal: boolean]
  | [kind: typeof EVENT_LOG, level: number, facility: string, message: string]
  | [kind: typeof EVENT_DELIVERY_FAILED, code: number, topic: string, partition: number, key: Buffer | null, size: number, timestamp: number]
  | [kind: typeof EVENT_REBALANCE, code: number, partitions: NativePartition[]]
  | [kind: typeof EVENT_COMMITTED, code: number, partitions: NativePartition[]];

/** A partition of a list (rebalance, commit result, committed offsets). */
export interface NativePartition {
  /** its topic */
  topic: string;
  /** its partition */
  partition: number;
  /** an offset (librdkafka's logical offsets are negative) */
  offset: number;
  /** the metadata committed with the offset, when there is some */
  metadata?: Buffer;
  /** librdkafka's error code for this partition, when not 0 */
  error?: number;
}

/** Messages consume() read: one new buffer per batch, of which keys and values are views. */
export interface NativeBatch {
  /** keys, values, header names and values */
  data: Buffer;
  /** MESSAGE_ROW_SIZE numbers per message */
  table: Float64Array;
  /** HEADER_ROW_SIZE numbers per header */
  headers: Int32Array;
  /** the topics the table indexes */
  topics: string[];
}

/** An error the addon made: librdkafka's code and its text. */
export interface NativeError extends Error {
  code: number;
  /** A transaction's call: librdkafka's classes of the error (rd_kafka_error_t), under node-rdkafka's names. */
  isRetriable?: boolean;
  isTxnRequiresAbort?: boolean;
  isFatal?: boolean;
}

/** The addon's functions (native/src/addon.c exports them from native/src/contract.h's list). */
export interface NativeAddon {
  /** the version of the librdkafka the addon runs on */
  version(): string;
  /** librdkafka's description of an error code */
  errstr(code: number): string;
  /** the contract's numbers as the addon was compiled with them (a drift test reads them) */
  contract(): Record<string, number>;
  /** a handle from [name, value, ...] configurations; `wake` when librdkafka has something to read, `onEvent` for each event */
  create(kind: 'producer' | 'consumer', global: string[], topic: string[], wake: () => void, onEvent: (...event: NativeEvent) => void): object;
  /** whether pending wake-ups keep the event loop alive */
  keepAlive(handle: object, keep: boolean): void;
  /** messages in librdkafka, waiting for a report */
  outq(handle: object): number;
  /** the cluster's metadata (JOB_METADATA) */
  metadata(handle: object, timeoutMs: number, cb: (err: NativeError | null, metadata?: any) => void, topic?: string): void;
  /** waits until librdkafka has no message left (JOB_FLUSH) */
  flush(handle: object, timeoutMs: number, cb: (err: NativeError | null) => void): void;
  /** closes the handle (JOB_CLOSE): what librdkafka holds is dropped */
  close(handle: object, timeoutMs: number, cb: (err: NativeError | null) => void): void;
  /** hands messages start..end-1 to librdkafka (PRODUCE_ROW, HEADER_ROW, PRODUCED_*); returns where librdkafka's full queue stopped it */
  produce(handle: object, topic: string, start: number, end: number, partitions: Int32Array, ids: Int32Array, data: Uint8Array, layout: Int32Array, timestamps: Float64Array, headers: Int32Array, results: Int32Array): number;
  /** a producer's delivery reports into the arrays (the number read); its other events to onEvent */
  poll(handle: object, ids: Int32Array, partitions: Int32Array, offsets: Float64Array, errors: Int32Array, timestamps: Float64Array): number;
  /** sendBatch() messages were just handed over: librdkafka flushes for a moment (native/src/hurry.c) */
  hurry(handle: object): void;
  /** up to `max` messages librdkafka has now (MESSAGE_ROW, HEADER_ROW), serving its callbacks meanwhile */
  consume(handle: object, max: number): NativeBatch | undefined;
  /** the consumer's subscription */
  subscribe(handle: object, topics: string[]): void;
  /** assigns or unassigns (ASSIGN_*) */
  assignment(handle: object, mode: number, topics?: string[], partitions?: Int32Array, offsets?: Float64Array): void;
  /** pauses or resumes partitions */
  pause(handle: object, pause: boolean, topics: string[], partitions: Int32Array): void;
  /** commits offsets, each with its metadata (bytes, or none); a synchronous one serves its EVENT_COMMITTED within */
  commit(handle: object, topics: string[], partitions: Int32Array, offsets: Float64Array, metadata: Array<Uint8Array | undefined> | undefined, async: boolean): void;
  /** the committed offsets, with their metadata (JOB_COMMITTED) */
  committed(handle: object, topics: string[], partitions: Int32Array, timeoutMs: number, cb: (err: NativeError | null, offsets?: NativePartition[]) => void): void;
  /** a producer's transactional call (JOB_TXN_INIT, _BEGIN, _COMMIT, _ABORT) on the thread pool */
  transaction(handle: object, job: number, timeoutMs: number, cb: (err: NativeError | null) => void): void;
  /** offsets (each with its metadata) into the open transaction (JOB_TXN_OFFSETS): the group's metadata of `consumer`, a native consumer handle (KIP-447: generation and member id), else of `groupId` alone */
  sendOffsets(handle: object, consumer: object | null, groupId: string, topics: string[], partitions: Int32Array, offsets: Float64Array, metadata: Array<Uint8Array | undefined>, timeoutMs: number, cb: (err: NativeError | null) => void): void;
  /** a consumer's partitions read again from the offsets (JOB_SEEK) */
  seek(handle: object, topics: string[], partitions: Int32Array, offsets: Float64Array, timeoutMs: number, cb: (err: NativeError | null) => void): void;
  /** the rebalance protocol: 'NONE', 'EAGER' or 'COOPERATIVE' */
  protocol(handle: object): string;
  /** a consumer's log events to onEvent, read without waiting */
  logs(handle: object): void;
}
