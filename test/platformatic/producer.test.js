'use strict';
// wrapPlatformaticProducer(): @platformatic/kafka's send() with the partition and order header of
// each message chosen here. On Node 20 against a stand-in producer (what is sent, metadata,
// failures); then under Node 22 with the real Producer against librdkafka's mock cluster (held by
// this process), the topic read back with node-rdkafka: partitions checked against KafkaJS's
// DefaultPartitioner (Java's rule), never our own output.
const path = require('node:path');
const t = require('tap');
const { Partitioners } = require('kafkajs');
const { wrapPlatformaticProducer, decodeOrderHeader, InvalidOptionError, InvalidArgTypeError, StateError, KafkaError } = require('../..');
const { prng } = require('../lib/random-keys');
const { platformaticSkip, runPlatformatic } = require('../lib/platformatic');
const { mockProducer, bootstrapOf, disconnect } = require('../lib/mock-cluster');
const { consumeAll, headerOf } = require('../producer/lib/helpers');

const kafkajs = Partitioners.DefaultPartitioner();
function kafkaPartition(key, n) {
  return kafkajs({ topic: 't', partitionMetadata: Array.from({ length: n }, (_, partitionId) => ({ partitionId, leader: 0 })), message: { key: Buffer.from(key) } });
}

/** A stand-in for @platformatic/kafka's Producer: counts per topic, every send() recorded. */
function fakeProducer(counts = { t: 12 }) {
  const fake = {
    sent: [],
    failWith: undefined,
    metadataFails: undefined,
    closed: false,
    async send(options) {
      fake.sent.push(options);
      if (fake.failWith) throw fake.failWith;
      return { offsets: [] };
    },
    async metadata({ topics }) {
      if (fake.metadataFails) throw fake.metadataFails;
      return { topics: new Map(topics.filter((x) => counts[x]).map((x) => [x, { partitionsCount: counts[x] }])) };
    },
    async close() {
      fake.closed = true;
    },
    getSendTopicPartitions({ messages, partitioner }) {
      for (const m of messages) partitioner(m, Buffer.from(JSON.stringify(m.key)));
    },
  };
  return fake;
}

const skewed = (count, seed, topic = 't') => {
  const rand = prng(seed);
  return Array.from({ length: count }, (_, i) => ({ topic, key: rand() < 0.25 ? 'HOT' : `k${Math.floor(rand() * 3000)}`, value: String(i) }));
};

t.test("cold keys on Kafka's partition, the hot key spread and marked, the caller's messages unchanged", async (t) => {
  const fake = fakeProducer();
  const p = wrapPlatformaticProducer(fake, { producerId: Buffer.from('0102030405060708', 'hex') });
  t.teardown(() => p.close());
  const hot = [];
  p.on('hot', (h) => hot.push(String(h.key)));
  const given = skewed(20000, 7);
  for (let i = 0; i < given.length; i += 500) await p.send({ messages: given.slice(i, i + 500), acks: -1 });
  t.ok(given.every((m) => m.partition === undefined && m.headers === undefined), "the caller's message objects are left as they were");
  t.ok(fake.sent.every((s) => s.acks === -1), "send()'s own options are passed on");
  const out = fake.sent.flatMap((s) => s.messages);
  t.equal(out.length, given.length);
  t.same(hot, ['HOT'], "'hot' for the hot key");
  const wrongCold = out.filter((m) => m.key !== 'HOT' && m.partition !== kafkaPartition(m.key, 12)).length;
  t.equal(wrongCold, 0, "every other key on Kafka's partition");
  t.equal(out.filter((m) => m.key !== 'HOT' && m.headers).length, 0, 'none of them marked');
  const hotOut = out.filter((m) => m.key === 'HOT');
  t.ok(new Set(hotOut.map((m) => m.partition)).size >= 3, 'the hot key spread');
  const first = hotOut.findIndex((m) => m.headers);
  const orders = hotOut.slice(first).map((m) => decodeOrderHeader(m.headers['kdp-order']));
  t.ok(orders.every(Boolean), 'from its anchor on, every message of the hot key carries an order header (a string)');
  t.equal(orders[0].kind, 'anchor');
  t.equal(hotOut[first].partition, kafkaPartition('HOT', 12), "the anchor on the key's own partition");
  t.ok(orders.slice(1).every((o, i) => o.previous === orders[i].sequence && o.partitions === 12 && o.producerId === '0102030405060708'), 'a chain: each names the one before');
  const counts = new Array(12).fill(0);
  for (const m of out) counts[m.partition]++;
  t.ok(Math.max(...counts) / (out.length / 12) < 1.1, `hottest partition / mean ${(Math.max(...counts) / (out.length / 12)).toFixed(3)}`);
  const m = p.metrics().topics.t;
  t.match(m, { partitions: 12, produced: 20000, delivered: 20000, failed: 0 }, 'metrics()');
});

t.test('headers: objects and Maps kept, the order header added (strings, or Buffers in a Map), a forwarded one dropped or replaced', async (t) => {
  for (const headerType of ['string', 'buffer']) {
    const fake = fakeProducer();
    const p = wrapPlatformaticProducer(fake, { headerType, warmupMessages: 0, minHotMessages: 4 });
    const asName = headerType === 'buffer' ? Buffer.from('kdp-order') : 'kdp-order';
    const forwardedMap = new Map([['a', '1'], [asName, 'forwarded']]);
    const messages = [];
    for (let i = 0; i < 4000; i++) {
      const key = i % 2 ? 'HOT' : `c${i}`;
      const headers = i % 3 === 0 ? { a: '1', 'kdp-order': 'forwarded' } : i % 3 === 1 ? forwardedMap : undefined;
      messages.push({ topic: 't', key, value: 'v', headers });
    }
    await p.send({ messages });
    const out = fake.sent[0].messages;
    const orderOf = (m) => {
      if (!m.headers) return undefined;
      if (m.headers instanceof Map) {
        for (const [k, v] of m.headers) if (String(k) === 'kdp-order') return v;
        return undefined;
      }
      return m.headers['kdp-order'];
    };
    const cold = out.filter((m) => m.key !== 'HOT');
    t.equal(cold.filter((m) => orderOf(m) !== undefined).length, 0, `${headerType}: a forwarded kdp-order is dropped from every unmarked message`);
    t.ok(cold.filter((m) => m.headers).every((m) => (m.headers instanceof Map ? m.headers.get('a') : m.headers.a) === '1'), `${headerType}: their other headers kept`);
    const marked = out.filter((m) => m.key === 'HOT' && decodeOrderHeader(orderOf(m)));
    t.ok(marked.length > 1000, `${headerType}: the hot key's messages marked (${marked.length})`);
    t.ok(marked.every((m) => [...(m.headers instanceof Map ? m.headers.keys() : Object.keys(m.headers))].filter((k) => String(k) === 'kdp-order').length === 1), `${headerType}: one order header each (a forwarded one replaced)`);
    if (headerType === 'buffer') t.ok(marked.every((m) => m.headers instanceof Map && Buffer.isBuffer(orderOf(m)) && [...m.headers.keys()].some(Buffer.isBuffer)), 'buffer: name and value as Buffers, in a Map');
    else t.ok(marked.every((m) => typeof orderOf(m) === 'string'), 'string: the value a string');
    t.equal(forwardedMap.size, 2, "the caller's Map is not changed");
    const explicit = await p.send({ messages: [{ topic: 't', key: 'HOT', value: 'v', partition: 5, headers: { 'kdp-order': 'x' } }] }).then(() => fake.sent[1].messages[0]);
    t.same([explicit.partition, explicit.headers], [5, {}], `${headerType}: an explicit partition kept, unmarked`);
    await p.close();
  }
});

t.test('keys of other types go through the producer\'s key serializer; null keys within the partitions', async (t) => {
  const fake = fakeProducer();
  const p = wrapPlatformaticProducer(fake);
  t.teardown(() => p.close());
  await p.send({ messages: [{ topic: 't', key: { id: 7 }, value: 'v' }, { topic: 't', value: 'v' }, { topic: 't', key: null, value: 'v' }] });
  const [json, none, nul] = fake.sent[0].messages;
  t.equal(json.partition, kafkaPartition(JSON.stringify({ id: 7 }), 12), 'a JSON key hashed as its serializer wrote it');
  t.ok([none, nul].every((m) => m.partition >= 0 && m.partition < 12), 'null keys placed');
});

t.test('a count that cannot be read: Kafka\'s hash, which the producer reduces; an error event; the count read later', async (t) => {
  const fake = fakeProducer({ t: 12 });
  fake.metadataFails = new Error('no metadata');
  const p = wrapPlatformaticProducer(fake);
  t.teardown(() => p.close());
  const errors = [];
  p.on('error', (e) => errors.push(e));
  await p.send({ messages: [{ topic: 't', key: 'abc', value: 'v' }, { topic: 't', key: 'HOT', value: 'v' }] });
  const [a, b] = fake.sent[0].messages;
  t.ok(a.partition >= 12 || b.partition >= 12, 'a hash, not a partition (the producer takes it % n)');
  t.same([a.partition % 12, b.partition % 12], [kafkaPartition('abc', 12), kafkaPartition('HOT', 12)], "reduced: Kafka's partitions");
  t.equal(errors.length, 1);
  t.ok(errors[0] instanceof KafkaError, 'a KafkaError');
  fake.metadataFails = undefined;
  await p.connect(['t'], 5000);
  await p.send({ messages: [{ topic: 't', key: 'abc', value: 'v' }] });
  t.equal(fake.sent[1].messages[0].partition, kafkaPartition('abc', 12), 'placed once the count is known');
  await t.rejects(p.connect(['missing'], 300), KafkaError, 'connect(topics): a count never known rejects');
});

t.test('a failed send rejects with its error, counted as failed; close() closes the producer, later sends reject', async (t) => {
  const fake = fakeProducer();
  const p = wrapPlatformaticProducer(fake);
  const boom = new Error('broker said no');
  fake.failWith = boom;
  await t.rejects(p.send({ messages: [{ topic: 't', key: 'a', value: 'v' }, { topic: 't', key: 'b', value: 'v' }] }), boom, 'the error given to the caller');
  t.match(p.metrics().topics.t, { produced: 2, delivered: 0, failed: 2 });
  fake.failWith = undefined;
  await p.send({ messages: [{ topic: 't', key: 'a', value: 'v' }] });
  t.match(p.metrics().topics.t, { produced: 3, delivered: 1, failed: 2 });
  await p.close();
  t.ok(fake.closed, "the producer's close()");
  await t.rejects(p.send({ messages: [] }), StateError);
  await t.rejects(p.connect(['t']), StateError);
});

t.test('bad input at the edge: typed errors', async (t) => {
  t.throws(() => wrapPlatformaticProducer({}), InvalidArgTypeError);
  t.throws(() => wrapPlatformaticProducer(null), InvalidArgTypeError);
  const fake = fakeProducer();
  for (const [options, path] of [
    [{ orderHeaders: 'all' }, 'options.orderHeaders'], [{ headerType: 'json' }, 'options.headerType'], [{ metadataRefreshMs: 5 }, 'options.metadataRefreshMs'],
    [{ partitioner: 'consistent' }, 'options.partitioner'], [{ admin: {} }, 'options.admin'], [{ producerId: Buffer.alloc(3) }, 'options.producerId'],
    [{ hotThreshold: 0.01, coolThreshold: 0.02 }, 'options.coolThreshold'],
  ]) {
    let error;
    try {
      wrapPlatformaticProducer(fake, options);
    } catch (e) {
      error = e;
    }
    t.ok(error instanceof InvalidOptionError && error.path === path, `${JSON.stringify(options)}: ${error?.message}`);
  }
  const p = wrapPlatformaticProducer(fake);
  t.teardown(() => p.close());
  await t.rejects(p.send(null), InvalidArgTypeError);
  await t.rejects(p.send({ messages: 'x' }), InvalidArgTypeError);
  await t.rejects(p.send({ messages: [{ key: 'a' }] }), InvalidArgTypeError, 'a message without a topic');
  await t.rejects(p.connect('t'), InvalidArgTypeError);
});

t.test('the real @platformatic/kafka Producer on the mock cluster (Node 22): read back with node-rdkafka', { skip: platformaticSkip() }, async (t) => {
  const holder = await mockProducer();
  t.teardown(() => disconnect(holder));
  const bootstrap = await bootstrapOf(holder);
  const COUNT = 6000;
  for (const mode of ['strings', 'buffers', 'hook']) {
    const topic = `pl-${mode}-${Date.now().toString(36)}`;
    const { result } = await runPlatformatic(path.join(__dirname, 'fixtures', 'produce.js'), { args: [bootstrap, topic, mode, String(COUNT)] });
    t.equal(result.sent, COUNT, `${mode}: every send resolved`);
    t.same(result.hot, ['HOT'], `${mode}: the hot key reported`);
    const warm = mode === 'hook' ? 0 : 1;
    const { messages, total, partitions } = await consumeAll(bootstrap, topic, COUNT + warm);
    t.equal(total, COUNT + warm, `${mode}: the log holds every message once`);
    let wrong = 0;
    let markedCold = 0;
    const hot = [];
    for (const m of messages) {
      const key = m.key.toString();
      if (key === 'warm-up') continue;
      const raw = headerOf(m);
      if (key === 'HOT') hot.push({ i: Number(m.value.toString()), partition: m.partition, order: raw === undefined ? null : decodeOrderHeader(raw) });
      else {
        if (m.partition !== kafkaPartition(key, partitions)) wrong++;
        if (raw !== undefined) markedCold++;
      }
    }
    t.equal(wrong, 0, `${mode}: every other key on Kafka's partition (of ${partitions})`);
    t.equal(markedCold, 0, `${mode}: none of them marked`);
    t.ok(new Set(hot.map((h) => h.partition)).size > 1, `${mode}: the hot key spread`);
    const n = messages.find((m) => Number(m.value.toString()) === 10);
    t.equal(n && headerOf(n, 'n')?.toString(), '10', `${mode}: the caller's headers arrive`);
    hot.sort((a, b) => a.i - b.i);
    const first = hot.findIndex((h) => h.order);
    if (mode === 'hook') {
      t.equal(first, -1, 'hook: no order headers (it cannot write them)');
      continue;
    }
    t.ok(first >= 0 && hot.slice(first).every((h) => h.order), `${mode}: from its anchor on, every hot message carries a readable order header`);
    t.equal(hot[first].order.kind, 'anchor');
    t.match(result.metrics, { partitions, produced: COUNT, delivered: COUNT, failed: 0 }, `${mode}: metrics() (the warm-up went by the producer itself)`);
  }
});
