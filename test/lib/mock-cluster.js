'use strict';
// librdkafka's in-process mock cluster through node-rdkafka (or the client test/lib/clients.js
// selects): no broker needed.
const { kafka } = require('./clients');

/** A connected node-rdkafka Producer on a fresh mock cluster (topics get 4 partitions). */
function mockProducer(globalConfig = {}, topicConfig = {}) {
  const producer = new (kafka().Producer)(
    { 'test.mock.num.brokers': 3, 'dr_msg_cb': true, 'log_level': 3, ...globalConfig },
    topicConfig,
  );
  return new Promise((resolve, reject) => {
    producer.once('ready', () => resolve(producer));
    producer.once('connection.failure', reject);
    producer.connect({ timeout: 10000 });
  });
}

/**
 * The partition count the cluster reports for `topic`, asking again while it reports none
 * (a topic being auto-created answers with no partitions at first).
 */
async function partitionCount(producer, topic, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const metadata = await new Promise((resolve, reject) => {
      producer.getMetadata({ topic, timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m)));
    });
    const entry = metadata.topics.find((x) => x.name === topic);
    if (entry && entry.partitions.length > 0) return entry.partitions.length;
    if (Date.now() > deadline) throw new Error(`no partitions for ${topic} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves when `producer` has `count` delivery reports, with them in order of arrival. */
function collectReports(producer, count, timeoutMs = 60000) {
  const reports = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      producer.removeListener('delivery-report', onReport);
      reject(new Error(`only ${reports.length} of ${count} delivery reports within ${timeoutMs} ms`));
    }, timeoutMs);
    function onReport(err, report) {
      reports.push(err ? { error: err, ...report } : report);
      if (reports.length === count) {
        clearTimeout(timer);
        producer.removeListener('delivery-report', onReport);
        resolve(reports);
      }
    }
    producer.on('delivery-report', onReport);
    producer.setPollInterval(5);
  });
}

/** The cluster's bootstrap list ("host:port,..."), as `client` (anything with node-rdkafka's getMetadata) sees it. */
async function bootstrapOf(client) {
  const md = await new Promise((resolve, reject) => client.getMetadata({ timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m))));
  return md.brokers.map((b) => `${b.host}:${b.port}`).join(',');
}

function disconnect(producer) {
  return new Promise((resolve) => producer.disconnect(5000, () => resolve()));
}

/**
 * Asserts (on tap test `t`) that `group`'s committed offsets of `topic`'s partitions 0..count-1
 * are the ends of their logs: everything consumed was handled and committed.
 */
async function committedAtEnds(t, brokers, group, topic, count = 4) {
  const check = new (kafka().KafkaConsumer)({ 'metadata.broker.list': brokers, 'group.id': group, log_level: 3 }, {});
  await new Promise((r, j) => check.connect({}, (e) => (e ? j(e) : r())));
  const partitions = Array.from({ length: count }, (_, partition) => ({ topic, partition }));
  const committed = await new Promise((r, j) => check.committed(partitions, 5000, (e, x) => (e ? j(e) : r(x))));
  const ends = await Promise.all(partitions.map(({ partition }) => new Promise((r, j) =>
    check.queryWatermarkOffsets(topic, partition, 5000, (e, w) => (e ? j(e) : r(w.highOffset))))));
  t.same(committed.map((x) => x.offset), ends, 'committed = log end on every partition');
  await new Promise((r) => check.disconnect(r));
}

/**
 * The offsets `group` has committed for `partitions` (numbers) of `topic`, read by a plain consumer outside the group
 * on the cluster at `brokers` ("host:port,..."); `logLevel` is its librdkafka log_level.
 */
async function committedOffsets(brokers, group, topic, partitions, logLevel = 3) {
  const check = new (kafka().KafkaConsumer)({ 'metadata.broker.list': brokers, 'group.id': group, log_level: logLevel }, {});
  await new Promise((r, j) => check.connect({}, (e) => (e ? j(e) : r())));
  try {
    const list = await new Promise((r, j) => check.committed(partitions.map((partition) => ({ topic, partition })), 5000, (e, x) => (e ? j(e) : r(x))));
    return list.map((x) => x.offset);
  } finally {
    await new Promise((r) => check.disconnect(r));
  }
}

/**
 * A DynamicProducer (with `options`) holding a fresh mock cluster of one broker, disconnected at
 * `t`'s end, with the cluster's bootstrap list: { p, brokers }.
 */
async function producerCluster(t, options = {}) {
  const { DynamicProducer } = require('../..');
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, { partitioner: 'murmur2_random' }, options);
  await p.connect();
  t.teardown(() => p.disconnect());
  return { p, brokers: await bootstrapOf(p.client) };
}

/** Creates `topic` through DynamicProducer `p` (a warm-up message without a key) and waits until `p` knows its partitions. */
async function createTopic(p, topic) {
  await p.send(topic, 'warm-up', null);
  for (let i = 0; i < 100 && !(p.metrics().topics[topic]?.partitions > 0); i++) {
    await p.refreshMetadata(topic).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

module.exports = { mockProducer, partitionCount, collectReports, bootstrapOf, disconnect, committedAtEnds, committedOffsets, producerCluster, createTopic };
