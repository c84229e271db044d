'use strict';
// Bad input to a DynamicPartitioner: typed errors naming the argument (key, keys[i], keys,
// numPartitions, topic, width), and a call that throws leaves the partitioner as it was.
const t = require('tap');
const { DynamicPartitioner, allowedPartitions, partitionForKey, InvalidArgTypeError, OutOfRangeError, InvalidValueError } = require('../..');
const { keyNames, zipfIndexes } = require('./lib/helpers');

const NOT_KEYS = [42, 0, 1n, true, {}, [], Symbol('k'), () => 1, new Uint16Array(2), new ArrayBuffer(4), new Date(), new Map()];
const BAD_COUNTS_RANGE = [0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 31];
const BAD_COUNTS_TYPE = ['4', null, undefined, 4n, {}];

t.test('partition() with a non-key: InvalidArgTypeError naming key', async (t) => {
  const p = new DynamicPartitioner();
  for (const bad of NOT_KEYS) {
    const err = t.throws(() => p.partition('t', bad, 4), InvalidArgTypeError, `key ${typeof bad}`);
    t.equal(err.code, 'KDP_INVALID_ARG_TYPE');
    t.equal(err.argument, 'key');
    t.ok(err instanceof TypeError);
    t.match(err.message, /^key must be a string, Buffer, Uint8Array, null or undefined, got /);
  }
  for (const bad of NOT_KEYS) t.throws(() => p.share('t', bad), { argument: 'key', code: 'KDP_INVALID_ARG_TYPE' }, 'share() too');
});

t.test('partitionBatch(): a bad element names keys[i]; a non-array names keys', async (t) => {
  const p = new DynamicPartitioner();
  for (const i of [0, 2, 4095, 4096, 5000]) {
    const keys = Array.from({ length: Math.max(i + 10, 20) }, (_, j) => `k${j}`);
    keys[i] = NOT_KEYS[i % NOT_KEYS.length];
    const err = t.throws(() => p.partitionBatch('t', keys, 4), InvalidArgTypeError);
    t.equal(err.argument, `keys[${i}]`, `keys[${i}]`);
    t.match(err.message, new RegExp(`^keys\\[${i}\\] must be a string, Buffer, Uint8Array, null or undefined, got `));
  }
  for (const bad of ['abc', new Set(['a']), null, undefined, 42, { length: 1, 0: 'a' }, new Int32Array(2)]) {
    t.throws(() => p.partitionBatch('t', bad, 4), { name: 'InvalidArgTypeError', argument: 'keys' }, `keys ${Object.prototype.toString.call(bad)}`);
  }
  t.same(Array.from(p.partitionBatch('t', [], 4)), [], 'an empty batch is fine');
});

t.test('numPartitions 0, 1.5, ...: RangeError (OutOfRangeError); not a number: InvalidArgTypeError', async (t) => {
  const p = new DynamicPartitioner();
  p.partition('known', 'k', 8);
  for (const topic of ['new', 'known']) {
    for (const n of BAD_COUNTS_RANGE) {
      for (const call of [() => p.partition(topic, 'k', n), () => p.partitionBatch(topic, ['k'], n)]) {
        const err = t.throws(call, OutOfRangeError, `${topic} topic, numPartitions ${n}`);
        t.ok(err instanceof RangeError);
        t.equal(err.argument, 'numPartitions');
        t.match(err.message, /^numPartitions must be /);
      }
    }
    for (const n of BAD_COUNTS_TYPE) {
      t.throws(() => p.partition(topic, 'k', n), { name: 'InvalidArgTypeError', argument: 'numPartitions' }, `${topic} topic, numPartitions ${typeof n}`);
      t.throws(() => p.partitionBatch(topic, ['k'], n), { name: 'InvalidArgTypeError', argument: 'numPartitions' });
    }
  }
  t.same(Object.keys(p.stats().topics), ['known'], 'no topic was created by a failed call');
  t.equal(p.stats().topics.known.partitions, 8, 'the known topic kept its count');
  t.equal(p.partition('known', 'k', 1), 0, 'one partition is fine');
});

t.test('topic not a string: InvalidArgTypeError naming topic', async (t) => {
  const p = new DynamicPartitioner();
  p.partition('t', 'k', 4);
  for (const topic of [42, null, undefined, {}, Symbol('t'), ['t']]) {
    t.throws(() => p.partition(topic, 'k', 4), { name: 'InvalidArgTypeError', argument: 'topic' }, `partition, topic ${typeof topic}`);
    t.throws(() => p.partitionBatch(topic, ['k'], 4), { name: 'InvalidArgTypeError', argument: 'topic' }, `partitionBatch, topic ${typeof topic}`);
  }
});

t.test('allowedPartitions with bad arguments', async (t) => {
  for (const w of [0, -1, 1.5, NaN]) t.throws(() => allowedPartitions('k', 12, w), { name: 'OutOfRangeError', argument: 'width' }, `width ${w}`);
  for (const w of ['2', null]) t.throws(() => allowedPartitions('k', 12, w), { name: 'InvalidArgTypeError', argument: 'width' }, `width ${w}`);
  for (const n of BAD_COUNTS_RANGE) t.throws(() => allowedPartitions('k', n, 2), { name: 'OutOfRangeError', argument: 'numPartitions' });
  t.throws(() => allowedPartitions('k', '12', 2), { name: 'InvalidArgTypeError', argument: 'numPartitions' });
  t.throws(() => allowedPartitions('k', 12, 2, 'random'), InvalidValueError);
  for (const bad of NOT_KEYS) t.throws(() => allowedPartitions(bad, 12, 2), { name: 'InvalidArgTypeError', argument: 'key' });
});

t.test('keys longer than the key region: placed like any cold key; share() refuses them with a RangeError', async (t) => {
  const p = new DynamicPartitioner();
  const long = 'x'.repeat(100_000);
  t.equal(p.partition('t', long, 12), partitionForKey(long, 12), 'partition() accepts it');
  t.same(Array.from(p.partitionBatch('t', ['a', long, 'b'], 12)), [partitionForKey('a', 12), partitionForKey(long, 12), partitionForKey('b', 12)], 'so does partitionBatch()');
  t.throws(() => p.share('t', long), { name: 'OutOfRangeError', argument: 'key' });
});

/** Feeds a stream, calling `bad(i, p)` (expected to throw) before some messages. */
function feed(bad) {
  const names = keyNames(2000);
  const idx = zipfIndexes(1.1, names.length, 30_000, 91);
  const p = new DynamicPartitioner({ maxTopics: 2 });
  const events = [];
  p.on('hot', (h) => events.push(['hot', h.topic, h.key]));
  p.on('cooled', (h) => events.push(['cooled', h.topic, h.key]));
  const out = new Int32Array(idx.length);
  for (let i = 0; i < idx.length; i++) {
    if (bad && i % 1000 === 500) bad(i, p);
    out[i] = p.partition(i % 10 === 0 ? 'u' : 't', names[idx[i]], 16);
  }
  return { out, events, stats: p.stats(), hot: p.hotKeys('t') };
}

t.test('calls that throw leave the partitioner as it was', async (t) => {
  const clean = feed(null);
  let thrown = 0;
  const names = keyNames(2000);
  const dirty = feed((i, p) => {
    const attempts = [
      () => p.partition('t', 42, 16),
      () => p.partition('t', names[0], 0),
      () => p.partition('t', names[0], 2000), // above maxPartitions
      () => p.partition(7, names[0], 16),
      () => p.partitionBatch('t', [names[0], names[1], {}, names[2]], 16), // bad key inside the first packed call
      () => p.partitionBatch('t', [names[0]], 1.5),
      () => p.partitionBatch('third', [names[0]], -1), // would have evicted a topic
      () => p.setPartitionPenalty('t', 99, 1),
      () => p.setPartitionPenalty('t', 0, -1),
    ];
    for (const a of attempts) { try { a(); } catch { thrown++; } }
  });
  t.equal(thrown, 30 * 9, 'every bad call threw');
  let differ = 0;
  for (let i = 0; i < clean.out.length; i++) if (clean.out[i] !== dirty.out[i]) differ++;
  t.equal(differ, 0, 'the same decisions as a run without the bad calls');
  t.same(dirty.events, clean.events, 'the same events');
  t.same(dirty.stats, clean.stats, 'the same stats');
  t.ok(clean.events.length > 0, 'premise: keys turned hot');
});

t.test('a rejected batch has no effect, wherever its bad key is', async (t) => {
  // A batch is packed into calls of at most 4096 keys; a bad key after the first call
  // must not leave the earlier keys counted (the caller got no partitions for them).
  for (const at of [100, 5000]) {
    const p = new DynamicPartitioner();
    const events = [];
    p.on('hot', (h) => events.push(h.key));
    const keys = Array.from({ length: 6000 }, (_, i) => `k${i % 10}`);
    keys[at] = 42;
    t.throws(() => p.partitionBatch('t', keys, 12), { argument: `keys[${at}]` });
    const recent = p.stats().topics.t ? p.stats().topics.t.recentMessages : 0;
    t.equal(recent, 0, `bad key at ${at}: no message counted (${recent.toFixed(1)} recent messages)`);
    t.same(events, [], `bad key at ${at}: no 'hot' events for messages the caller never got partitions for`);
  }
});

t.test('a bad key for a new topic does not evict another topic', async (t) => {
  // With maxTopics topics in use, a call for a new topic forgets the least recently used
  // one; a call that is rejected (its key is not a key) must not.
  for (const call of [(p) => p.partition('c', 42, 12), (p) => p.partitionBatch('c', ['k', 42], 12)]) {
    const p = new DynamicPartitioner({ maxTopics: 2 });
    const cooled = [];
    p.on('cooled', (h) => cooled.push(`${h.topic}/${h.key}`));
    for (let i = 0; i < 3000; i++) { p.partition('a', i % 2 ? 'hotA' : `x${i}`, 12); p.partition('b', `y${i}`, 12); }
    t.same(p.hotKeys('a').map((h) => h.key), ['hotA'], 'premise: a has a hot key');
    t.throws(() => call(p), { code: 'KDP_INVALID_ARG_TYPE' });
    t.same(Object.keys(p.stats().topics).sort(), ['a', 'b'], 'the topics are still a and b');
    t.same(cooled, [], 'no hot key was cooled');
    t.same(p.hotKeys('a').map((h) => h.key), ['hotA'], "a's hot key is still hot");
  }
});
