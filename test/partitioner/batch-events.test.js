'use strict';
// partitionBatch reports every 'hot' and 'cooled' event that the same keys fed one by one to
// partition() report, in the same order, and ends with the same hot keys. The stream is made
// to turn keys hot and cool far more often in one batch than the table has entries: five
// keys in runs of 20, a one-entry table and a half-life of 8 messages, so the key in the
// table turns hot within its run and cools in the next one.
const t = require('tap');
const { DynamicPartitioner } = require('../..');

const N = 12;
const OPTIONS = { maxTrackedKeys: 1, horizon: { messages: 8 }, minHotMessages: 1, warmupMessages: 1 };

function record(p) {
  const events = [];
  p.on('hot', (h) => events.push(['hot', h.topic, String(h.key), h.reason]));
  p.on('cooled', (h) => events.push(['cooled', h.topic, String(h.key), h.reason]));
  return events;
}

function feed(keys, batch) {
  const p = new DynamicPartitioner(OPTIONS);
  const events = record(p);
  const out = batch ? Array.from(p.partitionBatch('t', keys, N)) : keys.map((k) => p.partition('t', k, N));
  const hot = p.hotKeys('t').map((h) => String(h.key)).sort();
  return { out, events, hot, stats: p.stats().trackedKeys };
}

for (const [label, make, messages] of [
  ['string keys, one packed call', (i) => `k${Math.floor(i / 20) % 5}`, 4000],
  // Buffers go through the key writer one by one; 9,000 keys take three packed calls.
  ['Buffer keys, three packed calls', (i) => Buffer.from(`k${Math.floor(i / 20) % 5}`), 9000],
]) {
  t.test(`${label}: the batch reports what single calls report`, async (t) => {
    const keys = Array.from({ length: messages }, (_, i) => make(i));
    const single = feed(keys, false);
    const batch = feed(keys, true);
    const hotEvents = single.events.filter((e) => e[0] === 'hot').length;
    t.ok(hotEvents > 40, `premise: single calls report many hot keys (${hotEvents}) for a one-entry table`);
    t.same(batch.out, single.out, 'the same partitions');
    t.same(batch.events, single.events, 'the same events, in the same order');
    t.same(batch.hot, single.hot, 'the same hot keys at the end');
    t.equal(batch.stats.hot, single.stats.hot, 'stats().trackedKeys.hot agrees');
    t.equal(batch.stats.hot, batch.hot.length, 'stats().trackedKeys.hot counts hotKeys()');
  });
}

t.test('a listener that uses the key region (share()) does not disturb a batch drained early', async (t) => {
  const keys = Array.from({ length: 4000 }, (_, i) => `k${Math.floor(i / 20) % 5}`);
  const reference = feed(keys, true);
  const p = new DynamicPartitioner(OPTIONS);
  const events = record(p);
  // share() writes its key where the batch's keys are packed, and counts nothing.
  p.on('hot', () => p.share('t', 'another key written over the key region'));
  const out = Array.from(p.partitionBatch('t', keys, N));
  t.same(out, reference.out, 'the same partitions');
  t.same(events, reference.events, 'the same events');
});
