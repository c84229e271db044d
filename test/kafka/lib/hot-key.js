'use strict';
// A hot key over Zipf background traffic through a DynamicProducer against the real cluster,
// and a DynamicConsumer's view of it: shared by the consumer-side broker tests
// (consumer-order, lag-steering, rebalance). Run directly (tap does when named), this file
// has no tests. The client library is the one lib/kafka.js selects (KDP_TEST_CLIENT).
//
// Messages: value = lib/kafka.js value(id, keyId, seq) (16 bytes: seq is the message's
// number within its own key, from 0); key = keys[keyId]. keys[0 .. keys-1] are `k<i>-<salt>`
// drawn from build/tools/workload.js KeyStream (Zipf 1.0), keys[keys] is the hot key `hot-<salt>`,
// drawn with probability hotShare(id) instead.

const { once } = require('node:events');
const { DynamicProducer, DynamicConsumer } = require('../../..');
const { KeyStream, parseWorkload, prng } = require('../../../build/tools/workload');
const K = require('./kafka');

const Kafka = require('../../lib/clients').kafka();

/**
 * Produces `count` messages to `topic`. Options: keys (background keys, 10,000), hotShare
 * (a number or (id) => number, 0.4), ratePerSec (0: as fast as back-pressure allows), seed,
 * salt (of the key names: random unless given; given, every run names and places the keys alike),
 * idBase (added to the values' ids: producers of one topic apart), producerOptions, globalConfig, onConnect(producer, { keys, hotId }), onProgress(sent) every 1,000 messages
 * (may return a promise), stop(sent) (true: no more messages after these), onDelivery(parsedValue, report).
 * Resolves with { keys, hotId, keyOf, perKey, partitionOf, hot, sent, deliveries, errors, ms }
 * (sent: how many of the `count` were produced, fewer when stop() said so).
 */
async function produceHot(topic, count, o = {}) {
  const keyCount = o.keys ?? 10000;
  const salt = o.salt ?? Math.random().toString(36).slice(2, 6);
  const keys = Array.from({ length: keyCount }, (_, i) => `k${i}-${salt}`);
  const hotId = keyCount;
  keys.push(`hot-${salt}`);
  const stream = new KeyStream(parseWorkload(o.workload ?? 'zipf:1.0'), keyCount, o.seed ?? 0x407);
  const rand = prng((o.seed ?? 0x407) ^ 0x5a5a5a);
  const share = typeof o.hotShare === 'function' ? o.hotShare : () => o.hotShare ?? 0.4;
  const keyOf = new Int32Array(count);
  const perKey = new Uint32Array(keys.length);
  const partitionOf = new Int16Array(count).fill(-1);
  const p = new DynamicProducer({
    'bootstrap.servers': K.brokers(),
    'enable.idempotence': true,
    'linger.ms': 5,
    'queue.buffering.max.messages': 200000,
    'compression.codec': 'lz4',
    // Delivery reports with the value: the message id says which message went where.
    'dr_msg_cb': true,
    'log_level': 3,
    ...(o.globalConfig ?? {}),
  }, { acks: 'all', partitioner: 'murmur2_random' }, { metadataRefreshMs: 5000, ...K.clientOptions(), ...(o.producerOptions ?? {}) });
  const hot = K.trackHot(p);
  const errors = [];
  let deliveries = 0;
  p.on('delivery', (err, report) => {
    if (err) {
      if (errors.length < 20) errors.push(err);
      return;
    }
    const v = K.parseValue(report.value);
    const id = v === null ? -1 : v.id - (o.idBase ?? 0);
    if (id < 0 || id >= count) return;
    deliveries++;
    partitionOf[id] = report.partition;
    if (o.onDelivery) o.onDelivery(v, report);
  });
  const producerErrors = [];
  p.on('error', (err) => producerErrors.push(err));
  await p.connect();
  // The partition count known before the first message: every message placed by the producer.
  await p.refreshMetadata(topic);
  if (o.onConnect) o.onConnect(p, { keys, hotId });
  const started = Date.now();
  const nextKey = (id) => (rand() < share(id) ? hotId : stream.next());
  const sent = await K.produceMessages(p, topic, count, { keys, nextKey, keyOf, perKey, started }, o);
  const producedMs = Date.now() - started;
  await p.flush(120000);
  const ms = Date.now() - started;
  await p.disconnect();
  return { keys, hotId, keyOf, perKey, partitionOf, hot, sent, deliveries, errors, producerErrors, producedMs, ms, started };
}

/** A DynamicConsumer of the test cluster in `group` (options: DynamicConsumer options). */
function consumer(group, options = {}, config = {}) {
  return new DynamicConsumer({
    'bootstrap.servers': K.brokers(),
    'group.id': group,
    'auto.offset.reset': 'earliest',
    'fetch.wait.max.ms': 50,
    'log_level': 3,
    ...config,
  }, {}, { commitIntervalMs: 200, ...K.clientOptions(), ...options });
}

/** Resolves with the first 'assigned' event of `c` (its partitions). */
function assignedOnce(c) {
  return once(c, 'assigned').then(([assignment]) => assignment);
}

/**
 * Connects DynamicConsumer `c` and starts c.run([topic], handler); resolves, once `c` has its
 * first assignment, with { done: the run's promise, assignment }.
 */
async function runAssigned(c, topic, handler) {
  await c.connect();
  const assigned = assignedOnce(c);
  const done = c.run([topic], handler);
  return { done, assignment: await assigned };
}

/** Committed offsets of `group` and the log end, per partition of `topic`: { committed, ends }. */
async function offsetsOf(group, topic, partitions) {
  const check = await K.connected(new Kafka.KafkaConsumer({ 'bootstrap.servers': K.brokers(), 'group.id': group, 'log_level': 3 }, {}));
  try {
    const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    const committed = await new Promise((resolve, reject) => check.committed(tps, 10000, (e, x) => (e ? reject(e) : resolve(x))));
    const ends = [];
    for (const { partition } of tps) {
      ends.push(await new Promise((resolve, reject) => check.queryWatermarkOffsets(topic, partition, 10000, (e, w) => (e ? reject(e) : resolve(w.highOffset)))));
    }
    const byPartition = new Array(partitions).fill(-1);
    for (const c of committed) byPartition[c.partition] = typeof c.offset === 'number' ? c.offset : -1;
    return { committed: byPartition, ends };
  } finally {
    await K.disconnected(check);
  }
}

/** Waits until `ready()` is true (polled every 50 ms) or `timeoutMs`; resolves with whether it was. */
async function until(ready, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) return false;
    await K.sleep(50);
  }
  return true;
}

/** `promise`'s value, or null after `ms` (the timer does not keep the process alive). */
function within(promise, ms) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

module.exports = { produceHot, consumer, runAssigned, offsetsOf, until, within };
