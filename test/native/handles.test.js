'use strict';
// The native engine's librdkafka handles (nativeHandles, src/native/produce.ts): partition p
// always through handle p % n, on librdkafka's mock cluster (the first handle makes it, the
// others join it). Checked against the log read back with a plain node-rdkafka consumer: every
// message once, where its report says, each partition in send order; the spread key's order
// headers intact; statistics merged into one message a round; flush() and disconnect() over
// every handle; a bad count refused.
const t = require('tap');
const { nativeBuilt } = require('../lib/native-built');
const { DynamicProducer } = require('../..');
const { brokersOf, consumeAll, headerOf } = require('../producer/lib/helpers');

const opts = { skip: !nativeBuilt() && 'the native engine is not built here' };
const CONFIG = { 'test.mock.num.brokers': 3, log_level: 0, 'linger.ms': 2 };

t.test('3 handles: every message once, where its report says, each partition in send order', opts, async (t) => {
  const topic = 'native-handles-order';
  const p = new DynamicProducer({ ...CONFIG, 'statistics.interval.ms': 100 }, {}, { engine: 'native', nativeHandles: 3 });
  t.teardown(() => p.disconnect());
  const stats = [];
  p.on('stats', (s) => stats.push(s));
  await p.connect(10000, { topics: [topic] });
  t.equal(p.client.handles, 3, 'the engine runs 3 librdkafka handles');
  const N = 6000;
  const sends = [];
  for (let i = 0; i < N; i++) sends.push(p.send(topic, String(i), i % 3 === 0 ? 'hot' : `k${i % 40}`));
  // Half of them in batches too, while the sends are in flight.
  const batch = [];
  for (let i = N; i < N + 2000; i++) batch.push({ value: String(i), key: `k${i % 40}` });
  const batches = [];
  for (let i = 0; i < batch.length; i += 500) batches.push(p.sendBatch(topic, batch.slice(i, i + 500)));
  const reports = [...(await Promise.all(sends)), ...(await Promise.all(batches)).flat()];
  await p.flush(10000);
  const read = await consumeAll(await brokersOf(p.client), topic, reports.length);
  t.equal(read.messages.length, reports.length, 'the log holds exactly the messages sent');
  const at = new Map(read.messages.map((m) => [Number(m.value.toString()), m]));
  t.equal(at.size, reports.length, 'each once');
  let misplaced = 0;
  reports.forEach((r, i) => {
    const m = at.get(i);
    if (!m || m.partition !== r.partition || m.offset !== r.offset) misplaced++;
  });
  t.equal(misplaced, 0, 'where each report says');
  const used = new Set(reports.map((r) => r.partition));
  t.ok(used.size === 4, `all 4 partitions used, so every handle carried some (${[...used]})`);
  // Per partition and key, values in send order (send() calls first, then the batches, each in input order).
  const last = new Map();
  let inversions = 0;
  for (const m of [...read.messages].sort((a, b) => a.partition - b.partition || a.offset - b.offset)) {
    const id = `${m.partition}:${m.key}`;
    const v = Number(m.value.toString());
    if ((last.get(id) ?? -1) > v) inversions++;
    last.set(id, v);
  }
  t.equal(inversions, 0, "each key's messages in a partition in send order");
  const marked = read.messages.filter((m) => headerOf(m) !== undefined);
  t.ok(marked.length > 0, `the hot key spread with order headers (${marked.length})`);
  t.ok(new Set(marked.map((m) => m.partition)).size > 1, 'over more than one partition, so over more than one handle');
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.ok(stats.length > 0, `'stats' events (${stats.length})`);
  t.ok(stats.every((s) => s.handles === 3), 'each one merged from the 3 handles');
  const depths = p.metrics().topics[topic]?.queueDepth ?? [];
  t.equal(depths.length, 4, 'queue depth per partition, from the merged statistics');
});

t.test('1 handle, as before; a bad count refused at construction', opts, async (t) => {
  const p = new DynamicProducer(CONFIG, {}, { engine: 'native', nativeHandles: 1 });
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: ['native-handles-one'] });
  t.equal(p.client.handles, 1);
  const r = await p.send('native-handles-one', 'v', 'k');
  t.ok(r.offset >= 0, 'delivered');
  for (const bad of [0, 17, 1.5, '2']) {
    t.throws(() => new DynamicProducer(CONFIG, {}, { nativeHandles: bad }), { code: 'KDP_INVALID_OPTION', message: /nativeHandles/ }, `${JSON.stringify(bad)} refused`);
  }
  const tx = new DynamicProducer({ ...CONFIG, 'transactional.id': 'native-handles-tx' }, {}, { engine: 'native', nativeHandles: 4 });
  t.equal(tx.client.handles, 1, 'one handle with transactional.id');
  await tx.disconnect();
});

t.test("librdkafka's queue bounds are shared among the handles", async (t) => {
  const { sharedQueue } = require('../../build/native/produce');
  t.same(sharedQueue({ 'queue.buffering.max.messages': 100001, 'linger.ms': 5 }, 2),
    { 'queue.buffering.max.messages': 50001, 'queue.buffering.max.kbytes': 524288, 'linger.ms': 5 }, "a set bound halved (rounded up); librdkafka's default kbytes (1,048,576) too");
  t.same(sharedQueue({ 'queue.buffering.max.kbytes': '4000' }, 3), { 'queue.buffering.max.kbytes': 1334 }, 'a numeric string read as a number');
  t.same(sharedQueue({ 'queue.buffering.max.messages': 'lots' }, 2), { 'queue.buffering.max.messages': 'lots', 'queue.buffering.max.kbytes': 524288 }, 'a bad value left for librdkafka to refuse');
});

t.test('disconnect() with messages in flight on every handle: each send() settled', opts, async (t) => {
  const p = new DynamicProducer(CONFIG, {}, { engine: 'native', nativeHandles: 4 });
  await p.connect(10000, { topics: ['native-handles-disconnect'] });
  const sends = [];
  for (let i = 0; i < 4000; i++) sends.push(p.send('native-handles-disconnect', String(i), `k${i % 64}`).then(() => 'ok', () => 'failed'));
  await p.disconnect();
  const outcomes = await Promise.all(sends);
  t.equal(outcomes.length, 4000, 'every send() settled');
  t.ok(outcomes.every((o) => o === 'ok' || o === 'failed'), 'resolved or rejected, none left hanging');
});
