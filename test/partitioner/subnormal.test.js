'use strict';
// Counts decay by renormalisation (each stored value multiplied by 1 / weight when the
// weight passes 2^30). A partition or key that stops receiving messages must go to 0, not
// through the subnormal floating-point range, where arithmetic is many times slower.
// With a half-life of 1 message the weights double every message, so values fall by 2^-30
// every 30 messages and would be subnormal (below 2^-1022) within about 1,000 messages.
const t = require('tap');
const { DynamicPartitioner } = require('../..');
const { E_COUNT, ENTRY_SHIFT, T_PAGE } = require('../../build/core/abi');

const MIN_NORMAL = 2.2250738585072014e-308;

t.test('no stored load, total or count becomes subnormal', async (t) => {
  const p = new DynamicPartitioner({ horizon: { messages: 1 }, loadHorizon: { messages: 1 }, spread: false });
  const x = p.core.exports;
  const first = p.partition('t', 'idle', 48); // the topic gets slot 0 and its page (assembly/topics.ts)
  const loads = p.core.i32[(x.topicRecordsPtr() + T_PAGE) >> 2] >> 3;
  const counts = (x.entriesPtr() + E_COUNT) >> 3;
  const stride = (1 << ENTRY_SHIFT) >> 3;
  const f64 = p.core.f64;
  const bad = [];
  const subnormal = (v) => v !== 0 && Math.abs(v) < MIN_NORMAL;
  let zeroAt = -1;
  for (let i = 0; i < 3000; i++) {
    p.partition('t', 'busy', 48);
    for (let q = 0; q < 48; q++) if (subnormal(f64[loads + q])) bad.push(`load of partition ${q} after ${i} messages: ${f64[loads + q]}`);
    for (let e = 0; e < p.options.maxTrackedKeys; e++) if (subnormal(f64[counts + e * stride])) bad.push(`count of entry ${e}: ${f64[counts + e * stride]}`);
    if (zeroAt < 0 && f64[loads + first] === 0) zeroAt = i;
  }
  t.not(first, p.partition('t', 'busy', 48), 'premise: the two keys have different partitions');
  t.same(bad.slice(0, 5), [], 'no subnormal value');
  t.ok(zeroAt > 0 && zeroAt < 3000, `the idle partition's load reached exactly 0 (after ${zeroAt} messages)`);
});
