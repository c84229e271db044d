'use strict';
// wrapKafkaJsProducer()'s table of topics (counts and counters) without a cluster: a fake
// KafkaJS-API producer and admin. Like DynamicProducer's, it keeps max(1024, 16 × maxTopics)
// topics and forgets the least recently used quarter at once beyond; a forgotten topic's next
// send reads its count again, and its keys still go to Kafka's partition.
const t = require('tap');
const { wrapKafkaJsProducer, partitionForKey } = require('../..');

const N = 6;

function fakes() {
  const reads = new Map();
  const sent = [];
  const producer = {
    connect: async () => {},
    disconnect: async () => {},
    send: async (record) => {
      sent.push(record);
      return [];
    },
  };
  const admin = {
    fetchTopicMetadata: async ({ topics }) => topics.map((name) => {
      reads.set(name, (reads.get(name) ?? 0) + 1);
      return { name, partitions: Array.from({ length: N }, (_, id) => ({ partitionId: id })) };
    }),
  };
  return { producer, admin, reads, sent };
}

t.test('a stream of new topics: at most max(1024, 16 × maxTopics) kept, the least recently used quarter forgotten', async (t) => {
  const maxTopics = 4;
  const bound = Math.max(1024, 16 * maxTopics);
  const { producer, admin, reads, sent } = fakes();
  const p = wrapKafkaJsProducer(producer, { admin, maxTopics });
  p.on('warning', () => {});
  await p.connect();
  const made = 3 * bound;
  let off = 0;
  let most = 0;
  for (let i = 0; i < made; i++) {
    const key = `k${i}`;
    await p.send({ topic: `tenant-${i}`, messages: [{ key, value: 'v' }] });
    if (sent[sent.length - 1].messages[0].partition !== partitionForKey(key, N)) off++;
    // Sent to all along: among the most recently used, never forgotten.
    if (i % 100 === 0) await p.send({ topic: 'steady', messages: [{ key, value: 'v' }] });
    most = Math.max(most, Object.keys(p.metrics().topics).length);
  }
  const topics = p.metrics().topics;
  t.equal(off, 0, "every message on its key's partition (murmur2_random)");
  t.equal(most, bound, `at most ${bound} topics kept`);
  t.ok(Object.keys(topics).length > bound - bound / 4, 'no more than a quarter forgotten at once');
  t.equal(topics.steady.produced, Math.ceil(made / 100), "'steady' kept with all its counts");
  t.equal(reads.get('steady'), 1, "'steady' read once");
  t.notOk('tenant-0' in topics, 'tenant-0, the least recently used, forgotten');
  t.equal(topics[`tenant-${made - 1}`].produced, 1, 'the last topic kept');
  t.equal(reads.get('tenant-0'), 1, 'tenant-0 read once while it was kept');
  await p.send({ topic: 'tenant-0', messages: [{ key: 'again', value: 'v' }] });
  t.equal(reads.get('tenant-0'), 2, "a forgotten topic's next send reads its count again");
  t.equal(sent[sent.length - 1].messages[0].partition, partitionForKey('again', N), "and its key goes to Kafka's partition");
  t.equal(p.metrics().topics['tenant-0'].produced, 1, 'counted anew');
  await p.disconnect();
});

/** A fake admin whose answers for `topic` have no partitions for its first `empty` reads (a topic being created). */
function creatingAdmin(topic, empty) {
  let reads = 0;
  return {
    get reads() {
      return reads;
    },
    fetchTopicMetadata: async ({ topics }) => topics.map((name) => {
      if (name === topic) reads++;
      const none = name === topic && reads <= empty;
      return { name, partitions: none ? [] : Array.from({ length: N }, (_, id) => ({ partitionId: id })) };
    }),
  };
}

t.test("a new topic's first sends wait for its count (a topic being created answers without one): every message placed here, the hot key spread, sends in call order", async (t) => {
  const { producer, sent } = fakes();
  const admin = creatingAdmin('kj-new', 5);
  const p = wrapKafkaJsProducer(producer, { admin, metadataRefreshMs: 600000 });
  t.teardown(() => p.disconnect());
  await p.connect();
  // 40 sends of 100 messages at once, half of them one key, before the count is known.
  const sends = [];
  for (let s = 0; s < 40; s++) {
    sends.push(p.send({ topic: 'kj-new', messages: Array.from({ length: 100 }, (_, j) => ({ key: j % 2 === 0 ? 'hot' : `cold-${s}-${j}`, value: String(s * 100 + j) })) }));
  }
  await Promise.all(sends);
  t.ok(admin.reads > 5, `asked ${admin.reads} times: the answers without a count, then the one with it`);
  const messages = sent.flatMap((r) => r.messages);
  t.equal(messages.length, 4000, 'every message sent');
  t.ok(messages.every((m) => typeof m.partition === 'number'), 'each with the partition chosen here (none left to librdkafka)');
  const values = messages.map((m) => Number(m.value));
  t.ok(values.every((v, i) => i === 0 || v > values[i - 1]), "the producer's send() called in the order of the wrapper's");
  const hot = new Set(messages.filter((m) => m.key === 'hot').map((m) => m.partition));
  t.ok(hot.size >= 2, `the hot key on ${hot.size} partitions`);
  const cold = messages.filter((m) => m.key !== 'hot');
  t.ok(cold.every((m) => m.partition === partitionForKey(m.key, N, 'murmur2_random')), "every cold key on murmur2_random's partition");
});

t.test('a topic whose count does not come: its sends wait at most UNPLACED_WAIT_MS, then go to librdkafka; later ones do not wait again', async (t) => {
  const { UNPLACED_WAIT_MS } = require('../../build/producer/place/unplaced');
  const { producer, sent } = fakes();
  const admin = creatingAdmin('kj-never', Infinity);
  const p = wrapKafkaJsProducer(producer, { admin, metadataRefreshMs: 600000 });
  t.teardown(() => p.disconnect());
  await p.connect();
  const started = Date.now();
  await Promise.all([1, 2, 3].map((i) => p.send({ topic: 'kj-never', messages: [{ key: `k${i}`, value: String(i) }] })));
  const waited = Date.now() - started;
  t.ok(waited >= UNPLACED_WAIT_MS - 20, `the first sends waited ${waited} ms (UNPLACED_WAIT_MS ${UNPLACED_WAIT_MS})`);
  t.ok(sent.flatMap((r) => r.messages).every((m) => m.partition === undefined), 'then went without a partition (librdkafka places them)');
  const again = Date.now();
  await p.send({ topic: 'kj-never', messages: [{ key: 'k4', value: '4' }] });
  t.ok(Date.now() - again < UNPLACED_WAIT_MS / 2, `a later send does not wait for the count again (${Date.now() - again} ms)`);
  t.equal(sent.length, 4, 'all four sends went');
});

t.test("connect(topics, timeoutMs)'s timeout: the package's one check (a number, finite, 0 or more)", async (t) => {
  const { producer, admin } = fakes();
  const p = wrapKafkaJsProducer(producer, { admin });
  t.teardown(() => p.disconnect());
  await t.rejects(p.connect([], '100'), { code: 'KDP_INVALID_ARG_TYPE', argument: 'timeoutMs' }, 'a string: InvalidArgTypeError');
  for (const bad of [-1, Number.NaN, Infinity]) {
    await t.rejects(p.connect([], bad), { code: 'KDP_OUT_OF_RANGE', argument: 'timeoutMs' }, `${bad}: OutOfRangeError`);
  }
  await t.resolves(p.connect(['kj-known'], 1000), 'a good one');
});

t.test('a send whose every message has its partition does not wait for an unknown count', async (t) => {
  const { UNPLACED_WAIT_MS } = require('../../build/producer/place/unplaced');
  const { producer, sent } = fakes();
  const p = wrapKafkaJsProducer(producer, { admin: creatingAdmin('kj-explicit', Infinity), metadataRefreshMs: 600000 });
  t.teardown(() => p.disconnect());
  await p.connect();
  const started = Date.now();
  await p.send({ topic: 'kj-explicit', messages: [{ key: 'a', value: '1', partition: 2 }, { key: 'b', value: '2', partition: 0 }] });
  t.ok(Date.now() - started < UNPLACED_WAIT_MS / 2, `sent after ${Date.now() - started} ms: no wait for the count`);
  t.same(sent[0].messages.map((m) => m.partition), [2, 0], 'with the partitions given');
});
