'use strict';
// stats().trackedKeys: how full the table of exactly counted keys is, and how many keys it
// refused because it was full of stronger ones — the signal to raise maxTrackedKeys.
const t = require('tap');
const { DynamicPartitioner } = require('../..');

t.test('a table big enough refuses nothing', async (t) => {
  const p = new DynamicPartitioner();
  for (let i = 0; i < 20_000; i++) p.partition('t', i % 3 === 0 ? `hot-${i % 5}` : `cold-${i}`, 12);
  const s = p.stats().trackedKeys;
  t.equal(s.capacity, 1024);
  t.equal(s.refused, 0, 'nothing refused');
  t.ok(s.tracked >= s.hot && s.hot === p.hotKeys('t').length, `${s.tracked} tracked, ${s.hot} hot (= hotKeys())`);
  t.ok(s.hot >= 1, 'premise: some key is hot');
});

t.test('more equally hot keys than the table holds: it fills, and the rest are counted as refused', async (t) => {
  // 8 entries; 40 keys each with 2.5% of the traffic (hot at 12 partitions: 0.1/12 = 0.83%).
  const p = new DynamicPartitioner({ maxTrackedKeys: 8, sketch: { sampling: 1 } });
  for (let i = 0; i < 50_000; i++) p.partition('t', `k-${i % 40}`, 12);
  const s = p.stats().trackedKeys;
  t.equal(s.capacity, 8);
  t.equal(s.tracked, 8, 'every entry in use');
  t.ok(s.refused > 0, `${s.refused} admissions refused`);
  t.equal(s.hot, p.hotKeys('t').length, 'hot = hotKeys()');
  t.ok(s.hot <= 8, `at most 8 hot (${s.hot}) although 40 keys are above the hot line`);
});
