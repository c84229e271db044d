'use strict';
// A new topic's partition count: asked for at the topic's first message (one request in flight
// per topic, however many messages come meanwhile), asked again while the answer has none (a
// topic being created) even when nothing more is produced, and read up front by
// connect(timeoutMs, { topics }). A brand-new topic's first messages wait for the count (at most
// UNPLACED_WAIT_MS, and half of maxQueued), so that a burst to it is placed here and its hot keys
// spread from its first message, even one produced in a single synchronous loop. Against
// librdkafka's mock cluster (4 partitions per topic).
const t = require('tap');
const { DynamicProducer, partitionForKey, InvalidOptionError, KafkaError } = require('../..');
const { recordHandOvers, sleep } = require('./lib/helpers');
const { UNPLACED_WAIT_MS } = require('../../build/producer/place/unplaced');

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

/** Call-order checks of a hand-over log whose values are the messages' indexes. */
function inCallOrder(log, topic) {
  const ids = log.filter((m) => m.topic === topic).map((m) => Number(m.value.toString()));
  return ids.every((id, i) => i === 0 || id > ids[i - 1]);
}

/** Where `key`'s messages were delivered: partition → count, from send() reports (index i has key keyOf(i)). */
function partitionsOf(reports, keyOf, key) {
  const at = new Map();
  reports.forEach((r, i) => {
    if (keyOf(i) === key) at.set(r.partition, (at.get(r.partition) ?? 0) + 1);
  });
  return at;
}

/** Per (key, partition), offsets in send order: no key's messages reordered on a partition. */
function reorderedOnPartitions(reports, keyOf) {
  const last = new Map();
  let reordered = 0;
  reports.forEach((r, i) => {
    const kp = `${keyOf(i)}/${r.partition}`;
    if (last.has(kp) && last.get(kp) > r.offset) reordered++;
    last.set(kp, r.offset);
  });
  return reordered;
}

for (const sync of [false, true]) {
  const how = sync ? 'in one synchronous loop' : 'in slices with turns of the event loop between them';
  t.test(`a burst to a brand-new topic ${how}: it waits for the count, then every message is placed here and the hot key spread`, async (t) => {
    const topic = `new-topic-burst-${sync ? 'sync' : 'slices'}`;
    const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 0 }, {}, { metadataRefreshMs: 600000 });
    t.teardown(() => p.disconnect().catch(() => {}));
    await p.connect();
    const log = recordHandOvers(p.client);
    const MESSAGES = 20000;
    const keyOf = (i) => (i % 2 === 0 ? 'hot' : `cold-${i % 600}`);
    const sends = [];
    // Half of it one key, the rest 300 others. In slices: 250 at a time, as messages from a
    // socket or a consumer arrive; the first slices are still produced before the count is known.
    for (let i = 0; i < MESSAGES; i++) {
      sends.push(p.send(topic, String(i), keyOf(i)));
      if (!sync && i % 250 === 249) await sleep(1);
    }
    if (sync) {
      t.equal(p.metrics().topics[topic].partitions, 0, 'the count was not known during the loop');
      t.equal(p.metrics().held, MESSAGES, `all ${MESSAGES} messages held (taken, waiting for it) when the loop ends`);
      t.equal(log.length, 0, 'none handed to librdkafka yet');
    }
    const settled = await Promise.allSettled(sends);
    const rejected = settled.filter((s) => s.status === 'rejected');
    t.equal(rejected.length, 0, `every one of ${MESSAGES} sends settled fulfilled${rejected.length ? ` (first: ${rejected[0].reason})` : ''}`);
    const reports = settled.map((s) => s.value);
    t.equal(log.filter((m) => m.partition === -1).length, 0, 'none handed over unassigned: each was placed by the producer');
    t.ok(inCallOrder(log, topic), 'handed over in call order (a handoff may only hold a moved key back)');
    const base = p.partitioner.options.partitioner;
    const home = partitionForKey('hot', N, base);
    const hot = partitionsOf(reports, keyOf, 'hot');
    const elsewhere = [...hot].filter(([partition]) => partition !== home).reduce((sum, [, n]) => sum + n, 0);
    t.ok(hot.size >= 2, `the hot key's messages went to ${hot.size} partitions: ${JSON.stringify([...hot].sort())}`);
    t.ok(elsewhere > 1000, `${elsewhere} of them to other partitions than its own (${home})`);
    const misplaced = reports.filter((r, i) => i % 2 === 1 && r.partition !== partitionForKey(keyOf(i), N, base)).length;
    t.equal(misplaced, 0, "every cold key's message on its own partition (partitionForKey)");
    t.equal(reorderedOnPartitions(reports, keyOf), 0, 'per key and partition, offsets in send order');
    const stats = p.partitioner.stats().topics[topic];
    t.equal(stats.messages, MESSAGES, 'the partitioner decided every message of the burst');
    t.ok(stats.spreadMessages > 0, `${stats.spreadMessages} messages of spread keys`);
  });
}

t.test('a topic whose count does not come: its messages wait UNPLACED_WAIT_MS, then go unassigned in call order, and none is lost', async (t) => {
  const topic = 'new-topic-never-known';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { metadataRefreshMs: 600000 });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  const seen = gateMetadata(p.client, topic, Infinity); // our requests never see a count (librdkafka's own do)
  const log = recordHandOvers(p.client);
  const firstAt = Date.now();
  const sends = [];
  for (let i = 0; i < 1000; i++) sends.push(p.send(topic, String(i), `k${i % 40}`));
  t.equal(p.metrics().held, 1000, 'all held while the count is awaited');
  // flush() right away: it waits for them too, and they go once the wait ends.
  await p.flush(20000);
  const settled = await Promise.allSettled(sends);
  t.equal(settled.filter((s) => s.status === 'rejected').length, 0, 'every send() fulfilled');
  t.ok(log.length === 1000 && log.every((m) => m.partition === -1), `all ${log.length} handed over unassigned: librdkafka placed them`);
  t.ok(inCallOrder(log, topic), 'in call order');
  t.ok(Date.now() - firstAt >= UNPLACED_WAIT_MS - 20, `after the wait (${Date.now() - firstAt} ms, UNPLACED_WAIT_MS ${UNPLACED_WAIT_MS})`);
  t.ok(seen.calls > 13, `asked ${seen.calls} times meanwhile: while messages wait, past the dozen retries of an idle topic`);
  t.equal(seen.maxInFlight, 1, 'one request in flight at a time');
  const report = await p.send(topic, 'next', 'k1');
  t.equal(log[log.length - 1].partition, -1, 'its next message, count still unknown, does not wait again: unassigned');
  t.equal(report.partition, partitionForKey('k1', N, p.partitioner.options.partitioner), "librdkafka put it on the key's partition");
  t.equal(p.metrics().held, 0, 'nothing held');
});

t.test('with half of maxQueued held, a new topic\'s messages stop waiting: the held ones go first, unassigned, in call order', async (t) => {
  const topic = 'new-topic-bound';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { metadataRefreshMs: 600000, maxQueued: 1000 });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  const log = recordHandOvers(p.client);
  let peak = 0;
  for (let i = 0; i < 3000; i++) {
    p.produce(topic, String(i), `k${i % 40}`);
    peak = Math.max(peak, p.metrics().held);
  }
  t.equal(peak, 500, `at most half of maxQueued held for the count (peak ${peak})`);
  await p.flush(20000);
  t.equal(log.length, 3000, 'every message handed over');
  t.equal(log.filter((m) => m.partition === -1).length, 3000, 'all unassigned (the count was not known before they went)');
  t.ok(inCallOrder(log, topic), 'in call order: the held ones before the rest');
});

t.test("a waiting message librdkafka refuses when it goes: its send() rejects, a produce()'s comes as a 'delivery' error; the rest go", async (t) => {
  const topic = 'new-topic-refused';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0, 'message.max.bytes': 10000 }, {}, { metadataRefreshMs: 600000 });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  const big = Buffer.alloc(20000, 'x');
  const errors = [];
  p.on('delivery', (err) => { if (err) errors.push(err); });
  const before = p.send(topic, 'before', 'k');
  t.equal(p.produce(topic, big, 'k'), true, 'produce() of a message too large, before the count: taken (true), not thrown');
  const refused = p.send(topic, big, 'k').then(() => null, (err) => err);
  const after = p.send(topic, 'after', 'k');
  const e = await refused;
  t.ok(e instanceof KafkaError && e.librdkafkaCode === 10, `send(): rejects with KafkaError, MSG_SIZE_TOO_LARGE (10, rdkafka.h) (got ${e && `${e.name} ${e.librdkafkaCode}`})`);
  await p.flush(10000);
  t.ok(errors.length === 1 && errors[0] instanceof KafkaError && errors[0].librdkafkaCode === 10, `produce(): one 'delivery' event with that error (got ${errors.length})`);
  const [r1, r2] = await Promise.all([before, after]);
  t.ok(r1.offset >= 0 && r2.offset === r1.offset + 1, `the messages around them delivered, in order (offsets ${r1.offset}, ${r2.offset})`);
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
