'use strict';
// Consumer worker of bench/e2e.js (a child process): `count` consumers of one group, each
// with a bounded capacity — an awaited delay per message, owed time slept in steps of at
// least 2 ms so that a delay of a few ms stays accurate. Static: a plain KafkaConsumer
// (cooperative-sticky, auto commit of the offsets stored once a message is handled).
// Dynamic: DynamicConsumer. Every handled message is recorded (which message, when, what
// the handler was told) and the records go to the driver every second, so that a crash of
// this process loses none that were made before its last report.
//
// With handlerMs (bench:e2e --handler-ms, --concurrency), each call instead awaits a timer of
// handlerMs (I/O-like), up to `concurrency` calls at once per consumer, one at a time per key in
// consume order: DynamicConsumer with { concurrency, ordering: 'key' }, the static peer through
// a per-key queue of its own (bench/e2e/key-queue.js), storing offsets below the lowest message
// not handled.
//
// Messages from the driver: { cmd: 'start', ... }, { cmd: 'slow', consumer, factor } (that
// consumer's delay per message times factor from now on), { cmd: 'stop' }.

const Kafka = require('node-rdkafka');
const { DynamicConsumer } = require('../../build');
const { KeyQueue } = require('./key-queue');
const { OUT_OF_ORDER, HAS_ORDERED, NOT_ORDERED, MARKED, REASONS, REASON_SHIFT, kindCode } = require('./stats');

const MIN_SLEEP_MS = 2;
// Oversleeping is paid back by handling the next messages without sleeping, but only this much:
// a long stall of the event loop is not turned into a burst of free capacity.
const MAX_CREDIT_MS = 20;
const IDLE_MS = 5;
// With handlerMs: consuming waits while this many messages wait for a call (DynamicConsumer's maxPending), until half.
const MAX_PENDING = 5000;

const { COLUMNS } = require('./stats');

/** Growable columns, one row per handled message. */
class Records {
  constructor() {
    this.length = 0;
    this.alloc(1 << 14);
  }

  alloc(capacity) {
    const grow = (Type, old) => {
      const next = new Type(capacity);
      if (old) next.set(old.subarray(0, this.length));
      return next;
    };
    this.consumer = grow(Uint8Array, this.consumer);
    this.producer = grow(Uint8Array, this.producer);
    this.n = grow(Uint32Array, this.n);
    this.key = grow(Uint32Array, this.key);
    this.seq = grow(Uint32Array, this.seq);
    this.sent = grow(Float64Array, this.sent);
    this.at = grow(Float64Array, this.at);
    this.flags = grow(Uint8Array, this.flags);
    this.kind = grow(Uint8Array, this.kind);
    this.partition = grow(Uint16Array, this.partition);
    this.capacity = capacity;
  }

  push(consumer, value, at, flags, kind, partition) {
    if (this.length === this.capacity) this.alloc(this.capacity * 2);
    const [p, n, key, seq, sent] = value.toString().split(' ');
    const i = this.length++;
    this.consumer[i] = consumer;
    this.producer[i] = Number(p);
    this.n[i] = Number(n);
    this.key[i] = Number(key);
    this.seq[i] = Number(seq);
    this.sent[i] = Number(sent);
    this.at[i] = at;
    this.flags[i] = flags;
    this.kind[i] = kind;
    this.partition[i] = partition;
  }

  /** The rows recorded since the last take(), as columns; the table starts again empty. */
  take() {
    const out = { length: this.length };
    for (const name of COLUMNS) out[name] = this[name].slice(0, this.length);
    this.length = 0;
    return out;
  }
}


const records = new Records();
const consumers = [];
let job;
let stopping = false;
let reporter;

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The capacity bound of one consumer: `delayMs` per message, slept once at least 2 ms are owed;
 * pace.slow(factor) multiplies the delay from then on (the slow-consumer scenario).
 */
function pacer(delayMs) {
  let owed = 0;
  let delay = delayMs;
  const pace = async () => {
    owed += delay;
    if (owed < MIN_SLEEP_MS) return;
    const t0 = performance.now();
    await sleep(owed);
    owed = Math.max(-MAX_CREDIT_MS, owed - (performance.now() - t0));
  };
  pace.slow = (factor) => { delay = delayMs * factor; };
  return pace;
}

/** With handlerMs: each call awaits its own timer (calls at once do not share a capacity); slow(factor) lengthens it. */
function waiter(handlerMs) {
  let ms = handlerMs;
  const wait = () => sleep(ms);
  wait.slow = (factor) => { ms = handlerMs * factor; };
  return wait;
}

// A crash is reported to the driver (which prints it with the figures) before the process ends.
// The driver gone (it failed or was stopped), nothing is left to report to.
process.on('disconnect', () => process.exit(1));
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

process.on('message', (msg) => {
  if (msg.cmd === 'start') start(msg).catch(fail);
  else if (msg.cmd === 'slow') slow(msg);
  else if (msg.cmd === 'stop') stop().catch(fail);
});

function fail(err) {
  process.send({ type: 'error', message: String(err && err.stack || err) });
  clearInterval(reporter);
  setTimeout(() => process.exit(1), 100);
}

async function start(msg) {
  job = msg;
  const base = {
    'metadata.broker.list': msg.brokers,
    'group.id': msg.group,
    // Classic groups assign cooperatively; under KIP-848 the broker assigns (and refuses a client's strategy).
    ...(msg.groupProtocol === 'consumer' ? { 'group.protocol': 'consumer' } : { 'partition.assignment.strategy': 'cooperative-sticky' }),
    'log_level': 3,
    // Brokers answer a fetch once this much is there or fetch.wait.max.ms passed: with the
    // default of 1 byte, six consumers on a trickle of small messages send fetches by the thousand.
    'fetch.min.bytes': msg.fetchWaitMs > 0 ? 1 << 20 : 1,
    ...(msg.fetchWaitMs > 0 ? { 'fetch.wait.max.ms': msg.fetchWaitMs } : {}),
  };
  for (let c = 0; c < msg.count; c++) {
    const index = msg.first + c;
    const pace = msg.handlerMs ? waiter(msg.handlerMs) : pacer(msg.delayMs);
    const clientId = { 'client.id': `e2e-${msg.side}-c${index}` };
    const made = msg.side === 'static' ? await startStatic({ ...base, ...clientId }, index, pace) : await startDynamic({ ...base, ...clientId }, index, pace);
    consumers.push({ ...made, index, pace });
  }
  reporter = setInterval(() => {
    process.send({ type: 'assigned', first: msg.first, counts: consumers.map((c) => c.assigned()) });
    if (records.length > 0) process.send({ type: 'records', records: records.take() });
  }, 500);
  process.send({ type: 'started' });
}

/**
 * A plain KafkaConsumer: consume what is ready, handle it one message at a time, store its offset
 * for auto commit (with handlerMs: staticConcurrent).
 */
async function startStatic(config, index, pace) {
  const consumer = new Kafka.KafkaConsumer({
    ...config,
    'enable.auto.commit': true,
    'auto.commit.interval.ms': job.commitMs,
    'enable.auto.offset.store': false,
  }, { 'auto.offset.reset': 'earliest' });
  await new Promise((resolve, reject) => consumer.connect({ timeout: 30000 }, (err) => (err ? reject(err) : resolve())));
  consumer.setDefaultConsumeTimeout(0);
  consumer.subscribe([job.topic]);
  let running = true;
  if (job.handlerMs) return staticConcurrent(consumer, index, pace, () => running, () => { running = false; });
  const loop = (async () => {
    while (running) {
      const batch = await new Promise((resolve) => consumer.consume(100, (err, m) => resolve(err ? [] : m)));
      if (batch.length === 0) {
        await sleep(IDLE_MS);
        continue;
      }
      for (const m of batch) {
        if (!running) break;
        records.push(index, m.value, now(), 0, 0, m.partition);
        await pace();
        try {
          consumer.offsetsStore([{ topic: m.topic, partition: m.partition, offset: m.offset + 1 }]);
        } catch {
          // Its partition moved meanwhile (a KIP-848 reconciliation, between two calls): its next owner reads it from the committed offset.
        }
      }
    }
  })();
  return {
    assigned: () => assignedCount(consumer),
    stop: async () => {
      running = false;
      await loop;
      await new Promise((resolve) => consumer.disconnect(() => resolve()));
    },
  };
}

/**
 * The static peer with handlerMs: up to job.concurrency calls at once, one at a time per key, in
 * consume order (KeyQueue); each handled message's partition stores the offset below its lowest
 * message not handled (a partition revoked meanwhile refuses it: its next owner reads again).
 */
function staticConcurrent(consumer, index, pace, running, halt) {
  const queue = new KeyQueue(job.concurrency, async (m) => {
    records.push(index, m.value, now(), 0, 0, m.partition);
    await pace();
  }, (m, offset) => {
    if (offset === undefined) return;
    try {
      consumer.offsetsStore([{ topic: m.topic, partition: m.partition, offset }]);
    } catch {
      // Revoked: not this consumer's to store any more.
    }
  });
  const loop = (async () => {
    while (running()) {
      if (queue.size >= MAX_PENDING) {
        await queue.below(MAX_PENDING / 2);
        continue;
      }
      const batch = await new Promise((resolve) => consumer.consume(100, (err, m) => resolve(err ? [] : m)));
      if (batch.length === 0) {
        await sleep(IDLE_MS);
        continue;
      }
      for (const m of batch) queue.add(m);
    }
  })();
  return {
    assigned: () => assignedCount(consumer),
    stop: async () => {
      halt();
      await loop;
      // What was consumed is handled (the lag is 0 by then: little or nothing), its offsets stored, then auto-committed on disconnect.
      await Promise.race([queue.below(0), sleep(30000)]);
      await new Promise((resolve) => consumer.disconnect(() => resolve()));
    },
  };
}

async function startDynamic(config, index, pace) {
  const options = { commitIntervalMs: job.commitMs, ...(job.handlerMs ? { concurrency: job.concurrency, ordering: 'key' } : {}), ...job.consumerOptions };
  const consumer = new DynamicConsumer(config, { 'auto.offset.reset': 'earliest' }, options);
  consumer.on('error', (err) => process.send({ type: 'warn', message: `consumer ${index}: ${err && err.message || err}` }));
  await consumer.connect();
  const done = consumer.run([job.topic], async (message, info) => {
    let flags = info.outOfOrder ? OUT_OF_ORDER : 0;
    if (info.ordered !== undefined) flags |= HAS_ORDERED | (info.ordered === false ? NOT_ORDERED : 0);
    if (info.order) flags |= MARKED;
    if (info.reason) {
      const code = REASONS.indexOf(info.reason);
      flags |= ((code === -1 ? REASONS.length - 1 : code) + 1) << REASON_SHIFT;
    }
    records.push(index, message.value, now(), flags, kindCode(info.order), message.partition);
    await pace();
  });
  // run() rejects when a handler kept failing (this one does not throw): worth telling, not fatal here.
  const ended = done.catch((err) => process.send({ type: 'warn', message: `consumer ${index}: run: ${err && err.message || err}` }));
  return {
    assigned: () => assignedCount(consumer.client),
    stop: async () => {
      const { held, waiting, records: counts } = consumer.metrics();
      process.send({ type: 'metrics', consumer: index, metrics: { held, waiting, ...(counts ?? {}) } });
      await consumer.stop();
      await ended;
    },
  };
}

/** Partitions a client owns (0 while it is not connected: assignments() throws then). */
function assignedCount(client) {
  try {
    return client.assignments().length;
  } catch {
    return 0;
  }
}

function slow(msg) {
  const c = consumers.find((x) => x.index === msg.consumer);
  if (c) c.pace.slow(msg.factor);
  process.send({ type: 'slowed', consumer: msg.consumer, at: Date.now(), found: Boolean(c) });
}

async function stop() {
  if (stopping) return;
  stopping = true;
  clearInterval(reporter);
  await Promise.all(consumers.map((c) => c.stop().catch((err) => process.send({ type: 'warn', message: String(err) }))));
  process.send({ type: 'records', records: records.take() });
  process.send({ type: 'stopped' });
  setTimeout(() => process.exit(0), 200);
}
