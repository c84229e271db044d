'use strict';
// A group catching up on a backlog of a spread key (docs/ordering.md, "Format and size"): one
// DynamicProducer sends 30,000 messages in a burst, a tenth on one key it spreads; then two
// DynamicConsumers on the native engine (groupOrder 'wait', concurrency 32, a 1-3 ms handler)
// read it all from the start. Their handled records stay within the broker's limit whatever
// they hold, so no message waits for a record that comes only as the other member catches up:
// nothing flagged (no 'timeout'), the key's messages in send order across the members, every
// message handled once. The rate against one member alone is `npm run bench:backlog`'s (a
// benchmark, not a timed test). Counted from the messages' values (the key's sequence number,
// written by the producer) and from metrics().records.
const t = require('tap');
const { nativeBuilt } = require('../lib/native-built');
const { bootstrapOf } = require('../lib/mock-cluster');
const { DynamicProducer, DynamicConsumer } = require('../..');
const { RECORD_MAX_CHARS } = require('../../build/delivery/handled-record');

t.setTimeout(180_000);

const skip = !nativeBuilt() ? 'the native engine is not built here'
  : process.env.KDP_ENGINE === 'client' ? 'KDP_ENGINE=client: no handled records on the client engine' : false;
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a group of two catches up on a backlog of a spread key: nothing flagged, order across members, records within the limit', { skip }, async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, { partitioner: 'murmur2_random' }, {});
  await p.connect();
  t.teardown(() => p.disconnect());
  const brokers = await bootstrapOf(p.client);
  const topic = 'group-backlog';
  await p.send(topic, 'warm-up', null);
  for (let i = 0; i < 100 && !(p.metrics().topics[topic]?.partitions > 0); i++) {
    await p.refreshMetadata(topic).catch(() => undefined);
    await delay(20);
  }
  const N = 30_000;
  const sequence = new Map();
  const sends = [];
  const hot = [];
  for (let i = 0; i < N; i++) {
    const key = i % 10 === 0 ? 'hot' : `cold-${i % 997}`;
    const s = (sequence.get(key) ?? 0) + 1;
    sequence.set(key, s);
    const sent = p.send(topic, String(s), key);
    sends.push(sent);
    if (key === 'hot') hot.push(sent);
  }
  await Promise.all(sends);
  const hotPartitions = new Set((await Promise.all(hot)).map((r) => r.partition));
  t.ok(hotPartitions.size > 1, `premise: the key spread over ${hotPartitions.size} partitions`);

  const members = [0, 1].map(() => new DynamicConsumer({
    'metadata.broker.list': brokers, 'group.id': topic, 'auto.offset.reset': 'earliest',
    'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500, log_level: 3,
  }, {}, { engine: 'native', groupOrder: 'wait', concurrency: 32, resequencer: { maxWaitMs: 30_000 } }));
  const seen = new Set();
  const flagged = {};
  const by = [0, 0];
  let handled = 0;
  let duplicates = 0;
  let top = 0;
  const inverted = [];
  const handlerOf = (i) => async (m, info) => {
    if (m.key === null) return;
    const key = m.key.toString();
    const id = `${key}:${m.value}`;
    if (seen.has(id)) duplicates++;
    else {
      seen.add(id);
      handled++;
      by[i]++;
      if (!info.ordered) flagged[info.reason] = (flagged[info.reason] ?? 0) + 1;
      if (key === 'hot') {
        const s = Number(m.value.toString());
        if (s < top) inverted.push(`${s} after ${top}`);
        else top = s;
      }
    }
    await delay(1 + Math.floor(Math.random() * 3));
  };
  await Promise.all(members.map((c) => c.connect()));
  const runs = members.map((c, i) => c.run([topic], handlerOf(i)));
  const deadline = Date.now() + 120_000;
  while (handled < N && Date.now() < deadline) await delay(50);
  const records = members.map((c) => c.metrics().records);
  await Promise.all(members.map((c) => c.stop()));
  await Promise.all(runs);

  t.equal(handled, N, 'every message handled');
  t.ok(by[0] > 0 && by[1] > 0, `both members handled messages (${by.join(' and ')})`);
  t.same(flagged, {}, 'nothing flagged: no wait reached maxWaitMs, none went unowned');
  t.same(inverted, [], "the key's messages in send order across the members");
  t.equal(duplicates, 0, 'none handled twice');
  const most = Math.max(...records.map((r) => r.committedCharsMax));
  t.ok(most > 0 && most <= RECORD_MAX_CHARS, `records within the broker's limit (the largest: ${most} characters; ${records.map((r) => r.tooLarge).join(' and ')} cut)`);
  t.ok(records.every((r) => r.committed > 0), `both members committed records (${records.map((r) => r.committed).join(' and ')})`);
});
