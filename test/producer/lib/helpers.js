'use strict';
// Shared helpers of the DynamicProducer tests (test/producer/*.test.js): Zipf key streams,
// waiting for a topic's partition count, and reading a topic back from librdkafka's mock
// cluster with a plain node-rdkafka KafkaConsumer — an independent check of what the
// producer says it delivered. The client library is test/lib/clients.js's (node-rdkafka unless
// KDP_TEST_CLIENT says otherwise), required on first use.
//
// The mock cluster (test.mock.num.brokers) listens on real 127.0.0.1 ports inside the
// producer's process; getMetadata() lists them, and any Kafka client in the process (a
// node-rdkafka consumer, KafkaJS) can connect to them while the producer is alive.
//
// Run directly (tap does), this file has no tests.

const { kafka } = require('../../lib/clients');
const { prng, wireBytes } = require('../../lib/random-keys');
const { metadataOf, watermarks } = require('../../lib/topic-log');

/** A sampler of Zipf(s)-distributed indexes 0..n-1 (0 the most frequent), seeded. */
function zipf(n, s, seed) {
  const rand = prng(seed);
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += 1 / Math.pow(i + 1, s);
    cdf[i] = sum;
  }
  for (let i = 0; i < n; i++) cdf[i] /= sum;
  return function next() {
    const u = rand();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** node-rdkafka getMetadata as a promise. */

/** The mock cluster's bootstrap list ('host:port,...') as a connected node-rdkafka client sees it. */
async function brokersOf(client) {
  const metadata = await metadataOf(client);
  if (!metadata.brokers.length) throw new Error('the cluster lists no brokers');
  return metadata.brokers.map((b) => `${b.host}:${b.port}`).join(',');
}

/**
 * Waits until the DynamicProducer `p` knows `topic`'s partition count (asking again while a
 * topic being auto-created answers with none). Returns the count.
 */
async function knownPartitions(p, topic, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await p.refreshMetadata(topic);
    const t = p.metrics().topics[topic];
    if (t && t.partitions > 0) return t.partitions;
    if (Date.now() > deadline) throw new Error(`no partition count for ${topic} within ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The order header of a consumed message (node-rdkafka: headers = [{ name: Buffer }]), or undefined. */
function headerOf(message, name = 'kdp-order') {
  if (!Array.isArray(message.headers)) return undefined;
  const found = message.headers.filter((h) => Object.hasOwn(h, name));
  if (found.length > 1) throw new Error(`${found.length} ${name} headers on one message`);
  return found.length ? found[0][name] : undefined;
}

/**
 * Reads every message of `topic` from the cluster at `brokers` (all partitions from offset
 * 0, no consumer group rebalance): resolves with { messages, total, partitions } once
 * `expected` messages were read and the log holds no more (sum of high watermarks), or
 * rejects after `timeoutMs`.
 */
async function consumeAll(brokers, topic, expected, timeoutMs = 30000) {
  const consumer = new (kafka().KafkaConsumer)({
    'metadata.broker.list': brokers,
    'group.id': `kdp-test-${process.pid}-${Math.random().toString(36).slice(2)}`,
    'enable.auto.commit': false,
    'fetch.wait.max.ms': 20,
    'log_level': 3,
  }, { 'auto.offset.reset': 'earliest' });
  await new Promise((resolve, reject) => consumer.connect({ timeout: 10000 }, (err) => (err ? reject(err) : resolve())));
  try {
    const offsets = await watermarks(consumer, topic, 5000);
    const partitions = offsets.length;
    const total = offsets.reduce((sum, w) => sum + w.highOffset - w.lowOffset, 0);
    consumer.setDefaultConsumeTimeout(100);
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
    const messages = [];
    const deadline = Date.now() + timeoutMs;
    while (messages.length < Math.max(expected, total)) {
      if (Date.now() > deadline) throw new Error(`read ${messages.length} of ${Math.max(expected, total)} messages of ${topic} within ${timeoutMs} ms`);
      const batch = await new Promise((resolve, reject) => consumer.consume(5000, (err, m) => (err ? reject(err) : resolve(m))));
      for (const m of batch) messages.push(m);
    }
    return { messages, total, partitions };
  } finally {
    await new Promise((resolve) => consumer.disconnect(() => resolve()));
  }
}

/** Collects a DynamicProducer's 'hot' and 'cooled' events; `ever` is the set of keys (as wire hex) ever hot. */
function trackHot(p) {
  const events = [];
  const ever = new Set();
  p.on('hot', (h) => {
    events.push({ type: 'hot', key: h.key, reason: h.reason });
    ever.add(h.key === null ? 'null' : wireBytes(h.key).toString('hex'));
  });
  p.on('cooled', (h) => events.push({ type: 'cooled', key: h.key }));
  return { events, ever, wasHot: (key) => ever.has(key === null ? 'null' : wireBytes(key).toString('hex')) };
}

module.exports = { zipf, sleep, metadataOf, brokersOf, knownPartitions, headerOf, consumeAll, trackHot, wireBytes };

/**
 * Records what a DynamicProducer hands to librdkafka, in order: { topic, partition, key,
 * value, headers } of every produce call librdkafka accepted. The owned producer calls
 * node-rdkafka's binding (producer._client.produce, which returns an error code), or on the
 * native engine its client's produce() (same arguments, same codes); a wrapped one calls
 * Producer.produce (which throws). All are recorded at the binding, once.
 */
function recordHandOvers(client) {
  const binding = client._client ?? (client.constructor?.name === 'NativeClient' ? client : undefined);
  if (!binding || typeof binding.produce !== 'function') throw new Error('no node-rdkafka binding to record at');
  const original = binding.produce;
  const log = [];
  binding.produce = function produce(topic, partition, value, key, timestamp, opaque, headers) {
    const code = original.call(this, topic, partition, value, key, timestamp, opaque, headers);
    if (code === 0 || code === undefined) log.push({ topic, partition, value, key, headers });
    return code;
  };
  return log;
}

/** The kdp-order header value among headers as handed to node-rdkafka ([{ name: value }]). */
function handedHeader(headers, name = 'kdp-order') {
  if (!Array.isArray(headers)) return undefined;
  // `in`, not an own property: the native engine's order header is an OrderFields, whose text is read through its name.
  const found = headers.filter((h) => name in h);
  if (found.length > 1) throw new Error(`${found.length} ${name} headers on one message`);
  return found.length ? found[0][name] : undefined;
}

module.exports.recordHandOvers = recordHandOvers;
module.exports.handedHeader = handedHeader;
