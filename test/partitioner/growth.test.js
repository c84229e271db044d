'use strict';
// The table of tracked keys and the sketch are shared by the topics with state: they have the
// options' sizes for up to 16 topics and double each time the topics with state pass 32, 64,
// ... (up to their size for maxTopics), so that many topics do not crowd each other out of
// the table while one topic keeps the small one. Growing keeps every entry (its index, its
// state) and every sketch estimate; memory stays within stats().memoryBoundBytes.
const t = require('tap');
const { DynamicPartitioner } = require('../..');
const { ENTRY_SHIFT, TOPIC_SHIFT } = require('../../build/core/abi');
const { prng, keyNames } = require('./lib/helpers');

const background = keyNames(5000, 'bg-');

/** Gives `count` topics state without a message (setPartitionPenalty makes a topic's state). */
function addTopics(p, from, count) {
  for (let i = from; i < from + count; i++) p.setPartitionPenalty(`topic-${i}`, 0, 0);
}

t.test('the table doubles at 17 and 33 topics with state, up to its size for maxTopics', async (t) => {
  const p = new DynamicPartitioner();
  t.equal(p.trackedKeysBound, 4096, 'defaults (maxTopics 64): at most 1024 x 4 entries');
  t.equal(p.stats().trackedKeys.capacity, 1024, 'no topic yet: maxTrackedKeys');
  // The capacity after the n-th topic, by the rule stated in the docs: 1024 up to 16 topics,
  // 2048 up to 32, 4096 up to 64.
  const expected = { 1: 1024, 16: 1024, 17: 2048, 32: 2048, 33: 4096, 64: 4096 };
  let have = 0;
  for (const [n, capacity] of Object.entries(expected)) {
    addTopics(p, have, Number(n) - have);
    have = Number(n);
    t.equal(p.stats().trackedKeys.capacity, capacity, `${n} topics with state: ${capacity} entries`);
  }
  addTopics(p, have, 10); // past maxTopics: without state, nothing grows
  t.equal(p.stats().topicsWithoutState, 10, 'premise: 10 topics without state');
  t.equal(p.stats().trackedKeys.capacity, 4096, 'past maxTopics: still 4096');

  const wide = new DynamicPartitioner({ maxTopics: 1000, maxPartitions: 64 });
  t.equal(wide.trackedKeysBound, 1024 * 64, 'maxTopics 1000: up to 64 x 1024 entries (1000 topics need 63 x 16)');
  addTopics(wide, 0, 65);
  t.equal(wide.stats().trackedKeys.capacity, 8192, '65 topics: 8192');
  const capped = new DynamicPartitioner({ maxTopics: 1000, maxPartitions: 64, maxTrackedKeys: 1 << 18 });
  t.equal(capped.trackedKeysBound, 1 << 20, 'growth stops at the option range (2^20 entries)');
  const one = new DynamicPartitioner({ maxTopics: 1 });
  t.equal(one.trackedKeysBound, 1024, 'maxTopics 1: never grows');
});

t.test('growing keeps hot keys, their entries and their decisions, and every sketch estimate', async (t) => {
  const p = new DynamicPartitioner();
  const rand = prng(11);
  const hot = [];
  p.on('hot', (h) => hot.push(h.key));
  for (let i = 0; i < 30_000; i++) p.partition('main', rand() < 0.05 ? 'H' : background[Math.floor(rand() * background.length)], 48);
  t.same(hot, ['H'], "premise: 'H' (5% of main) turned hot");
  p.decide('main', 'H', 48);
  const entry = p.decision.entry;
  t.ok(entry >= 0, `premise: 'H' has entry ${entry}`);
  const shares = background.slice(0, 200).map((k) => p.share('main', k));
  const hotShare = p.share('main', 'H');
  const memory = p.stats().memoryBytes;
  addTopics(p, 0, 40); // 41 topics with state: the table and the sketch grow to 4x
  const s = p.stats();
  t.equal(s.trackedKeys.capacity, 4096, 'premise: the table grew');
  t.ok(s.memoryBytes > memory, `premise: memory grew (${memory} -> ${s.memoryBytes})`);
  t.same(p.hotKeys('main').map((h) => h.key), ['H'], "'H' still hot");
  t.equal(p.share('main', 'H'), hotShare, "'H' keeps its exact count");
  t.same(background.slice(0, 200).map((k) => p.share('main', k)), shares, '200 sketch estimates unchanged by the widening');
  p.decide('main', 'H', 48);
  t.equal(p.decision.entry, entry, "'H' keeps its entry");
  t.ok(p.decision.order !== 0, "'H' is still spread (its message is marked)");
  // The other keys are found in the rebuilt index: each keeps its tracked count.
  t.equal(s.trackedKeys.tracked, p.stats().trackedKeys.tracked, 'as many keys tracked');
});

t.test('many topics use entries past maxTrackedKeys; entries stay below trackedKeysBound', async (t) => {
  // 40 topics, each with a key of 5% of its messages: the options' 2 entries would hold 2 of
  // them; the table grown for 40 topics (2 x 4) holds 8.
  const p = new DynamicPartitioner({ maxTrackedKeys: 2 });
  const rand = prng(12);
  let maxEntry = -1;
  const hotTopics = new Set();
  p.on('hot', (h) => hotTopics.add(h.topic));
  for (let i = 0; i < 400_000; i++) {
    const topic = `t${i % 40}`;
    p.decide(topic, rand() < 0.05 ? `H${i % 40}` : background[Math.floor(rand() * background.length)], 12);
    if (p.decision.entry > maxEntry) maxEntry = p.decision.entry;
  }
  t.equal(p.trackedKeysBound, 8, 'maxTrackedKeys 2, maxTopics 64: at most 8 entries');
  t.equal(p.stats().trackedKeys.capacity, 8, 'premise: 40 topics: grown to 8');
  t.ok(maxEntry >= 2 && maxEntry < 8, `entries past maxTrackedKeys used, below the bound (max ${maxEntry})`);
  t.ok(hotTopics.size > 2, `more topics had a hot key than maxTrackedKeys holds (${hotTopics.size})`);
});

t.test('memory: one topic keeps it small, 64 topics stay within the stated bound', async (t) => {
  const p = new DynamicPartitioner();
  p.partition('one', 'k', 48);
  const single = p.stats();
  t.ok(single.memoryBytes < 1 << 20, `one topic: ${single.memoryBytes} bytes, under 1 MiB`);
  // The regions the arena may carve out, from the defaults, computed here from the layout:
  // topic records and a page per slot (f64 load + f64 penalty + f32 adjustment per partition),
  // then each size the table (64-byte entries, an index of 8-byte slots at twice the entries
  // rounded up to a power of two, a 4-byte free list), the event log (12-byte records, 9 more
  // than the entries) and the sketch (4 rows of f32 counters) go through: x1, x2, x4.
  let regions = 64 << TOPIC_SHIFT;
  regions += 64 * 1024 * 20;
  for (const s of [1, 2, 4]) {
    const entries = 1024 * s;
    regions += (entries << ENTRY_SHIFT) + entries * 2 * 8 + entries * 4 + (entries + 9) * 12 + 16384 * s * 4 * 4;
  }
  const bound = single.memoryBoundBytes;
  // The bound adds the static data (key region, batch tables: < 160 KiB) and rounds up to 64 KiB pages.
  t.ok(bound >= regions && bound <= regions + 160 * 1024 + 65536, `bound ${bound} = ${regions} bytes of regions + static data`);
  const rand = prng(13);
  for (let i = 0; i < 200_000; i++) p.partition(`t${i % 64}`, background[Math.floor(rand() * background.length)], 48);
  const full = p.stats();
  t.equal(Object.keys(full.topics).length, 64, 'premise: 64 topics with state');
  t.equal(full.memoryBoundBytes, bound, 'the bound is fixed by the options');
  t.ok(full.memoryBytes <= bound, `64 topics: ${full.memoryBytes} bytes, within the bound ${bound}`);
});

t.test("order headers name each key's previous marked message for entries past maxTrackedKeys", async (t) => {
  const { OrderChains } = require('../../build/partitioner/headers');
  const { decodeOrderHeader, ORDER_ANCHOR, ORDER_RETURN } = require('../..');
  // 33 topics, each with a key of 5% of its messages: the table grows to 16 x 4 = 64 entries
  // and the topics' hot keys take entries past 16. The chains are kept per entry; the
  // reference here is kept per key: the sequence of the key's last marked message.
  const p = new DynamicPartitioner({ maxTrackedKeys: 16 });
  const chains = new OrderChains(p, '00000000000000aa', 1);
  const rand = prng(14);
  const last = new Map();
  let checked = 0;
  let pastOptions = 0;
  const wrong = [];
  for (let i = 0; i < 330_000; i++) {
    const topic = `t${i % 33}`;
    const key = rand() < 0.05 ? `H${i % 33}` : background[Math.floor(rand() * background.length)];
    const partition = p.decide(topic, key, 12);
    const order = p.decision.order;
    if (order === 0) continue;
    const entry = p.decision.entry;
    const h = decodeOrderHeader(chains.header(order, 12, partition)['kdp-order']);
    if (h === null) { wrong.push(`${key}: header does not decode`); continue; }
    if (order !== ORDER_ANCHOR) {
      checked++;
      if (entry >= 16) pastOptions++;
      if (h.previous !== (last.get(key) ?? 0)) wrong.push(`${key} (entry ${entry}): previous ${h.previous}, expected ${last.get(key) ?? 0}`);
    }
    if (order === ORDER_RETURN) last.delete(key);
    else last.set(key, h.sequence);
  }
  t.equal(p.stats().trackedKeys.capacity, 64, 'premise: grown to 64 entries');
  t.ok(pastOptions > 100, `premise: ${pastOptions} marked messages of entries past maxTrackedKeys (of ${checked} checked)`);
  t.same(wrong.slice(0, 5), [], 'every marked message names its key\'s previous one');
});

t.test('memoryBytes stays within memoryBoundBytes whatever the options, as every slot fills', async (t) => {
  const cases = [
    { maxTopics: 1, maxTrackedKeys: 1, sketch: { width: 16, depth: 1 }, maxPartitions: 1 },
    { maxTopics: 100, maxPartitions: 12 },
    { maxTopics: 40, maxTrackedKeys: 3000, sketch: { width: 5000, depth: 3 }, maxPartitions: 300 },
    { maxTopics: 200, maxTrackedKeys: 1 << 18, maxPartitions: 4 },
  ];
  for (const o of cases) {
    const p = new DynamicPartitioner(o);
    const bound = p.stats().memoryBoundBytes;
    let worst = 0;
    for (let i = 0; i < o.maxTopics; i++) {
      p.partition(`t${i}`, `k${i}`, Math.min(4, o.maxPartitions));
      worst = Math.max(worst, p.stats().memoryBytes - bound);
    }
    t.equal(Object.keys(p.stats().topics).length, o.maxTopics, `premise: ${o.maxTopics} topics with state`);
    t.ok(worst <= 0, `${JSON.stringify(o)}: ${p.stats().memoryBytes} bytes, never above the bound ${bound}`);
  }
});
