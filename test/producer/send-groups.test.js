'use strict';
// send() on the native engine settles its calls in groups (src/producer/settle/send-groups.ts): the
// calls whose messages go into one batch for one partition share one settlement. Checked here,
// each against the log read back with a plain node-rdkafka consumer (the independent source):
// every call resolves with its own message's report, whichever way the message went (straight
// into a batch, a spread key's order header and handoff, librdkafka's full queue and the
// backlog, a topic whose partition count was not known yet, a send() made from a 'hot'
// listener in the middle of another); a message librdkafka refuses at once rejects its call
// alone. Then SendGroup's own rules, unit by unit.
const t = require('tap');
const { nativeBuilt } = require('../lib/native-built');
const { DynamicProducer, KafkaError } = require('../..');
const { SendGroup } = require('../../build/producer/settle/send-groups');
const { brokersOf, consumeAll, trackHot } = require('./lib/helpers');

const native = nativeBuilt();
const opts = { skip: !native && 'the native engine is not built here' };
const CONFIG = { 'test.mock.num.brokers': 3, log_level: 0, 'linger.ms': 2 };

/** Checks that send i's report names where value `${tag}${i}` is in the log, with its key; returns the misplaced count. */
async function checkAgainstLog(t, p, topic, keys, reports, tag) {
  const read = await consumeAll(await brokersOf(p.client), topic, keys.length);
  t.equal(read.messages.length, keys.length, 'the log holds exactly the messages sent');
  const where = new Map();
  for (const m of read.messages) where.set(m.value.toString(), m);
  let misplaced = 0;
  for (let i = 0; i < keys.length; i++) {
    const m = where.get(`${tag}${i}`);
    const r = reports[i];
    if (!m || r.partition !== m.partition || r.offset !== m.offset || r.key !== keys[i] || m.key.toString() !== keys[i] || r.topic !== topic) misplaced++;
  }
  t.equal(misplaced, 0, 'each send() resolved with its own report: the partition and offset where its value is, its key');
}

t.test('20,000 send() calls in one turn over 12 partitions, a hot key spread among them: each resolves with its own report', opts, async (t) => {
  const topic = 'send-groups-plain';
  const p = new DynamicProducer(CONFIG, {}, { engine: 'native' });
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  const hot = trackHot(p);
  const keys = Array.from({ length: 20000 }, (_, i) => (i % 4 === 0 ? 'hot' : `k${i % 997}`));
  const reports = await Promise.all(keys.map((key, i) => p.send(topic, `a${i}`, key)));
  await checkAgainstLog(t, p, topic, keys, reports, 'a');
  t.ok(hot.wasHot('hot'), 'the hot key was spread');
  t.ok(new Set(reports.filter((r) => r.key === 'hot').map((r) => r.partition)).size > 1, 'over more than one partition');
});

t.test("librdkafka's queue full: the calls held in the backlog resolve with their own reports too", opts, async (t) => {
  const topic = 'send-groups-backlog';
  const p = new DynamicProducer({ ...CONFIG, 'queue.buffering.max.messages': 1000 }, {}, { engine: 'native' });
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  const keys = Array.from({ length: 8000 }, (_, i) => `k${i % 301}`);
  const reports = await Promise.all(keys.map((key, i) => p.send(topic, `b${i}`, key)));
  await checkAgainstLog(t, p, topic, keys, reports, 'b');
});

t.test("a topic whose partition count is not known yet: its calls wait for it, then resolve with their own reports", opts, async (t) => {
  const topic = 'send-groups-new-topic';
  const p = new DynamicProducer({ ...CONFIG, 'allow.auto.create.topics': true }, {}, { engine: 'native' });
  t.teardown(() => p.disconnect());
  await p.connect(10000);
  const keys = Array.from({ length: 3000 }, (_, i) => `k${i % 53}`);
  const reports = await Promise.all(keys.map((key, i) => p.send(topic, `c${i}`, key)));
  await checkAgainstLog(t, p, topic, keys, reports, 'c');
});

t.test("a send() from a 'hot' listener, made while another send() is being placed: both resolve with their own reports", opts, async (t) => {
  const topic = 'send-groups-nested';
  const p = new DynamicProducer(CONFIG, {}, { engine: 'native' });
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  const keys = [];
  const calls = [];
  let nested = 0;
  p.on('hot', () => {
    const i = keys.length;
    keys.push('from-listener');
    calls.push(p.send(topic, `d${i}`, 'from-listener'));
    nested++;
  });
  for (let i = 0; i < 20000; i++) {
    const n = keys.length;
    const key = i % 3 === 0 ? 'hot' : `k${i % 500}`;
    keys.push(key);
    // The listener's call is made inside this one: its value is numbered after it.
    calls.push(null);
    const call = p.send(topic, `d${n}`, key);
    calls[n] = call;
  }
  const reports = await Promise.all(calls);
  t.ok(nested > 0, `the listener sent (${nested})`);
  await checkAgainstLog(t, p, topic, keys, reports, 'd');
});

t.test('a message librdkafka refuses at once rejects its own call only; the calls around it in the same batch are written', opts, async (t) => {
  const topic = 'send-groups-refused';
  const p = new DynamicProducer({ ...CONFIG, 'message.max.bytes': 10000 }, {}, { engine: 'native' });
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  const before = p.send(topic, 'first', 'k');
  const refused = p.send(topic, Buffer.alloc(20000), 'k').then(() => null, (e) => e);
  const after = p.send(topic, 'second', 'k');
  const err = await refused;
  t.ok(err instanceof KafkaError && err.librdkafkaCode === 10, `the big one: MSG_SIZE_TOO_LARGE (10, rdkafka.h) (got ${err && err.message})`);
  const [a, b] = await Promise.all([before, after]);
  t.equal(b.partition, a.partition, 'one key, one partition');
  t.equal(b.offset, a.offset + 1, 'the two around it written one after the other');
});

t.test('SendGroup: members settle in any order; each promise gets its own outcome; a second outcome is ignored', async (t) => {
  const g = new SendGroup();
  const members = [g.add(), g.add(), g.add()];
  t.same(members, [0, 1, 2], 'members numbered in order');
  // Member 1's promise made first: it and the ones after take reactions of their own.
  const p1 = g.promiseOf(1);
  const p0 = g.promiseOf(0);
  const p2 = g.promiseOf(2);
  g.settle(2, { offset: 2 });
  g.settle(0, { offset: 0 });
  g.settle(0, { offset: 99 });
  t.notOk(g.done, 'not done while a member has no outcome');
  const err = new Error('refused');
  g.settle(1, err);
  t.ok(g.done, 'done once each has one');
  t.same((await p0).offset, 0);
  t.same((await p2).offset, 2);
  await t.rejects(p1, err, "member 1's promise rejects with its error");
});

t.test('SendGroup: promises made in member order share one reaction and still get their own outcomes', async (t) => {
  const g = new SendGroup();
  const n = 100;
  const promises = [];
  for (let i = 0; i < n; i++) promises.push(g.promiseOf(g.add()));
  for (let i = n - 1; i >= 0; i--) g.settle(i, i === 7 ? new Error('seven') : { offset: i });
  const outcomes = await Promise.all(promises.map((p) => p.then((r) => r.offset, (e) => e.message)));
  t.same(outcomes, Array.from({ length: n }, (_, i) => (i === 7 ? 'seven' : i)));
});

t.test('SendGroup: a member taken back before its promise was made leaves no trace', async (t) => {
  const g = new SendGroup();
  const a = g.add();
  const pa = g.promiseOf(a);
  g.add();
  g.drop();
  g.settle(a, { offset: 5 });
  t.ok(g.done, 'done with the one member left');
  t.equal((await pa).offset, 5);
});
