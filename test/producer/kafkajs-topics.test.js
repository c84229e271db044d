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
