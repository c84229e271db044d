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

t.test('many keys of a large table turning hot and cooling in one packed call: no event lost', async (t) => {
  // 200 keys in runs of 20 over a 64-entry table: each run turns its key hot and the next
  // ones cool it, far more events in one call than the log's maxTrackedKeys + reserve records.
  const options = { ...OPTIONS, maxTrackedKeys: 64 };
  const keys = Array.from({ length: 4000 }, (_, i) => `key-${Math.floor(i / 20) % 200}`);
  const run = (batch) => {
    const p = new DynamicPartitioner(options);
    const events = record(p);
    const out = batch ? Array.from(p.partitionBatch('t', keys, N)) : keys.map((k) => p.partition('t', k, N));
    return { p, out, events };
  };
  const single = run(false);
  const batch = run(true);
  t.ok(single.events.length > 64 + 9, `premise: more events (${single.events.length}) than the log holds at once`);
  t.same(batch.out, single.out, 'the same partitions');
  t.same(batch.events, single.events, 'the same events, in the same order');
  // Each key's events alternate hot, cooled, hot, ... and the keys left hot are those whose
  // last event is 'hot': a lost event would break one or the other.
  const last = new Map();
  let alternating = true;
  for (const [kind, , key] of batch.events) {
    if ((last.get(key) ?? 'cooled') === kind) alternating = false;
    last.set(key, kind);
  }
  t.ok(alternating, 'every key alternates hot and cooled');
  const stillHot = [...last].filter(([, kind]) => kind === 'hot').map(([key]) => key).sort();
  t.same(batch.p.hotKeys('t').map((h) => String(h.key)).sort(), stillHot, 'hotKeys() are the keys whose last event is hot');
});

t.test('a log that could not take an event traps (InternalError) rather than drop it', async (t) => {
  // The core's decide export, called without draining the log between calls (the facade
  // always drains): the log fills, and the first event that does not fit stops the call.
  const keyOf = (i) => `k${Math.floor(i / 20) % 5}`;
  const twin = new DynamicPartitioner(OPTIONS);
  const perDecision = [];
  let seen = 0;
  twin.on('hot', () => seen++);
  twin.on('cooled', () => seen++);
  const p = new DynamicPartitioner(OPTIONS);
  twin.partition('t', 'first', N);
  p.partition('t', 'first', N); // topic slot 0, as for the twin
  const { exports: x, i32, bytes, keys: at } = p.core;
  const cells = x.cellsPtr() >> 2;
  let thrown;
  let decided = 0;
  for (let i = 0; i < 4000 && thrown === undefined; i++) {
    const key = keyOf(i);
    twin.partition('t', key, N);
    perDecision.push(seen);
    const length = bytes.write(key, at);
    try {
      x.decide(0, 1 /* murmur2 */, length, N);
      decided++;
    } catch (err) {
      thrown = err;
    }
  }
  t.ok(thrown, 'a call failed');
  t.equal(thrown?.name, 'InternalError', 'with the core abort error');
  const logged = i32[cells];
  t.ok(decided > 0, `premise: ${decided} decisions before`);
  // The events of the decisions made all fit, and the failing one had one more than fit.
  const before = perDecision[decided - 1]; // the twin's events over the same decisions
  t.ok(before <= logged, `the ${before} events of the ${decided} decisions made are all in the log (${logged})`);
  t.ok(perDecision[decided] > logged, `the failing decision's events (${perDecision[decided]} in all) did not fit`);
  t.equal(logged, 1 + 9, 'the log was full: maxTrackedKeys + EVENT_RESERVE records');
});
