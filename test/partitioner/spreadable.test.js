'use strict';
// options.spreadable(key, topic): asked once when a key turns hot; a key it refuses stays hot
// (reported, with spreadable: false) but every message of it goes to Kafka's partition
// (partitionForKey), unmarked; other hot keys spread as usual. The same in a batch, where the
// question is asked before any more of the batch is decided.
const t = require('tap');
const { DynamicPartitioner, partitionForKey, ORDER_NONE, CallbackError } = require('../..');
const { zipfIndexes, keyNames } = require('./lib/helpers');

const N = 12;
const names = keyNames(10_000);
const idx = zipfIndexes(1.1, names.length, 300_000, 21);
const KEEP = new Set(['key-0', 'key-2']); // the hottest key and another: never split

function check(t, p, placed, orders, asked) {
  const off = [];
  let others = 0;
  for (let i = 0; i < idx.length; i++) {
    const key = names[idx[i]];
    if (KEEP.has(key)) {
      if (placed[i] !== partitionForKey(key, N) || (orders && orders[i] !== ORDER_NONE)) off.push(i);
    } else if (placed[i] !== partitionForKey(key, N)) others++;
  }
  t.same(off, [], 'every message of a refused key on its own partition, unmarked');
  t.ok(others > 10_000, `other hot keys spread (${others} messages off their partition)`);
  const hot = p.hotKeys('t');
  t.same(hot.filter((h) => KEEP.has(h.key)).map((h) => [h.key, h.spreadable, h.partitions]).sort(),
    [['key-0', false, 1], ['key-2', false, 1]], 'refused keys are reported hot, spreadable: false, on 1 partition');
  t.ok(hot.filter((h) => !KEEP.has(h.key)).every((h) => h.spreadable === true), 'the others spreadable: true');
  // Asked once per key turning hot: as many calls as 'hot' events.
  t.equal(asked.calls, asked.hotEvents, `asked once per key turning hot (${asked.calls})`);
  t.ok(asked.args.every(([key, topic]) => typeof key === 'string' && topic === 't'), 'with the key and the topic');
}

function make() {
  const asked = { calls: 0, hotEvents: 0, args: [] };
  const p = new DynamicPartitioner({ spreadable: (key, topic) => { asked.calls++; asked.args.push([key, topic]); return !KEEP.has(key); } });
  p.on('hot', () => asked.hotEvents++);
  return { p, asked };
}

t.test('one message at a time', async (t) => {
  const { p, asked } = make();
  const placed = new Int32Array(idx.length);
  const orders = new Int32Array(idx.length);
  for (let i = 0; i < idx.length; i++) {
    placed[i] = p.decide('t', names[idx[i]], N);
    orders[i] = p.decision.order;
  }
  check(t, p, placed, orders, asked);
});

t.test('partitionBatch', async (t) => {
  const { p, asked } = make();
  const placed = new Int32Array(idx.length);
  const keys = Array.from(idx, (k) => names[k]);
  for (let i = 0; i < keys.length; i += 4096) placed.set(p.partitionBatch('t', keys.slice(i, i + 4096), N), i);
  check(t, p, placed, null, asked);
});

t.test('a spreadable that throws keeps the key on its partition and emits a CallbackError as a warning', async (t) => {
  const p = new DynamicPartitioner({ spreadable: () => { throw new Error('boom'); } });
  const warnings = [];
  p.on('warning', (err) => warnings.push(err));
  let off = 0;
  for (let i = 0; i < 50_000; i++) {
    const key = names[idx[i]];
    if (p.partition('t', key, N) !== partitionForKey(key, N)) off++;
  }
  t.equal(off, 0, "every message on its key's own partition");
  t.ok(warnings.length > 0 && warnings.every((w) => w instanceof CallbackError && w.code === 'KDP_CALLBACK_ERROR' && /boom/.test(w.message)),
    `${warnings.length} warnings, each a CallbackError naming the cause`);
  t.ok(p.hotKeys('t').length > 0 && p.hotKeys('t').every((h) => h.spreadable === false), 'its hot keys are reported, none spreadable');
});

t.test('spreadable must be a function', async (t) => {
  t.throws(() => new DynamicPartitioner({ spreadable: true }), { code: 'KDP_INVALID_OPTION', message: /options\.spreadable must be a function/ });
});
