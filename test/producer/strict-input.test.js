'use strict';
// Inputs the producer used to take without a word or refuse without reason:
// - a timestamp that is a number but no message's (NaN, negative, infinite) is an
//   OutOfRangeError naming `timestamp`, raised before anything is counted;
// - flush(), disconnect() and connect() with a timeout that is not a number of ms: typed errors;
// - a Uint8Array value is taken as keys are (handed over as a Buffer over the same memory);
// - metrics() keeps the counts and counters of topics beyond the partitioner's slots (options.maxTopics):
//   a topic placed without state still has its count here (test/producer/metadata-unit.test.js:
//   the bound, 16 × maxTopics and at least 1,024, and the least recently used forgotten beyond it).
const t = require('tap');
const { DynamicProducer, InvalidArgTypeError, OutOfRangeError } = require('../..');
const { knownPartitions, brokersOf, consumeAll, recordHandOvers } = require('./lib/helpers');

/** The error `fn` throws, or null. */
function thrown(fn) {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return null;
}

async function connected(t, options = {}) {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 0 }, {}, options);
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  return p;
}

t.test('a timestamp no message can have is an OutOfRangeError naming timestamp, counting nothing', async (t) => {
  const p = await connected(t);
  const known = 'strict-ts';
  await knownPartitions(p, known);
  for (const [topic, what] of [[known, 'partition count known'], ['strict-ts-new', 'partition count not known yet']]) {
    for (const ts of [NaN, -5, -1, Infinity, -Infinity, 2 ** 60]) {
      const e = thrown(() => p.produce(topic, 'v', 'k', undefined, ts));
      t.ok(e instanceof OutOfRangeError && e.code === 'KDP_OUT_OF_RANGE' && e.argument === 'timestamp',
        `${what}: produce() with timestamp ${ts}: OutOfRangeError naming timestamp (got ${e ? `${e.name} ${e.code} ${e.argument}` : 'no error'})`);
      const r = await p.send(topic, 'v', 'k', undefined, ts).then(() => null, (err) => err);
      t.ok(r instanceof OutOfRangeError && r.argument === 'timestamp', `${what}: send() with timestamp ${ts} rejects likewise`);
    }
  }
  const e = thrown(() => p.produce(known, 'v', 'k', undefined, '1700000000000'));
  t.ok(e instanceof InvalidArgTypeError && e.argument === 'timestamp', 'a string timestamp is still an InvalidArgTypeError');
  const at = 1_700_000_000_123;
  await p.send(known, 'given', 'k', undefined, at);
  await p.send(known, 'zero', 'k', undefined, 0);
  await p.flush(5000);
  t.match(p.metrics().topics[known], { produced: 2, delivered: 2, failed: 0 }, 'only the two good messages were counted');
  const read = await consumeAll(await brokersOf(p.client), known, 2);
  const given = read.messages.find((m) => m.value.toString() === 'given');
  t.equal(given && given.timestamp, at, 'a timestamp in range is sent as given (read back)');
});

t.test('a timeout that is not a number of ms is a typed error', async (t) => {
  const p = await connected(t);
  for (const [what, ms, type] of [['"x"', 'x', InvalidArgTypeError], ['{}', {}, InvalidArgTypeError], ['NaN', NaN, OutOfRangeError], ['-1', -1, OutOfRangeError], ['Infinity', Infinity, OutOfRangeError]]) {
    for (const method of ['flush', 'disconnect', 'connect']) {
      const e = await p[method](ms).then(() => null, (err) => err);
      t.ok(e instanceof type && e.argument === 'timeoutMs' && typeof e.code === 'string',
        `${method}(${what}): ${type.name} naming timeoutMs (got ${e ? `${e.name} ${e.code}: ${e.message}` : 'no error'})`);
    }
  }
  await p.send('strict-timeout', 'v', 'k');
  t.pass('a refused disconnect() leaves the producer working');
});

t.test('a Uint8Array value is sent, as a Buffer over the same memory', async (t) => {
  const p = await connected(t);
  const topic = 'strict-u8';
  await knownPartitions(p, topic);
  const handed = recordHandOvers(p.client);
  const whole = new Uint8Array([1, 2, 3, 250]);
  const backing = new ArrayBuffer(16);
  new Uint8Array(backing).forEach((_, i, a) => { a[i] = i; });
  const view = new Uint8Array(backing, 5, 4); // bytes 5, 6, 7, 8
  await p.send(topic, whole, 'u8-whole');
  p.produce(topic, view, 'u8-view');
  const stream = p.writable(topic);
  await new Promise((resolve, reject) => stream.end(new Uint8Array([9, 9]), (err) => (err ? reject(err) : resolve())));
  await p.flush(5000);
  const byKey = new Map(handed.map((h) => [String(h.key), h.value]));
  const v = byKey.get('u8-view');
  t.ok(Buffer.isBuffer(v) && v.buffer === backing && v.byteOffset === 5 && v.length === 4, 'handed over as a Buffer over the caller\'s memory (no copy)');
  const read = await consumeAll(await brokersOf(p.client), topic, 3);
  const values = read.messages.map((m) => (m.value === null ? 'null' : m.value.toString('hex'))).sort();
  t.same(values, ['010203fa', '05060708', '0909'].sort(), 'the log holds the bytes of each view (the stream\'s chunk too)');
});

t.test('metrics() keeps the topics beyond options.maxTopics; the partitioner keeps state for those that got a slot', async (t) => {
  const p = await connected(t, { maxTopics: 3 });
  const order = ['mt-a', 'mt-b', 'mt-c', 'mt-a', 'mt-d', 'mt-e', 'mt-a', 'mt-f', 'mt-e'];
  for (const [step, topic] of order.entries()) {
    await knownPartitions(p, topic);
    for (let i = 0; i < 5; i++) await p.send(topic, 'v', `k${i}`);
    const seen = new Set(order.slice(0, step + 1));
    t.same(Object.keys(p.metrics().topics).sort(), [...seen].sort(), `after ${topic}: metrics() has every topic used`);
    // The partitioner keeps state for the topics that got a slot: the first three (none idle long
    // enough to give its slot up); the others are partitioned without state.
    t.same(Object.keys(p.partitioner.stats().topics).sort(), [...seen].slice(0, 3).sort(), `after ${topic}: the partitioner keeps the first three`);
    t.equal(p.partitioner.stats().topicsWithoutState, Math.max(0, seen.size - 3), `after ${topic}: the rest without state`);
  }
  t.ok(Object.values(p.metrics().topics).every((x) => x.partitions === 4 && x.delivered === x.produced), 'each topic with its partition count and counters');
});
