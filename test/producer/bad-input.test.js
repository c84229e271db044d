'use strict';
// Bad arguments to produce() / send() are typed errors raised before anything is queued
// (README "Errors": "Bad arguments throw before anything is queued"): nothing counted in
// metrics, nothing fed to the partitioner, no delivery report, nothing in the log — both
// while the topic's partition count is known and while it is not (two code paths).
const t = require('tap');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { DynamicProducer, InvalidArgTypeError } = require('../..');
const { sleep, knownPartitions, brokersOf, consumeAll } = require('./lib/helpers');

const GOOD = Symbol('the test topic');
const BAD = [
  // [what, topic (GOOD: the test's topic), value, key, headers, argument named]
  ['topic 42', 42, 'v', 'k', undefined, 'topic'],
  ['topic ""', '', 'v', 'k', undefined, 'topic'],
  ['topic null', null, 'v', 'k', undefined, 'topic'],
  ['topic {}', {}, 'v', 'k', undefined, 'topic'],
  ['value 42', GOOD, 42, 'k', undefined, 'value'],
  ['value {}', GOOD, { a: 1 }, 'k', undefined, 'value'],
  ['value [1]', GOOD, [1], 'k', undefined, 'value'],
  ['value true', GOOD, true, 'k', undefined, 'value'],
  ['value Uint8Array-like object', GOOD, { length: 1, 0: 1 }, 'k', undefined, 'value'],
  ['headers "x"', GOOD, 'v', 'k', 'x', 'headers'],
  ['headers { a: "b" } (not an array)', GOOD, 'v', 'k', { a: 'b' }, 'headers'],
  ['headers [null]', GOOD, 'v', 'k', [null], 'headers[0]'],
  ['headers ["s"]', GOOD, 'v', 'k', ['s'], 'headers[0]'],
  ['headers [["a", "b"]]', GOOD, 'v', 'k', [['a', 'b']], 'headers[0]'],
  ['headers [{ a: 1 }]', GOOD, 'v', 'k', [{ a: 1 }], "headers[0]['a']"],
  ['headers [{ ok: "x" }, { a: {} }]', GOOD, 'v', 'k', [{ ok: 'x' }, { a: {} }], "headers[1]['a']"],
  ['headers [{ a: null }]', GOOD, 'v', 'k', [{ a: null }], "headers[0]['a']"],
  ['key 42', GOOD, 'v', 42, undefined, 'key'],
  ['key {}', GOOD, 'v', {}, undefined, 'key'],
  ['key true', GOOD, 'v', true, undefined, 'key'],
  ['key [1, 2]', GOOD, 'v', [1, 2], undefined, 'key'],
  ['key 10n', GOOD, 'v', 10n, undefined, 'key'],
];

/** Every bad call through produce() must throw an InvalidArgTypeError naming the argument (synchronously). */
function checkProduce(t, p, topic) {
  for (const [what, badTopic, value, key, headers, argument] of BAD) {
    const to = badTopic === GOOD ? topic : badTopic;
    let thrown = null;
    try {
      p.produce(to, value, key, headers);
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof InvalidArgTypeError && thrown.code === 'KDP_INVALID_ARG_TYPE' && thrown.argument === argument,
      `produce() with ${what}: InvalidArgTypeError naming ${argument} (got ${thrown ? `${thrown.name} ${thrown.argument}` : 'no error'})`);
  }
}

/** checkProduce, and every bad call through send() must reject with an InvalidArgTypeError naming the argument. */
async function checkAll(t, p, topic) {
  checkProduce(t, p, topic);
  for (const [what, badTopic, value, key, headers, argument] of BAD) {
    const to = badTopic === GOOD ? topic : badTopic;
    const rejected = await p.send(to, value, key, headers).then(() => null, (err) => err);
    t.ok(rejected instanceof InvalidArgTypeError && rejected.argument === argument, `send() with ${what}: rejects with InvalidArgTypeError naming ${argument}`);
  }
}

t.test('bad arguments throw typed errors and queue nothing (partition count known)', async (t) => {
  const topic = 'bad-known';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 });
  t.teardown(() => p.disconnect().catch(() => {}));
  let reports = 0;
  p.on('delivery', () => reports++);
  await p.connect();
  await knownPartitions(p, topic);
  await p.send(topic, 'good-0', 'k');
  const recentBefore = p.partitioner.stats().topics[topic].recentMessages;
  await checkAll(t, p, topic);
  await p.send(topic, 'good-1', 'k');
  await p.flush(5000);
  await sleep(100);
  t.equal(reports, 2, 'delivery reports only for the two good messages');
  t.match(p.metrics().topics[topic], { produced: 2, delivered: 2, failed: 0 }, 'metrics count only the good messages');
  t.same(Object.keys(p.metrics().topics), [topic], 'no other topic was created by a bad call');
  const recentAfter = p.partitioner.stats().topics[topic].recentMessages;
  t.ok(recentAfter > recentBefore && recentAfter < recentBefore + 1.01, 'the partitioner counted one message more, not the refused ones');
  const read = await consumeAll(await brokersOf(p.client), topic, 2);
  t.same(read.messages.map((m) => m.value.toString()).sort(), ['good-0', 'good-1'], 'the log holds only the good messages');
});

t.test('bad arguments throw typed errors and queue nothing (partition count not known yet)', async (t) => {
  const topic = 'bad-unknown';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 });
  t.teardown(() => p.disconnect().catch(() => {}));
  let reports = 0;
  p.on('delivery', () => reports++);
  await p.connect();
  // The first touch of a topic starts its metadata request; everything below runs before
  // the answer can arrive (synchronously, and send() rejects before its first await).
  p.produce(topic, 'good-0', 'k');
  t.equal(p.metrics().topics[topic].partitions, 0, 'the partition count is not known yet');
  checkProduce(t, p, topic);
  t.equal(p.metrics().topics[topic].partitions, 0, 'still not known');
  await p.flush(5000);
  await sleep(100);
  t.equal(reports, 1, 'one delivery report: the good message');
  t.match(p.metrics().topics[topic], { produced: 1, delivered: 1, failed: 0 }, 'metrics count only the good message');
  const read = await consumeAll(await brokersOf(p.client), topic, 1);
  t.equal(read.total, 1, 'the log holds only the good message');
});

// The timestamp is an argument like the others: a non-number is a caller's mistake, to be
// refused before anything is counted, with a typed error (every error has a code).
t.test('a timestamp that is not a number is an InvalidArgTypeError, and counts nothing', async (t) => {
  const topic = 'bad-ts';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  await knownPartitions(p, topic);
  await p.send(topic, 'good', 'k');
  for (const ts of ['1700000000000', {}, [1]]) {
    let thrown = null;
    try {
      p.produce(topic, 'v', 'k', undefined, ts);
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof InvalidArgTypeError, `timestamp ${JSON.stringify(ts)}: InvalidArgTypeError (got ${thrown ? `${thrown.name}${thrown.code ? ` ${thrown.code}` : ', no code'}: ${thrown.message}` : 'no error'})`);
  }
  await p.flush(5000);
  t.match(p.metrics().topics[topic], { produced: 1, delivered: 1 }, 'produced counts only the good message (else it never matches delivered + failed)');
});

// A message held here (librdkafka's queue full) is handed over later, from a timer or a
// delivery report. A bad timestamp must not survive until then: there it throws out of the
// drain, wedges everything queued behind it, and takes the process down.
t.test('a bad timestamp on a held message neither crashes the process nor wedges the queue', async (t) => {
  const script = `
    const { DynamicProducer } = require(${JSON.stringify(path.resolve(__dirname, '../..'))});
    (async () => {
      const p = new DynamicProducer({ 'test.mock.num.brokers': 3, 'queue.buffering.max.messages': 10, log_level: 3 });
      await p.connect();
      let delivered = 0;
      p.on('delivery', (err) => { if (!err) delivered++; });
      for (let i = 0; i < 50; i++) p.produce('held-ts', 'v' + i, 'k');
      try { p.produce('held-ts', 'bad', 'k', undefined, 'not a number'); } catch (e) { console.log('refused', e.name); }
      for (let i = 50; i < 100; i++) p.produce('held-ts', 'v' + i, 'k');
      await p.flush(10000).catch((e) => console.log('flush failed', e.name, e.message));
      console.log('delivered', delivered);
      await p.disconnect().catch(() => {});
    })();
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 45000 });
  t.equal(r.status, 0, `the process exits normally${r.status ? ` (status ${r.status}: ${r.stderr.split('\n').find((l) => /Error/.test(l))})` : ''}`);
  t.match(r.stdout, /delivered 100\b/, 'the 100 good messages are all delivered');
});
