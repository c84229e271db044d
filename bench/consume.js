'use strict';
// npm run bench:consume — DynamicConsumer against the consumers a Node.js user would otherwise
// pick, and librdkafka's own rdkafka_performance -C as the limit. One topic (on the mock cluster
// one per 50,000 messages) is filled once with --messages (500,000 on the mock cluster,
// 1,000,000 on a real one) messages of about 100 bytes, 25% of them on one hot key, the rest
// over a skewed tail of 20,000 keys, placed by Kafka's partitioner (so that every consumer
// should see each key in order); each row then reads it from the beginning in a new group, in a
// process of its own, with a no-op handler, timed from its partitions' assignment (where the
// client says when: rdkafka_performance from its first message) to the last. Rounds interleave
// the rows; the table gives medians of msg/s, each row's ratio to the plain node-rdkafka loop,
// messages lost and duplicated (both must be 0), out of key order (0 but with --spread) and, of
// those, the unexplained ones (a key's inversion with no message of the key flagged out of order
// before it: 0 for the rows that restore order), and the messages flagged.
//
// On the mock cluster this process holds the cluster (and the topic) for its children; with
// --brokers=LIST a topic of --partitions (12) is made on that cluster.
//
// With --handler-ms=N every row's handler awaits N ms per message (I/O), and DynamicConsumer
// runs --concurrency=C (default 64) calls at once in key order; --keys=K spreads the messages
// evenly over K keys instead (no hot key: one hot key's calls, one at a time, would bound every row).
// A row that reads nothing new for STALL_MS stops there and counts what it missed as lost.
//
// With --spread DynamicProducer fills the topic: its hot key is spread over the partitions, its
// messages marked with order headers. The rows that restore order (DynamicConsumer, the
// wrapped consumers) must still see every key in order; the plain rows count what they read out
// of key order (a spread key read without its order restored).
//
// @platformatic/kafka's rows — its consumer's stream, and that stream through
// wrapPlatformaticConsumer (order restored; its ratio to the plain stream is printed after the
// table) — run on Node 22, both installed on first use into bench/.peers/ (bench/node22.js;
// --no-peers skips them), with --brokers only: its consumer's connections to librdkafka's mock
// cluster are closed. KafkaJS's consumer through wrapKafkaJsConsumer has a row of its own, its
// ratio to the plain KafkaJS eachBatch row printed after the table too.
//
// --help lists the flags.

const { flags, median, confluentInstalled, start, spawnCounted, processesCpuNs, brokerPids, BROKER_PIDS_FLAG } = require('./common');

const args = flags(__filename, {
  messages: {
    type: 'number', integer: true, min: 1000, default: (v) => (v.brokers ? 1000000 : 500000), defaultText: '500000, 1000000 with --brokers',
    help: 'messages in the topic, read by every row',
  },
  rounds: { type: 'number', integer: true, min: 1, default: 3, help: 'rounds, the rows interleaved' },
  brokers: { type: 'string', arg: 'LIST', help: "a real cluster, a topic of --partitions made for the run (default: librdkafka's mock cluster)" },
  partitions: { type: 'number', integer: true, min: 1, default: 12, help: 'with --brokers: partitions of the topic' },
  only: { type: 'string', arg: 'ROW[,ROW]', help: 'only the rows whose names hold one of these' },
  'handler-ms': { type: 'number', arg: 'MS', min: 0, max: 10000, default: 0, help: "every row's handler awaits this long per message (I/O); 0: a no-op handler" },
  concurrency: {
    type: 'number', integer: true, min: 1, max: 65536, default: (v) => (v['handler-ms'] > 0 ? 64 : 1), defaultText: '64 with --handler-ms, else 1',
    help: "DynamicConsumer's calls at once, in key order",
  },
  keys: { type: 'number', integer: true, min: 0, default: 0, help: 'the messages spread evenly over this many keys in turn, no hot key (0: 25% on one key, the rest skewed over 20,000)' },
  spread: { type: 'boolean', help: "fill the topic with DynamicProducer (its hot key spread, order headers on its messages) instead of Kafka's partitioner" },
  'no-peers': { type: 'boolean', help: 'skip the @platformatic/kafka row (no install into bench/.peers/)' },
  'broker-pids': BROKER_PIDS_FLAG,
  json: { type: 'boolean', help: 'print the figures as JSON' },
  child: { type: 'string', arg: 'ROW', internal: true, help: 'run this row and print its figures as JSON' },
  bootstrap: { type: 'string', arg: 'LIST', internal: true, help: 'the cluster the parent process filled (the mock cluster it holds)' },
  topic: { type: 'string', arg: 'NAME[,NAME]', internal: true, help: 'the topics the parent process filled' },
}, { usage: 'npm run bench:consume --' });

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { peerNode, platformatic } = require('./node22');

const LIMIT_ROW = 'rdkafka_performance -C (the limit)';
const PLATFORMATIC_ROW = '@platformatic/kafka stream (Node 22)';
const PLATFORMATIC_WRAPPED_ROW = '@platformatic/kafka wrapped, order restored (Node 22)';
const KAFKAJS_ROW = 'KafkaJS eachBatch';
const KAFKAJS_WRAPPED_ROW = 'KafkaJS wrapped, order restored';
/** Each wrapper's row with the row of the consumer it wraps (their ratio is printed after the table), and the ratio's name in --json. */
const WRAPPED = [[PLATFORMATIC_WRAPPED_ROW, PLATFORMATIC_ROW, 'platformaticWrappedVsStream'], [KAFKAJS_WRAPPED_ROW, KAFKAJS_ROW, 'kafkajsWrappedVsEachBatch']];
/** The rows that run on Node 22 (on a real cluster only). */
const NODE22_ROWS = [PLATFORMATIC_ROW, PLATFORMATIC_WRAPPED_ROW];

const MESSAGES = args.messages;
const ROUNDS = args.rounds;
const PARTITIONS = args.partitions;
/**
 * librdkafka's mock cluster makes 4 partitions per topic and keeps at most 5 MB of each (about
 * 40,000 such messages): there the messages go round over one topic per PER_MOCK_TOPIC of them,
 * each topic with a hot key of its own. A real cluster gets one topic of --partitions.
 */
const PER_MOCK_TOPIC = 50000;
const TOPICS = args.topic !== undefined
  ? args.topic.split(',')
  : Array.from({ length: args.brokers ? 1 : Math.ceil(MESSAGES / PER_MOCK_TOPIC) }, (_, i) => `bench-consume-${process.pid}-${i}`);
const HANDLER_MS = args['handler-ms'];
const BROKER_PIDS = brokerPids(args['broker-pids']);
const CONCURRENCY = args.concurrency;
const KEYS = args.keys;
/** A row that reads nothing new this long (ms) stops, what it missed counted as lost. */
const STALL_MS = 15000;
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The workload's keys, as in bench:clients: every fourth message on one hot key, the rest skewed over 20,000 (--keys=K: K keys in turn). */
function keys(n) {
  if (KEYS > 0) return Array.from({ length: n }, (_, i) => `key-${i % KEYS}`);
  let seed = 7;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  return Array.from({ length: n }, (_, i) => (i % 4 === 0 ? 'hot-tenant' : `key-${Math.floor(20000 * random() ** 3)}`));
}

/**
 * Counts what a row read, at a few tens of ns per message (the rows are timed with it): values are
 * `<index>:<key id>:<sequence>|` and padding, index 0..messages-1 over the topic, each key's
 * sequences 1, 2, 3, ... Parsed from the bytes, no string made.
 */
class Check {
  constructor() {
    this.seen = new Uint8Array(MESSAGES);
    this.last = new Int32Array(MESSAGES); // key ids are below the message count
    this.distinct = 0;
    this.duplicated = 0;
    this.outOfOrder = 0;
    /** Messages handed out flagged out of order (info.outOfOrder), and the keys of such messages. */
    this.flagged = 0;
    this.reasons = {};
    this.flaggedKeys = new Uint8Array(MESSAGES);
    /** Out of key order, of a key with no message flagged before: unexplained (the consumers that restore order flag what they let go early). */
    this.unexplained = 0;
    this.count = 0;
    this.counted = 0;
    this.at = Date.now();
  }

  /** True once nothing new was read for STALL_MS (checked by the caller now and then, not per message). */
  stalled() {
    if (this.count !== this.counted) {
      this.counted = this.count;
      this.at = Date.now();
    }
    return Date.now() - this.at > STALL_MS;
  }

  /** Resolves once `done()` says so, or once nothing new was read for STALL_MS. */
  until(done) {
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        if (done() || this.stalled()) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
  }

  /** A message's value, and what a consumer that restores order said of it (`info`, none for the others). */
  add(value, info) {
    this.count++;
    let i = 0;
    let index = 0;
    let key = 0;
    let seq = 0;
    for (let b = value[i++]; b !== 58 && b !== undefined; b = value[i++]) index = index * 10 + b - 48; // up to ':'
    for (let b = value[i++]; b !== 58 && b !== undefined; b = value[i++]) key = key * 10 + b - 48;
    for (let b = value[i++]; b !== 124 && b !== undefined; b = value[i++]) seq = seq * 10 + b - 48; // up to '|'
    if (this.seen[index] === 1) {
      this.duplicated++;
      return;
    }
    this.seen[index] = 1;
    this.distinct++;
    if (info !== undefined && info.outOfOrder) {
      this.flagged++;
      this.reasons[info.reason] = (this.reasons[info.reason] ?? 0) + 1;
      this.flaggedKeys[key] = 1;
    }
    if (seq < this.last[key]) {
      this.outOfOrder++;
      if (this.flaggedKeys[key] === 0) this.unexplained++;
    }
    this.last[key] = seq;
  }
}

/** A row's time: from its partitions' assignment when the client says when that was, else from its first message. */
class Clock {
  constructor() {
    this.start = 0n;
    this.fromAssignment = false;
  }

  assigned() {
    if (this.start === 0n) {
      this.begin();
      this.fromAssignment = true;
    }
  }

  message() {
    if (this.start === 0n) this.begin();
  }

  begin() {
    this.start = process.hrtime.bigint();
    this.cpu = process.cpuUsage();
    this.broker = processesCpuNs(BROKER_PIDS);
  }

  seconds(end = process.hrtime.bigint()) {
    // CPU time of the process (all its threads) from the start (the assignment, or the first message) to now.
    if (this.cpu !== undefined) {
      const used = process.cpuUsage(this.cpu);
      this.cpuSeconds = (used.user + used.system) / 1e6;
      this.brokerSeconds = (processesCpuNs(BROKER_PIDS) - this.broker) / 1e9;
    }
    return Number(end - this.start) / 1e9;
  }
}

function brokers() {
  return String(args.bootstrap ?? args.brokers);
}

const ROWS = {
  /** DynamicConsumer, its defaults (native engine). */
  async 'DynamicConsumer, native engine'() {
    return dynamicRow('native');
  },
  /** DynamicConsumer on the client library's KafkaConsumer. */
  async 'DynamicConsumer, engine client'() {
    return dynamicRow('client');
  },
  /** A plain node-rdkafka KafkaConsumer consume(500) loop. */
  async 'node-rdkafka consume(500) loop'() {
    return plainRow({});
  },
  /** The same, with DynamicConsumer's fetch.queue.backoff.ms (10 ms; librdkafka's default is 1000). */
  async 'node-rdkafka loop, fetch.queue.backoff.ms 10'() {
    return plainRow({ 'fetch.queue.backoff.ms': 10 });
  },
  /** Confluent's node-rdkafka-style KafkaConsumer, the same consume(500) loop (when it is installed). */
  async "Confluent's consume(500) loop"() {
    return plainRow({}, require('@confluentinc/kafka-javascript'));
  },
  /** Confluent's KafkaJS-style consumer, eachBatch, partitionsConsumedConcurrently 12 (when it is installed). */
  async "Confluent's KafkaJS API, eachBatch"() {
    return confluentRow();
  },
  /** KafkaJS 2.2.4 eachBatch, partitionsConsumedConcurrently 12. */
  async [KAFKAJS_ROW]() {
    return kafkajsRow('batch');
  },
  /** KafkaJS 2.2.4 eachMessage, partitionsConsumedConcurrently 12. */
  async 'KafkaJS eachMessage'() {
    return kafkajsRow('message');
  },
};
ROWS[KAFKAJS_WRAPPED_ROW] = () => kafkajsRow('wrapped');

async function plainRow(extra, Kafka = require('node-rdkafka')) {
  const c = new Kafka.KafkaConsumer({ 'metadata.broker.list': brokers(), 'group.id': `plain-${process.pid}`, 'enable.auto.commit': false, log_level: 0, rebalance_cb: true, ...extra },
    { 'auto.offset.reset': 'earliest' });
  await new Promise((resolve, reject) => c.connect({}, (err) => (err ? reject(err) : resolve())));
  const clock = new Clock();
  c.on('rebalance', (err, assignment) => {
    if (err.code === Kafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS && assignment.length > 0) clock.assigned();
  });
  c.subscribe(TOPICS);
  c.setDefaultConsumeTimeout(100);
  const check = new Check();
  while (check.count < MESSAGES && !check.stalled()) {
    const batch = await new Promise((resolve, reject) => c.consume(500, (err, m) => (err ? reject(err) : resolve(m))));
    if (batch.length > 0) clock.message();
    for (const m of batch) {
      check.add(m.value);
      if (HANDLER_MS > 0) await delay(HANDLER_MS); // one message at a time, as such a loop is written
    }
  }
  const seconds = clock.seconds();
  await new Promise((resolve) => c.disconnect(resolve));
  return result(check, seconds, clock);
}

/** @platformatic/kafka 2.12 (pure JS): its consumer's message stream, from the earliest offset, in a group of its own. */
ROWS[PLATFORMATIC_ROW] = async function platformaticRow() {
  const { Consumer } = await platformatic();
  const consumer = new Consumer({ groupId: `platformatic-${process.pid}`, clientId: 'bench', bootstrapBrokers: brokers().split(',') });
  const clock = new Clock();
  // Emitted once its group's assignment is in (SyncGroup), with it.
  consumer.on('consumer:group:join', (event) => {
    if (event?.assignments?.length > 0) clock.assigned();
  });
  const stream = await consumer.consume({ topics: TOPICS, mode: 'earliest', autocommit: false });
  const check = new Check();
  let complete = false;
  stream.on('data', (m) => {
    clock.message();
    check.add(m.value);
    if (check.count >= MESSAGES) complete = true;
    if (HANDLER_MS > 0) {
      // One message at a time, as a 'data' listener that awaits is written.
      stream.pause();
      delay(HANDLER_MS).then(() => stream.resume());
    }
  });
  await check.until(() => complete);
  const seconds = clock.seconds();
  await consumer.close(true);
  return result(check, seconds, clock);
};

/**
 * The same stream through wrapPlatformaticConsumer: a spread key's order restored, the handler
 * called by its Dispatcher (--concurrency calls at once, in key order), offsets committed every
 * 250 ms below what was handled; timed as the plain stream's row, to the last handler call's end.
 */
ROWS[PLATFORMATIC_WRAPPED_ROW] = async function platformaticWrappedRow() {
  const { Consumer } = await platformatic();
  const { wrapPlatformaticConsumer } = require('..');
  const consumer = new Consumer({ groupId: `platformatic-wrapped-${process.pid}`, clientId: 'bench', bootstrapBrokers: brokers().split(',') });
  const clock = new Clock();
  consumer.on('consumer:group:join', (event) => {
    if (event?.assignments?.length > 0) clock.assigned();
  });
  const wrapped = wrapPlatformaticConsumer(consumer);
  const calls = handledUntilLast(clock);
  await wrapped.run({ topics: TOPICS, concurrency: CONCURRENCY, consume: { mode: 'earliest' }, handler: (m, info) => calls.handle(m.value, info) });
  await calls.ended();
  const seconds = calls.seconds();
  await wrapped.stop();
  await consumer.close(true);
  return result(calls.check, seconds, clock);
};

function result(check, seconds, clock) {
  return { seconds, cpuSeconds: clock?.cpuSeconds, brokerSeconds: clock?.brokerSeconds, fromAssignment: clock?.fromAssignment ?? false, read: check.count, lost: MESSAGES - check.distinct, duplicated: check.duplicated, outOfOrder: check.outOfOrder, unexplained: check.unexplained, flagged: check.flagged, reasons: check.reasons };
}

/**
 * The handler of the rows whose calls a Dispatcher makes (DynamicConsumer, the wrapped
 * consumers): each message checked, a no-op (or --handler-ms of waiting); `ended()` resolves
 * once every message's call has ended, `seconds()` is the time to the last one's end.
 */
function handledUntilLast(clock) {
  const check = new Check();
  let ended = 0;
  let last = 0n;
  const end = () => {
    if (++ended === MESSAGES) last = process.hrtime.bigint();
  };
  const handle = (value, info) => {
    clock.message();
    check.add(value, info);
    if (HANDLER_MS > 0) return delay(HANDLER_MS).then(end);
    end();
  };
  return { check, handle, ended: () => check.until(() => ended === MESSAGES), seconds: () => clock.seconds(last || undefined) };
}

async function dynamicRow(engine) {
  const { DynamicConsumer } = require('..');
  const c = new DynamicConsumer({ 'metadata.broker.list': brokers(), 'group.id': `dynamic-${engine}-${process.pid}`, 'auto.offset.reset': 'earliest', log_level: 0 }, {},
    { engine, concurrency: CONCURRENCY });
  await c.connect();
  const clock = new Clock();
  c.on('assigned', (list) => {
    if (list.length > 0) clock.assigned();
  });
  const calls = handledUntilLast(clock);
  void c.run(TOPICS, (m, info) => calls.handle(m.value, info));
  await calls.ended();
  const seconds = calls.seconds();
  await c.stop();
  return result(calls.check, seconds, clock);
}

/**
 * KafkaJS 2.2.4 from the beginning, in a group of its own: its own eachBatch or eachMessage (12
 * partitions at once), or (`wrapped`) that consumer through wrapKafkaJsConsumer — a spread key's
 * order restored, eachMessage called by its Dispatcher (--concurrency calls at once, in key
 * order), offsets committed below what was handled; timed as the plain rows, the wrapped one to
 * the last handler call's end.
 */
async function kafkajsRow(mode) {
  const { Kafka, logLevel } = require('kafkajs');
  const kafka = new Kafka({ brokers: brokers().split(','), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `kafkajs-${mode}-${process.pid}` });
  const clock = new Clock();
  consumer.on(consumer.events.GROUP_JOIN, () => clock.assigned());
  const check = new Check();
  let complete = false;
  const done = () => {
    complete = true;
  };
  const mark = () => clock.message();
  const work = HANDLER_MS > 0 ? () => delay(HANDLER_MS) : () => undefined;
  if (mode === 'wrapped') {
    const { wrapKafkaJsConsumer } = require('..');
    const admin = kafka.admin();
    const wrapped = wrapKafkaJsConsumer(consumer, { admin });
    await wrapped.connect();
    await wrapped.subscribe({ topics: TOPICS, fromBeginning: true });
    const calls = handledUntilLast(clock);
    await wrapped.run({ partitionsConsumedConcurrently: CONCURRENCY, eachMessage: ({ message }, info) => calls.handle(message.value, info) });
    await calls.ended();
    const seconds = calls.seconds();
    await wrapped.disconnect();
    await admin.disconnect();
    return result(calls.check, seconds, clock);
  }
  await consumer.connect();
  await consumer.subscribe({ topics: TOPICS, fromBeginning: true });
  await consumer.run(mode === 'batch'
    ? { partitionsConsumedConcurrently: 12, eachBatch: async ({ batch }) => { mark(); for (const m of batch.messages) { check.add(m.value); await work(); } if (check.count >= MESSAGES) done(); } }
    : { partitionsConsumedConcurrently: 12, eachMessage: async ({ message }) => { mark(); check.add(message.value); await work(); if (check.count >= MESSAGES) done(); } });
  await check.until(() => complete);
  const seconds = clock.seconds();
  await consumer.disconnect();
  return result(check, seconds, clock);
}

/** Confluent's KafkaJS-style consumer (its promoted API), eachBatch over 12 partitions at once, as the KafkaJS row. */
async function confluentRow() {
  const { KafkaJS } = require('@confluentinc/kafka-javascript');
  const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: brokers().split(','), logLevel: KafkaJS.logLevel.NOTHING } });
  const clock = new Clock();
  const consumer = kafka.consumer({
    kafkaJS: { groupId: `confluent-${process.pid}`, fromBeginning: true, autoCommit: false },
    rebalance_cb: (err, assignment) => {
      if (err.code === -175 && assignment.length > 0) clock.assigned(); // ERR__ASSIGN_PARTITIONS
    },
  });
  await consumer.connect();
  await consumer.subscribe({ topics: TOPICS });
  const check = new Check();
  let complete = false;
  const work = HANDLER_MS > 0 ? () => delay(HANDLER_MS) : () => undefined;
  await consumer.run({
    partitionsConsumedConcurrently: 12,
    eachBatch: async ({ batch }) => {
      clock.message();
      for (const m of batch.messages) {
        check.add(m.value);
        await work();
      }
      if (check.count >= MESSAGES) complete = true;
    },
  });
  await check.until(() => complete);
  const seconds = clock.seconds();
  await consumer.disconnect();
  return result(check, seconds, clock);
}

/** librdkafka's own consumer in a group of its own, from the beginning; its CPU (the whole process's, joining the group too) from the kernel's count. */
function limit(bootstrap) {
  const bin = path.join(path.dirname(require.resolve('node-rdkafka/package.json')), 'deps/librdkafka/examples/rdkafka_performance');
  if (!fs.existsSync(bin)) return undefined;
  const broker0 = processesCpuNs(BROKER_PIDS);
  const { run, cpuNs } = spawnCounted(bin, ['-C', '-G', `perf-${Date.now()}`, ...TOPICS.flatMap((t) => ['-t', t]), '-b', bootstrap, '-c', String(MESSAGES), '-X', 'auto.offset.reset=earliest', '-u'],
    { encoding: 'utf8', timeout: 120000 });
  // With -u its last table row: "| elapsed ms | msgs | bytes | ...", timed from its first message.
  const all = [...`${run.stdout}\n${run.stderr}`.matchAll(/^\|\s*(\d+) \|\s*(\d+) \|/gm)].pop();
  if (!all) return undefined;
  return { seconds: Math.max(1, Number(all[1])) / 1000, cpuSeconds: cpuNs / 1e9, brokerSeconds: (processesCpuNs(BROKER_PIDS) - broker0) / 1e9, read: Number(all[2]), lost: MESSAGES - Number(all[2]), duplicated: 0, outOfOrder: 0, unexplained: 0, flagged: 0 };
}

/** Fills the topic: values `<index>:<key id>:<sequence>|`, placed by Kafka's partitioner (murmur2), or by DynamicProducer (--spread). Returns the bootstrap list and a close. */
async function fill() {
  const Kafka = require('node-rdkafka');
  const config = args.brokers ? { 'metadata.broker.list': args.brokers } : { 'test.mock.num.brokers': 3 };
  // Idempotent: a retried request (a leader not known yet on a new topic) cannot reorder a key.
  const p = new Kafka.Producer({ ...config, 'linger.ms': 5, 'enable.idempotence': true, dr_cb: true, log_level: 0 }, { partitioner: 'murmur2_random' });
  await new Promise((resolve, reject) => p.connect({}, (err) => (err ? reject(err) : resolve())));
  if (args.brokers) {
    const admin = Kafka.AdminClient.create({ 'metadata.broker.list': args.brokers, log_level: 3 });
    await new Promise((resolve, reject) => admin.createTopic({ topic: TOPICS[0], num_partitions: PARTITIONS, replication_factor: 1 }, 30000, (err) => (err ? reject(err) : resolve())));
    admin.disconnect();
  }
  const md = await new Promise((resolve, reject) => p.getMetadata({ timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m))));
  const seq = new Map();
  const ids = new Map();
  let delivered = 0;
  p.on('delivery-report', () => delivered++);
  p.setPollInterval(5);
  // A key's sequence and id are its topic's (each mock topic has a hot key of its own).
  const value = (index, topic, key) => {
    const name = `${topic}/${key}`;
    const s = (seq.get(name) ?? 0) + 1;
    seq.set(name, s);
    if (!ids.has(name)) ids.set(name, ids.size);
    return Buffer.from(`${index}:${ids.get(name)}:${s}|`.padEnd(100, '.'));
  };
  const bootstrap = md.brokers.map((b) => `${b.host}:${b.port}`).join(',');
  if (args.spread) return fillSpread(bootstrap, value, p);
  for (const [index, key] of keys(MESSAGES).entries()) {
    const topic = topicOf(index);
    const message = value(index, topic, key);
    for (;;) {
      try {
        p.produce(topic, null, message, key);
        break;
      } catch (err) {
        if (err.code !== -184) throw err;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
  }
  while (delivered < MESSAGES) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!args.brokers) await checkKept(p);
  return { bootstrap, close: () => new Promise((resolve) => p.disconnect(resolve)) };
}

/**
 * The topic of the index-th message: PER_MOCK_TOPIC messages in a row to each (their hot key,
 * a quarter of them, on one partition of it stays under the mock cluster's 5 MB).
 */
const topicOf = (index) => TOPICS[Math.floor(index / PER_MOCK_TOPIC) % TOPICS.length];

/**
 * On the mock cluster, every partition still starts at offset 0: past 5 MB it drops a
 * partition's oldest messages, which the rows would wait STALL_MS for, then count as lost.
 */
async function checkKept(client) {
  for (const topic of TOPICS) {
    for (let partition = 0; partition < 4; partition++) {
      const { lowOffset } = await new Promise((resolve, reject) => client.queryWatermarkOffsets(topic, partition, 5000, (err, w) => (err ? reject(err) : resolve(w))));
      if (lowOffset > 0) throw new Error(`the mock cluster dropped ${lowOffset} messages of ${topic} [${partition}] (over 5 MB in a partition)`);
    }
  }
}

/** With --spread: the messages DynamicProducer spread (marked with order headers). */
let spreadMessages = 0;

/** --spread: the same messages through DynamicProducer's sendBatch(), 1,000 at a time per topic, four batches in flight. */
async function fillSpread(bootstrap, value, held) {
  const { DynamicProducer } = require('..');
  const p = new DynamicProducer({ 'metadata.broker.list': bootstrap, 'linger.ms': 5, 'enable.idempotence': true, log_level: 0 });
  await p.connect(30000, { topics: TOPICS });
  const batches = new Map(TOPICS.map((t) => [t, []]));
  const inFlight = new Set();
  const send = async (topic, batch) => {
    const sent = p.sendBatch(topic, batch).finally(() => inFlight.delete(sent));
    inFlight.add(sent);
    if (inFlight.size >= 4) await Promise.race(inFlight);
  };
  for (const [index, key] of keys(MESSAGES).entries()) {
    const topic = topicOf(index);
    const batch = batches.get(topic);
    batch.push({ value: value(index, topic, key), key });
    if (batch.length === 1000) {
      batches.set(topic, []);
      await send(topic, batch);
    }
  }
  for (const [topic, batch] of batches) if (batch.length > 0) await send(topic, batch);
  await Promise.all(inFlight);
  const spread = Object.values(p.metrics().topics).reduce((n, t) => n + t.spreadMessages, 0);
  spreadMessages = spread;
  await p.disconnect();
  if (!args.json) process.stderr.write(`filled by DynamicProducer: ${spread} of ${MESSAGES} messages spread (order headers)\n`);
  // `held` (Kafka's partitioner's producer, unused here) holds the mock cluster for the rows.
  if (!args.brokers) await checkKept(held);
  return { bootstrap, close: () => new Promise((resolve) => held.disconnect(resolve)) };
}

/** A row's reasons for flagging, as ` (capacity 12, timeout 3)`, or nothing. */
function reasonsOf(reasons) {
  const list = Object.entries(reasons).map(([reason, n]) => `${reason} ${n}`);
  return list.length > 0 ? ` (${list.join(', ')})` : '';
}

async function main() {
  const names = [LIMIT_ROW, ...Object.keys(ROWS)]
    .filter((n) => args.only === undefined || args.only.split(',').some((o) => n.includes(o)))
    // Its consumer does not work with librdkafka's mock cluster (its connections are closed): real clusters only.
    .filter((n) => !NODE22_ROWS.includes(n) || (!args['no-peers'] && args.brokers))
    .filter((n) => !n.startsWith('Confluent') || confluentInstalled());
  const node22 = names.some((n) => NODE22_ROWS.includes(n)) ? peerNode() : undefined;
  const held = await fill();
  const results = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names) {
      let r;
      if (name === LIMIT_ROW) r = limit(held.bootstrap);
      else {
        // spawnSync blocks this thread, not librdkafka's, which serve the mock cluster meanwhile.
        if (NODE22_ROWS.includes(name) && node22 === undefined) continue;
        const run = spawnSync(NODE22_ROWS.includes(name) ? node22 : process.execPath, [__filename, `--child=${name}`, `--bootstrap=${held.bootstrap}`, `--topic=${TOPICS.join(',')}`, ...process.argv.slice(2), `--messages=${MESSAGES}`],
          { encoding: 'utf8', timeout: 300000 });
        try {
          r = JSON.parse(run.stdout.trim().split('\n').pop());
        } catch {
          console.error(`${name}: failed\n${run.stderr.slice(-2000)}`);
        }
      }
      if (r) results[name].push(r);
      if (!args.json) process.stderr.write(`round ${round + 1}/${ROUNDS} ${name}: ${r ? Math.round(MESSAGES / r.seconds) : '-'} msg/s\n`);
    }
  }
  await held.close();
  const rate = (name) => median((results[name] ?? []).map((r) => MESSAGES / r.seconds));
  const base = rate('node-rdkafka consume(500) loop');
  const theLimit = rate(LIMIT_ROW);
  const cpuOf = (name, field = 'cpuSeconds') => median(results[name].filter((r) => Number.isFinite(r[field])).map((r) => (r[field] / MESSAGES) * 1e6));
  const rows = names.map((name) => ({
    name: results[name].every((r) => r.fromAssignment) ? name : `${name} *`,
    msgPerSec: Math.round(rate(name)),
    vsPlainLoop: rate(name) / base,
    vsLimit: rate(name) / theLimit,
    cpuUsPerMsg: cpuOf(name),
    brokerCpuUsPerMsg: cpuOf(name, 'brokerSeconds'),
    lost: Math.max(0, ...results[name].map((r) => r.lost)),
    duplicated: Math.max(0, ...results[name].map((r) => r.duplicated)),
    outOfOrder: Math.max(0, ...results[name].map((r) => r.outOfOrder)),
    unexplained: Math.max(0, ...results[name].map((r) => r.unexplained)),
    flagged: Math.max(0, ...results[name].map((r) => r.flagged)),
    // The reasons of the round that flagged most.
    reasons: results[name].reduce((most, r) => ((r.flagged ?? 0) > (most.flagged ?? -1) ? r : most), {}).reasons ?? {},
  }));
  if (args.json) {
    const ratios = {};
    for (const [wrapped, plain, label] of WRAPPED) {
      const ratio = rate(wrapped) / rate(plain);
      if (Number.isFinite(ratio)) ratios[label] = ratio;
    }
    const spread = args.spread ? { spreadMessages } : {};
    console.log(JSON.stringify({ messages: MESSAGES, rounds: ROUNDS, brokers: args.brokers ?? 'mock', ...spread, rows, ...ratios }, null, 2));
    return;
  }
  const f = (x) => (Number.isFinite(x) ? x.toFixed(2) : '—');
  const workload = KEYS > 0 ? `${KEYS} keys in turn` : '25% on one key';
  const handler = HANDLER_MS > 0 ? `a handler awaiting ${HANDLER_MS} ms (DynamicConsumer: concurrency ${CONCURRENCY}, in key order; KafkaJS: 12 partitions at once)` : 'a no-op handler';
  console.log(`\n${MESSAGES} messages of ~100 bytes, ${workload}, ${handler}, from partition assignment (rows marked * from their first message); ${args.brokers ? `brokers ${args.brokers}` : 'librdkafka mock cluster'}; medians of ${ROUNDS} rounds`);
  console.log('| consumer | msg/s | × the plain node-rdkafka loop | × the limit | process CPU µs/msg | brokers\' CPU µs/msg | lost | duplicated | out of key order | of them unexplained | flagged |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.name} | ${r.msgPerSec.toLocaleString('en-US')} | ${f(r.vsPlainLoop)} | ${f(r.vsLimit)} | ${f(r.cpuUsPerMsg)} | ${f(r.brokerCpuUsPerMsg)} | ${r.lost} | ${r.duplicated} | ${r.outOfOrder} | ${r.unexplained} | ${r.flagged}${reasonsOf(r.reasons)} |`);
  // Each wrapper's cost, against the consumer it wraps.
  for (const [wrapped, plain] of WRAPPED) {
    if (!names.includes(wrapped) || !names.includes(plain)) continue;
    // Per round, the two rows side by side (the machine's load moves between rounds), and CPU time per message.
    const paired = median(results[wrapped].map((r, i) => (results[plain][i] ? results[plain][i].seconds / r.seconds : NaN)).filter(Number.isFinite));
    console.log(`\n${wrapped}: ${f(rate(wrapped) / rate(plain))}× ${plain} (median of the rounds' ratios ${f(paired)}×); CPU per message from assignment ${f(cpuOf(wrapped))} µs against ${f(cpuOf(plain))} µs`);
  }
}

async function child(name) {
  const r = await ROWS[name]();
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exit(0);
}

start(args.child, child, main);
