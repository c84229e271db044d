'use strict';
// A new topic's partition count: asked for at the topic's first message (one request in flight
// per topic, however many messages come meanwhile), asked again while the answer has none (a
// topic being created) even when nothing more is produced, and read up front by
// connect(timeoutMs, { topics }). Hot-key spreading starts within a burst to a brand-new topic
// as soon as the count is known. Against librdkafka's mock cluster (4 partitions per topic).
const t = require('tap');
const { DynamicProducer, partitionForKey, InvalidOptionError, KafkaError } = require('../..');
const { recordHandOvers, sleep } = require('./lib/helpers');

const N = 4; // the mock cluster's partitions per auto-created topic

/**
 * Wraps client.getMetadata for `topic`: its first `empty` answers say the topic has no
 * partitions yet (as Kafka answers while it creates one); counts the requests and how many
 * were in flight at once.
 */
function gateMetadata(client, topic, empty) {
  const original = client.getMetadata;
  const seen = { calls: 0, inFlight: 0, maxInFlight: 0 };
  client.getMetadata = function getMetadata(query, cb) {
    if (query.topic !== topic) return original.call(this, query, cb);
    const call = ++seen.calls;
    seen.inFlight++;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    return original.call(this, query, (err, md) => {
      seen.inFlight--;
      if (!err && call <= empty) md = { ...md, topics: md.topics.map((x) => (x.name === topic ? { ...x, partitions: [] } : x)) };
      cb(err, md);
    });
  };
  return seen;
}

/** Waits (liveness bound only, nothing timed is asserted) until `p` knows `topic`'s count. */
async function countKnown(p, topic, boundMs = 20000) {
  const end = Date.now() + boundMs;
  while (Date.now() < end) {
    const m = p.metrics().topics[topic];
    if (m && m.partitions > 0) return m.partitions;
    await sleep(10);
  }
  return 0;
}

t.test('a burst to a brand-new topic: its hot key is spread within the burst once the count is known, and every send settles', async (t) => {
  const topic = 'new-topic-burst';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 0 }, {}, { metadataRefreshMs: 600000 });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  const log = recordHandOvers(p.client);
  const MESSAGES = 20000;
  const sends = [];
  // The burst, in slices of 250 with a turn of the event loop between them (as messages from a
  // socket or a consumer arrive): half of it one key, the rest all distinct keys.
  for (let i = 0; i < MESSAGES; i++) {
    sends.push(p.send(topic, String(i), i % 2 === 0 ? 'hot' : `cold-${i}`));
    if (i % 250 === 249) await sleep(1);
  }
  const settled = await Promise.allSettled(sends);
  const rejected = settled.filter((s) => s.status === 'rejected');
  t.equal(rejected.length, 0, `every one of ${MESSAGES} sends settled fulfilled${rejected.length ? ` (first: ${rejected[0].reason})` : ''}`);
  // The first message the producer placed itself: the count was known from there on.
  const firstDecided = log.findIndex((m) => m.partition !== -1);
  t.ok(firstDecided > 0 && firstDecided < MESSAGES * 0.75, `the count became known within the burst (first explicit partition at message ${firstDecided} of ${MESSAGES})`);
  // Where the hot key's messages went, from the delivery reports.
  const before = new Set();
  const after = new Map();
  settled.forEach((s, i) => {
    if (i % 2 !== 0) return;
    if (i < firstDecided) before.add(s.value.partition);
    else after.set(s.value.partition, (after.get(s.value.partition) ?? 0) + 1);
  });
  const home = partitionForKey('hot', N, p.partitioner.options.partitioner);
  t.same([...before], [home], `${JSON.stringify([...before])} before the count, librdkafka placed the hot key on its own partition ${home}`);
  const elsewhere = [...after].filter(([partition]) => partition !== home).reduce((sum, [, n]) => sum + n, 0);
  t.ok(after.size >= 2, `after it, the hot key's messages went to ${after.size} partitions: ${JSON.stringify([...after].sort())}`);
  t.ok(elsewhere > 1000, `${elsewhere} of the hot key's messages of this burst went to other partitions than ${home}`);
});

t.test('a new topic whose first answers have no count is asked again, one request at a time, with nothing more produced', async (t) => {
  const topic = 'new-topic-idle';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { metadataRefreshMs: 600000 });
  t.teardown(() => p.disconnect().catch(() => {}));
  const seen = gateMetadata(p.client, topic, 3);
  await p.connect();
  // A burst of 2,000 messages at once, then the producer goes idle.
  for (let i = 0; i < 2000; i++) p.produce(topic, String(i), `k${i % 10}`);
  t.equal(seen.calls, 1, 'the burst made one request, at its first message');
  await p.flush(10000);
  t.equal(await countKnown(p, topic), N, 'the count became known with nothing more produced (the periodic refresh is 10 minutes away)');
  t.ok(seen.calls >= 4, `asked ${seen.calls} times: the answers without a count, then the one with it`);
  t.equal(seen.maxInFlight, 1, 'never more than one request in flight for the topic');
  const log = recordHandOvers(p.client);
  const report = await p.send(topic, 'next', 'k1');
  t.equal(log[0].partition, partitionForKey('k1', N, p.partitioner.options.partitioner), "the next message is placed by the producer, on the key's partition");
  t.equal(report.partition, log[0].partition, 'and delivered there');
});

t.test('connect(timeoutMs, { topics }) reads their counts first: the first message is already decided', async (t) => {
  const created = 'new-topic-upfront-created';
  const plain = 'new-topic-upfront';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { metadataRefreshMs: 600000 });
  t.teardown(() => p.disconnect().catch(() => {}));
  const seen = gateMetadata(p.client, created, 2);
  await p.connect(20000, { topics: [plain, created, plain] });
  t.equal(p.metrics().topics[plain].partitions, N, `${plain}: count known when connect() resolves`);
  t.equal(p.metrics().topics[created].partitions, N, `${created}: known too, after ${seen.calls} asks (the first answers had none)`);
  const log = recordHandOvers(p.client);
  const base = p.partitioner.options.partitioner; // librdkafka's default: none was configured
  const reports = await Promise.all([p.send(plain, 'first', 'key-a'), p.send(created, 'first', 'key-b')]);
  t.same(log.map((m) => m.partition), [partitionForKey('key-a', N, base), partitionForKey('key-b', N, base)],
    `${JSON.stringify(log.map((m) => m.partition))}: each topic's first message handed over with the key's partition, not left to librdkafka (-1)`);
  t.same(reports.map((r) => r.partition), log.map((m) => m.partition), 'and delivered there');
});

t.test("connect()'s options: bad ones are typed errors; a count not known in time rejects with a KafkaError", async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { maxTopics: 2 });
  t.teardown(() => p.disconnect().catch(() => {}));
  for (const [options, path] of [
    [{ topics: 'a' }, 'options.topics'],
    [{ topics: ['a', ''] }, 'options.topics[1]'],
    [{ topics: ['a', 7] }, 'options.topics[1]'],
    [{ topics: ['a', 'b', 'c'] }, 'options.topics'],
    [{ topic: ['a'] }, 'options.topic'],
    [null, 'options'],
  ]) {
    const e = await p.connect(1000, options).then(() => null, (err) => err);
    t.ok(e instanceof InvalidOptionError && e.code === 'KDP_INVALID_OPTION' && e.path === path,
      `connect(1000, ${JSON.stringify(options)}): InvalidOptionError naming ${path} (got ${e ? `${e.name} ${e.path}: ${e.message}` : 'none'})`);
  }
  await p.connect();
  gateMetadata(p.client, 'never-created', Infinity);
  const e = await p.connect(300, { topics: ['never-created'] }).then(() => null, (err) => err);
  t.ok(e instanceof KafkaError && e.librdkafkaCode === -185 && /never-created/.test(e.message), `a topic that never has a count: KafkaError, timed out (got ${e && e.message})`);
  t.ok((await p.send('after-refused-connect', 'v', 'k')).offset >= 0, 'the producer stays usable');
});
