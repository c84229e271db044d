'use strict';
// Producer worker of bench/e2e.js (a child process). Sends its share of the schedule: message
// j at startAt + j / rate, its key drawn from a seeded Zipf stream (the same for the static
// and the dynamic run), its value the text "producer n key sequence sendTime" where n counts
// this producer's messages and sequence counts its messages of that key. Records which n were
// acknowledged and hands that to the driver after a flush.
//
// In the dynamic run, with lagMonitor set, a LagMonitor of the consumer group is attached to
// the producer: partitions whose consumers fall behind get penalties, and hot keys move off them.
//
// Messages from the driver: { cmd: 'start', ... } then { cmd: 'go', startAt }, { cmd: 'exit' }.

const Kafka = require('node-rdkafka');
const { DynamicProducer, LagMonitor } = require('../../build');
const { KeyStream, parseWorkload } = require('../../build/tools/workload');

const QUEUE_FULL = Kafka.CODES.ERRORS.ERR__QUEUE_FULL;
const TICK_MS = 5;

let job;
let producer;
let monitor;
let monitorErrors = 0;

// The driver gone (it failed or was stopped), nothing is left to report to.
process.on('disconnect', () => process.exit(1));
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

process.on('message', (msg) => {
  if (msg.cmd === 'start') start(msg).catch(fail);
  else if (msg.cmd === 'go') run(msg.startAt).catch(fail);
  else if (msg.cmd === 'exit') exit().catch(fail);
});

function fail(err) {
  process.send({ type: 'error', message: String(err && err.stack || err) });
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100);
}

async function start(msg) {
  job = msg;
  const total = Math.round(msg.rate * msg.seconds);
  const stream = new KeyStream(parseWorkload(`zipf:${msg.zipf}`), msg.keys, msg.seed);
  job.total = total;
  job.keyOf = new Uint32Array(total);
  for (let j = 0; j < total; j++) job.keyOf[j] = stream.next();
  job.nextSeq = new Uint32Array(msg.keys);
  job.acked = new Uint8Array(total);
  job.sentAt = new Float64Array(total);
  job.ackMs = new Float64Array(total);
  job.failed = 0;
  job.lastError = null;
  job.errors = 0;
  job.maxHeld = 0;
  job.lastClientError = null;
  // Idempotent, as order restoration assumes (docs/ordering.md): a retried batch is neither
  // duplicated nor stored behind a later one. Both sides alike.
  const global = {
    'metadata.broker.list': msg.brokers, 'linger.ms': msg.lingerMs, 'log_level': 3, 'client.id': `e2e-${msg.side}-p${msg.index}`,
    'enable.idempotence': true,
  };
  if (msg.side === 'static') {
    producer = new Kafka.Producer({ ...global, dr_cb: true }, { partitioner: 'murmur2_random' });
    producer.on('delivery-report', (err, report) => {
      if (err) noteFailure(err);
      else acked(report.opaque);
    });
    await new Promise((resolve, reject) => producer.connect({ timeout: 30000 }, (err) => (err ? reject(err) : resolve())));
    producer.setPollInterval(10);
  } else {
    // 'unordered' (--resequencer-cost): the same producer without order headers.
    producer = new DynamicProducer(global, { partitioner: 'murmur2_random' },
      { orderHeaders: msg.side === 'unordered' ? 'none' : 'spread', ...msg.producerOptions });
    // Client errors (a metadata read that timed out, a broker gone for a while) are not lost
    // messages: a message that fails rejects its send(). Counted apart.
    producer.on('error', (err) => {
      job.errors++;
      job.lastClientError = String(err && err.message || err);
    });
    await producer.connect();
    if (msg.lagMonitor) {
      // The group's lag becomes this producer's partition penalties (docs/consumer.md, LagMonitor).
      monitor = new LagMonitor({ 'metadata.broker.list': msg.brokers, 'log_level': 3 }, { groupId: msg.group, topics: [msg.topic], intervalMs: msg.lagMonitorMs, holdHandoffsMs: msg.holdHandoffsMs, penaltyGain: msg.penaltyGain });
      monitor.on('error', () => { monitorErrors++; });
      await monitor.start();
      monitor.attach(producer);
    }
  }
  process.send({ type: 'ready' });
}

function acked(j) {
  job.acked[j] = 1;
  job.ackMs[j] = Date.now() - job.sentAt[j];
}

function noteFailure(err) {
  job.failed++;
  job.lastError = String(err && err.message || err);
}

/** Sends message j; false when librdkafka's queue is full (static only: DynamicProducer holds it). */
function sendOne(j) {
  const key = job.keyOf[j];
  const seq = job.nextSeq[key];
  const value = Buffer.from(`${job.index} ${j} ${key} ${seq} ${Date.now()}`);
  const name = `key-${key}`;
  job.sentAt[j] = Date.now();
  if (job.side === 'static') {
    try {
      producer.produce(job.topic, null, value, name, null, j);
    } catch (err) {
      if (err && err.code === QUEUE_FULL) return false;
      throw err;
    }
  } else {
    producer.send(job.topic, value, name).then(() => acked(j), noteFailure);
  }
  job.nextSeq[key] = seq + 1;
  return true;
}

async function run(startAt) {
  const perMs = job.rate / 1000;
  let j = 0;
  while (Date.now() < startAt) await sleep(Math.min(TICK_MS, startAt - Date.now()));
  let sampledAt = 0;
  while (j < job.total) {
    const due = Math.min(job.total, Math.floor((Date.now() - startAt) * perMs) + 1);
    while (j < due && sendOne(j)) j++;
    // Dynamic: the most messages held in the producer (librdkafka's queue full, or a relocated
    // key's handoff waiting for its predecessor's delivery report), sampled every second.
    if (job.side !== 'static' && Date.now() - sampledAt >= 1000) {
      sampledAt = Date.now();
      job.maxHeld = Math.max(job.maxHeld, producer.metrics().held);
    }
    await sleep(TICK_MS);
  }
  const sendEnd = Date.now();
  await flush();
  // flush() returns once librdkafka's queue is empty; the last delivery reports may still be
  // on their way to JavaScript.
  let acked = 0;
  for (const deadline = Date.now() + 10000; Date.now() < deadline; await sleep(20)) {
    acked = 0;
    for (let i = 0; i < job.total; i++) acked += job.acked[i];
    if (acked + job.failed >= job.total) break;
    if (job.side === 'static') producer.poll();
  }
  process.send({
    type: 'done', index: job.index, sent: job.total, acked, failed: job.failed, lastError: job.lastError, errors: job.errors, lastClientError: job.lastClientError,
    ackedMask: job.acked, ackMs: job.ackMs, sentAt: job.sentAt, sendEnd, flushEnd: Date.now(),
    metrics: job.side !== 'static' ? summarize(producer.metrics()) : undefined,
    lagMonitorErrors: monitor ? monitorErrors : undefined,
  });
}

function flush() {
  if (job.side !== 'static') return producer.flush(60000);
  return new Promise((resolve, reject) => producer.flush(60000, (err) => (err ? reject(err) : resolve())));
}

/** The few producer metrics worth printing beside the run (hot keys of the topic). */
function summarize(metrics) {
  const topic = metrics && metrics.topics ? metrics.topics[job.topic] : undefined;
  if (!topic) return undefined;
  return {
    hotKeys: Array.isArray(topic.hotKeys) ? topic.hotKeys.length : topic.hotKeys, imbalance: topic.imbalance,
    produced: topic.produced, spreadMessages: topic.spreadMessages, movedMessages: topic.movedMessages, maxHeld: job.maxHeld,
  };
}

async function exit() {
  if (monitor) await monitor.stop().catch(() => {});
  if (producer) {
    if (job.side !== 'static') await producer.disconnect(10000).catch(() => {});
    else await new Promise((resolve) => producer.disconnect(10000, () => resolve()));
  }
  process.exit(0);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
