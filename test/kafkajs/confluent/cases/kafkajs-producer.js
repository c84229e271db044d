'use strict';
// wrapKafkaJsProducer(): Confluent's KafkaJS-compatible producer with the partition of each
// message chosen by a DynamicPartitioner, against librdkafka's mock cluster; the topic read
// back with Confluent's own KafkaConsumer (an independent check of where messages landed).
process.env.KDP_TEST_CLIENT = 'confluent';
const t = require('tap');
const { KafkaJS } = require('@confluentinc/kafka-javascript');
const { wrapKafkaJsProducer, partitionForKey, decodeOrderHeader } = require('../../../..');
const { prng } = require('../../../lib/random-keys');
const { brokersOf, consumeAll, headerOf } = require('../../../producer/lib/helpers');

const N = 4; // partitions of an auto-created topic in the mock cluster

function mockKafka() {
  return new KafkaJS.Kafka({ kafkaJS: { brokers: ['unused:9092'], logLevel: KafkaJS.logLevel.NOTHING }, 'test.mock.num.brokers': 1 });
}

t.test('cold keys where murmur2_random puts them, the dominant key spread and marked, read back from the cluster', async (t) => {
  const producer = mockKafka().producer();
  const p = wrapKafkaJsProducer(producer, { producerId: Buffer.from('0102030405060708', 'hex') });
  const errors = [];
  p.on('error', (e) => errors.push(e));
  const ever = new Set();
  p.on('hot', (h) => ever.add(String(h.key)));
  const topic = 'kjs-main';
  await p.connect();
  t.teardown(() => p.disconnect());
  // The mock cluster creates the topic on its first message.
  await p.send({ topic, messages: [{ key: 'warm-up', value: 'w', partition: 0 }] });
  await p.connect([topic]);
  t.equal(p.metrics().topics[topic].partitions, N, 'connect(topics) waited for the count');

  const rand = prng(0xc0f1);
  const keys = [];
  for (let i = 0; i < 6000; i++) keys.push(rand() < 0.3 ? 'DOMINANT' : `bg-${Math.floor(rand() * 500)}`);
  const given = [];
  for (let i = 0; i < keys.length; i += 200) {
    const messages = keys.slice(i, i + 200).map((key, j) => ({ key, value: String(i + j) }));
    given.push(...messages);
    if (i < 4000) await p.send({ topic, messages });
    else await p.sendBatch({ topicMessages: [{ topic, messages }] });
  }
  t.ok(given.every((m) => m.partition === undefined && m.headers === undefined), "the caller's message objects are left as they were");
  t.ok(ever.has('DOMINANT'), 'the dominant key (30%) turned hot');

  const brokers = await brokersOf(producer._getInternalClient());
  const { messages, total, partitions } = await consumeAll(brokers, topic, keys.length + 1);
  t.equal(partitions, N);
  t.equal(total, keys.length + 1, 'the log holds every message once (and the warm-up)');
  let wrong = 0;
  let markedCold = 0;
  const dominant = [];
  for (const m of messages) {
    const key = m.key.toString();
    if (key === 'warm-up') continue;
    const raw = headerOf(m);
    if (key === 'DOMINANT') {
      dominant.push({ i: Number(m.value.toString()), partition: m.partition, order: raw === undefined ? null : decodeOrderHeader(raw) });
      continue;
    }
    if (m.partition !== partitionForKey(key, N, 'murmur2_random')) wrong++;
    if (raw !== undefined) markedCold++;
  }
  t.equal(wrong, 0, 'every message of a key never hot on its murmur2_random partition (partitionForKey)');
  t.equal(markedCold, 0, 'and none of them marked');
  const used = new Set(dominant.map((d) => d.partition));
  t.ok(used.size > 1, `the dominant key used ${used.size} partitions`);
  dominant.sort((a, b) => a.i - b.i);
  const firstMarked = dominant.findIndex((d) => d.order);
  t.ok(firstMarked >= 0 && dominant.slice(firstMarked).every((d) => d.order), 'from turning hot on, every message of it carries an order header');
  t.equal(dominant[firstMarked].order.kind, 'anchor', 'the first one an anchor');
  t.equal(dominant[firstMarked].partition, partitionForKey('DOMINANT', N, 'murmur2_random'), "on the key's own partition");
  t.ok(dominant.slice(firstMarked + 1).every((d, j) => d.order.previous === dominant[firstMarked + j].order.sequence && d.order.partitions === N),
    'each later one names the previous one and the partition count');
  t.equal(dominant[firstMarked].order.producerId, '0102030405060708', 'the producer id given');

  const m = p.metrics().topics[topic];
  t.equal(m.partitions, N, 'metrics: the partition count read from the cluster');
  t.equal(m.produced, keys.length + 1, 'metrics: every message produced');
  t.equal(m.delivered, keys.length + 1, 'metrics: and delivered');
  t.equal(m.failed, 0);
  t.ok(m.hotKeys.some((h) => String(h.key) === 'DOMINANT') || ever.has('DOMINANT'), 'metrics: the hot key listed (or reported hot)');
  t.same(errors, [], "no 'error' events");
});

t.test('an explicit partition is kept; a forwarded kdp-order header is dropped from an unmarked message', async (t) => {
  const producer = mockKafka().producer();
  const p = wrapKafkaJsProducer(producer);
  const topic = 'kjs-explicit';
  await p.connect();
  t.teardown(() => p.disconnect());
  await p.send({ topic, messages: [{ key: 'warm-up', value: 'w', partition: 3 }] });
  await p.connect([topic]);
  const headers = { app: 'x', 'kdp-order': 'forged' };
  await p.send({ topic, messages: [{ key: 'a', value: '1', partition: 2, headers }, { key: 'b', value: '2', headers }] });
  t.same(headers, { app: 'x', 'kdp-order': 'forged' }, "the caller's headers object is left as it was");
  const brokers = await brokersOf(producer._getInternalClient());
  const { messages } = await consumeAll(brokers, topic, 3);
  const byKey = Object.fromEntries(messages.map((m) => [m.key.toString(), m]));
  t.equal(byKey['warm-up'].partition, 3, 'explicit partition 3 kept');
  t.equal(byKey.a.partition, 2, 'explicit partition 2 kept');
  t.equal(byKey.b.partition, partitionForKey('b', N, 'murmur2_random'), "key b on murmur2_random's partition");
  for (const k of ['a', 'b']) {
    t.equal(headerOf(byKey[k]), undefined, `${k}: the forwarded kdp-order header dropped`);
    t.equal(String(headerOf(byKey[k], 'app')), 'x', `${k}: the other headers kept`);
  }
});

t.test('bad arguments and states: typed errors', async (t) => {
  t.throws(() => wrapKafkaJsProducer({}), { code: 'KDP_INVALID_ARG_TYPE' }, 'not a producer');
  t.throws(() => wrapKafkaJsProducer(null), { code: 'KDP_INVALID_ARG_TYPE' });
  const producer = mockKafka().producer();
  t.throws(() => wrapKafkaJsProducer(producer, { nope: 1 }), { code: 'KDP_INVALID_OPTION', path: 'options.nope' }, 'an unknown option');
  t.throws(() => wrapKafkaJsProducer(producer, { admin: {} }), { code: 'KDP_INVALID_OPTION', path: 'options.admin' }, 'an admin without fetchTopicMetadata');
  t.throws(() => wrapKafkaJsProducer(producer, { metadataRefreshMs: 5 }), { code: 'KDP_INVALID_OPTION', path: 'options.metadataRefreshMs' });
  const p = wrapKafkaJsProducer(producer);
  await t.rejects(p.send({ topic: 't', messages: [] }), { code: 'KDP_STATE' }, 'send() before connect()');
  await p.connect();
  await t.rejects(p.send({ topic: '', messages: [] }), { code: 'KDP_INVALID_ARG_TYPE' }, 'an empty topic');
  await t.rejects(p.connect('t'), { code: 'KDP_INVALID_ARG_TYPE' }, 'topics not an array');

  await t.rejects(p.send({ topic: 't', messages: 'x' }), { code: 'KDP_INVALID_ARG_TYPE' }, 'messages not an array');
  await t.rejects(p.sendBatch({ topicMessages: 'x' }), { code: 'KDP_INVALID_ARG_TYPE' }, 'topicMessages not an array');
  await p.disconnect();
  await t.rejects(p.send({ topic: 't', messages: [] }), { code: 'KDP_STATE' }, 'send() after disconnect()');
  // An admin that never knows the topic: connect(topics) gives up at its deadline.
  const fake = { connect: async () => {}, disconnect: async () => {}, send: async () => [] };
  const q = wrapKafkaJsProducer(fake, { admin: { fetchTopicMetadata: async () => [] } });
  await t.rejects(q.connect(['never-known'], 250), { code: 'KDP_KAFKA_ERROR', librdkafkaCode: -185 }, 'a count not known in time: a KafkaError (ERR__TIMED_OUT)');
  await q.disconnect();
  await t.rejects(p.connect(), { code: 'KDP_STATE' }, 'connect() after disconnect()');
});
