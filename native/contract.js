'use strict';
// The contract between the native engine (native/src/, C) and the TypeScript side (src/native/):
// the addon's functions, the layouts of the tables that cross the boundary, the kinds of the
// events it calls back with, and the other numbers both sides must agree on. Defined here only:
// scripts/native-contract.js writes native/src/contract.h and src/native/contract.ts from it, and
// test/native-contract.test.js fails when either differs from what it would write or when the
// built addon disagrees with it. Change it here, then run `node scripts/native-contract.js`.
//
// Data only (no code): a table's fields are numbered by their place in the list; an enum's
// values are given.

/** Tables of numbers, one row per message (or header), read by index on both sides. */
const rows = [
  {
    name: 'PRODUCE_ROW',
    doc: "Per message in produce()'s layout table (Int32Array): where its value, key and headers are in the batch's data.",
    fields: [
      ['VALUE_AT', "the value's first byte in data"],
      ['VALUE_LENGTH', 'its length (-1: null)'],
      ['KEY_AT', "the key's first byte in data"],
      ['KEY_LENGTH', 'its length (-1: null)'],
      ['FIRST_HEADER', 'its first row in the header table'],
      ['HEADER_COUNT', 'its number of headers'],
    ],
  },
  {
    name: 'HEADER_ROW',
    doc: 'Per header in the header tables of produce() and consume() (Int32Array).',
    fields: [
      ['NAME_AT', "the name's first byte in data"],
      ['NAME_LENGTH', "the name's length"],
      ['VALUE_AT', "the value's first byte in data"],
      ['VALUE_LENGTH', 'its length (-1: null)'],
    ],
  },
  {
    name: 'MESSAGE_ROW',
    doc: "Per message in a consume() batch's table (Float64Array).",
    fields: [
      ['TOPIC', "its topic's index in the batch's topics"],
      ['PARTITION', 'its partition'],
      ['OFFSET', 'its offset'],
      ['TIMESTAMP', 'its timestamp (ms)'],
      ['KEY_AT', "the key's first byte in data"],
      ['KEY_LENGTH', 'its length (-1: null)'],
      ['VALUE_AT', "the value's first byte in data"],
      ['VALUE_LENGTH', 'its length (-1: null)'],
      ['FIRST_HEADER', 'its first row in the header table'],
      ['HEADER_COUNT', 'its number of headers'],
      ['ERROR', "librdkafka's error code: not 0 for a consumer error, which is no message"],
    ],
  },
];

/**
 * The events the addon calls `onEvent(kind, ...args)` with, each kind distinct, on the JS thread.
 * args: [name, TypeScript type, what it is].
 */
const events = [
  { name: 'STATS', value: 1, doc: "librdkafka's statistics (statistics.interval.ms)", args: [['json', 'string', 'the statistics, JSON']] },
  {
    name: 'ERROR', value: 2, doc: 'a client error, as librdkafka reports it', args: [
      ['code', 'number', "librdkafka's error code"],
      ['reason', 'string', 'its detail'],
      ['fatal', 'boolean', 'whether the client can go on no more'],
    ],
  },
  {
    name: 'LOG', value: 3, doc: 'a log line', args: [
      ['level', 'number', 'syslog level'],
      ['facility', 'string', "librdkafka's facility"],
      ['message', 'string', 'the line'],
    ],
  },
  {
    name: 'DELIVERY_FAILED', value: 4, doc: 'a producer: the failed delivery of a message produced without a slot (its report has no id)', args: [
      ['code', 'number', "librdkafka's error code"],
      ['topic', 'string', "the message's topic"],
      ['partition', 'number', 'its partition'],
      ['key', 'Buffer | null', 'its key'],
      ['size', 'number', "its value's length"],
      ['timestamp', 'number', 'its timestamp (ms)'],
    ],
  },
  {
    name: 'REBALANCE', value: 5, doc: 'a consumer: partitions assigned or revoked (the JS side assigns), within a consume() call', args: [
      ['code', 'number', 'ERR__ASSIGN_PARTITIONS or ERR__REVOKE_PARTITIONS'],
      ['partitions', 'NativePartition[]', 'the partitions'],
    ],
  },
  {
    name: 'COMMITTED', value: 6, doc: "a consumer: an offset commit's result, within a consume() or synchronous commit() call", args: [
      ['code', 'number', "librdkafka's error code (0: committed)"],
      ['partitions', 'NativePartition[]', 'the offsets, each with its own error'],
    ],
  },
];

/** Other numbers: [group, doc, [[name, value, doc], ...]]. */
const enums = [
  ['PRODUCED', "produce()'s result per message", [
    ['TAKEN', 0, 'librdkafka took it on the partition given'],
    ['UNASSIGNED', 1, "librdkafka took it without the partition given (unknown to it): placed by librdkafka's partitioner"],
  ]],
  ['ASSIGN', "assignment()'s modes", [
    ['SET', 0, 'assign the list (eager)'],
    ['CLEAR', 1, 'unassign everything (eager)'],
    ['ADD', 2, 'incremental assign'],
    ['REMOVE', 3, 'incremental unassign'],
  ]],
  ['JOB', "the calls run on libuv's thread pool (native/src/jobs.c), each ending in its callback", [
    ['METADATA', 0, 'rd_kafka_metadata()'],
    ['FLUSH', 1, 'rd_kafka_flush()'],
    ['CLOSE', 2, 'the consumer closed, the handle destroyed'],
    ['COMMITTED', 3, 'rd_kafka_committed()'],
    ['TXN_INIT', 4, 'rd_kafka_init_transactions()'],
    ['TXN_BEGIN', 5, 'rd_kafka_begin_transaction()'],
    ['TXN_COMMIT', 6, 'rd_kafka_commit_transaction()'],
    ['TXN_ABORT', 7, 'rd_kafka_abort_transaction()'],
    ['TXN_OFFSETS', 8, 'rd_kafka_send_offsets_to_transaction()'],
    ['SEEK', 9, 'rd_kafka_seek_partitions()'],
  ]],
];

/** Objects the addon makes: [name, doc, [[property, TypeScript type, doc], ...]] ('?': may be absent). */
const objects = [
  ['NativePartition', 'A partition of a list (rebalance, commit result, committed offsets).', [
    ['topic', 'string', 'its topic'],
    ['partition', 'number', 'its partition'],
    ['offset', 'number', 'an offset (librdkafka\'s logical offsets are negative)'],
    ['metadata?', 'Buffer', 'the metadata committed with the offset, when there is some'],
    ['error?', 'number', "librdkafka's error code for this partition, when not 0"],
  ]],
  ['NativeBatch', "Messages consume() read: one new buffer per batch, of which keys and values are views.", [
    ['data', 'Buffer', 'keys, values, header names and values'],
    ['table', 'Float64Array', 'MESSAGE_ROW_SIZE numbers per message'],
    ['headers', 'Int32Array', 'HEADER_ROW_SIZE numbers per header'],
    ['topics', 'string[]', 'the topics the table indexes'],
  ]],
];

/**
 * The addon's functions: [name, TypeScript signature, doc]. C: napi_value kdp_<name>(env, info),
 * exported under <name>. `handle` is the addon's handle (an external) create() returns.
 */
const functions = [
  ['version', '(): string', 'the version of the librdkafka the addon runs on'],
  ['errstr', '(code: number): string', "librdkafka's description of an error code"],
  ['contract', '(): Record<string, number>', "the contract's numbers as the addon was compiled with them (a drift test reads them)"],
  ['create', "(kind: 'producer' | 'consumer', global: string[], topic: string[], wake: () => void, onEvent: (...event: NativeEvent) => void): object",
    "a handle from [name, value, ...] configurations; `wake` when librdkafka has something to read, `onEvent` for each event"],
  ['keepAlive', '(handle: object, keep: boolean): void', 'whether pending wake-ups keep the event loop alive'],
  ['outq', '(handle: object): number', 'messages in librdkafka, waiting for a report'],
  ['metadata', '(handle: object, timeoutMs: number, cb: (err: NativeError | null, metadata?: any) => void, topic?: string): void', "the cluster's metadata (JOB_METADATA)"],
  ['flush', '(handle: object, timeoutMs: number, cb: (err: NativeError | null) => void): void', 'waits until librdkafka has no message left (JOB_FLUSH)'],
  ['close', '(handle: object, timeoutMs: number, cb: (err: NativeError | null) => void): void', 'closes the handle (JOB_CLOSE): what librdkafka holds is dropped'],
  ['produce', '(handle: object, topic: string, start: number, end: number, partitions: Int32Array, ids: Int32Array, data: Uint8Array, layout: Int32Array, timestamps: Float64Array, headers: Int32Array, results: Int32Array): number',
    "hands messages start..end-1 to librdkafka (PRODUCE_ROW, HEADER_ROW, PRODUCED_*); returns where librdkafka's full queue stopped it"],
  ['poll', '(handle: object, ids: Int32Array, partitions: Int32Array, offsets: Float64Array, errors: Int32Array, timestamps: Float64Array): number',
    "a producer's delivery reports into the arrays (the number read); its other events to onEvent"],
  ['hurry', '(handle: object): void', "sendBatch() messages were just handed over: librdkafka flushes for a moment (native/src/hurry.c)"],
  ['consume', '(handle: object, max: number): NativeBatch | undefined', 'up to `max` messages librdkafka has now (MESSAGE_ROW, HEADER_ROW), serving its callbacks meanwhile'],
  ['subscribe', '(handle: object, topics: string[]): void', "the consumer's subscription"],
  ['assignment', '(handle: object, mode: number, topics?: string[], partitions?: Int32Array, offsets?: Float64Array): void', 'assigns or unassigns (ASSIGN_*)'],
  ['pause', '(handle: object, pause: boolean, topics: string[], partitions: Int32Array): void', 'pauses or resumes partitions'],
  ['commit', '(handle: object, topics: string[], partitions: Int32Array, offsets: Float64Array, metadata: Array<Uint8Array | undefined> | undefined, async: boolean): void',
    'commits offsets, each with its metadata (bytes, or none); a synchronous one serves its EVENT_COMMITTED within'],
  ['committed', '(handle: object, topics: string[], partitions: Int32Array, timeoutMs: number, cb: (err: NativeError | null, offsets?: NativePartition[]) => void): void',
    'the committed offsets, with their metadata (JOB_COMMITTED)'],
  ['transaction', '(handle: object, job: number, timeoutMs: number, cb: (err: NativeError | null) => void): void',
    "a producer's transactional call (JOB_TXN_INIT, _BEGIN, _COMMIT, _ABORT) on the thread pool"],
  ['sendOffsets', '(handle: object, consumer: object | null, groupId: string, topics: string[], partitions: Int32Array, offsets: Float64Array, metadata: Array<Uint8Array | undefined>, timeoutMs: number, cb: (err: NativeError | null) => void): void',
    "offsets (each with its metadata) into the open transaction (JOB_TXN_OFFSETS): the group's metadata of `consumer`, a native consumer handle (KIP-447: generation and member id), else of `groupId` alone"],
  ['seek', '(handle: object, topics: string[], partitions: Int32Array, offsets: Float64Array, timeoutMs: number, cb: (err: NativeError | null) => void): void',
    "a consumer's partitions read again from the offsets (JOB_SEEK)"],
  ['protocol', '(handle: object): string', "the rebalance protocol: 'NONE', 'EAGER' or 'COOPERATIVE'"],
  ['logs', '(handle: object): void', "a consumer's log events to onEvent, read without waiting"],
];

module.exports = { rows, events, enums, objects, functions };
