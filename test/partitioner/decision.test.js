'use strict';
// decide(): the partition partition() gives, and in `partitioner.decision` what else was
// decided, read from the core's decision record. Checked against a twin fed the same stream
// through partition() (same partitions), and against what hotKeys() says of the key (its
// width) and the key itself (its zero byte). The by-products have no other public way out.
const t = require('tap');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { DynamicPartitioner, ORDER_NONE, ORDER_SPREAD, ORDER_MOVED } = require('../..');

function stream(messages, seed) {
  let x = seed;
  const rand = () => ((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32);
  return Array.from({ length: messages }, (_, i) => (rand() < 0.3 ? 'H' : i % 97 === 0 ? 'z\u0000' : `c-${Math.floor(rand() * 1e5)}`));
}

for (const relocate of [true, false]) {
  t.test(`relocate: ${relocate}: decide() agrees with partition() and with hotKeys()`, async (t) => {
    const keys = stream(60_000, 7);
    const n = 24;
    const a = new DynamicPartitioner({ relocate });
    const b = new DynamicPartitioner({ relocate });
    const d = b.decision;
    let differ = 0;
    let bad = 0;
    const kinds = new Map();
    for (const key of keys) {
      const p = a.partition('t', key, n);
      const q = b.decide('t', key, n);
      if (p !== q) differ++;
      if (b.decision !== d) bad++;
      if (d.partition !== q) bad++;
      kinds.set(d.order, (kinds.get(d.order) ?? 0) + 1);
      if (d.keyZero !== (key.includes('\u0000') ? 1 : 0)) bad++;
      if (d.order !== ORDER_NONE && d.entry < 0) bad++;
      if (d.order === ORDER_SPREAD) {
        const hot = b.hotKeys('t').find((h) => h.key === key);
        if (!hot || hot.partitions !== d.width || d.width < 2) bad++;
      } else if (d.width !== 1) bad++;
    }
    t.equal(differ, 0, 'the same partitions as partition()');
    t.equal(bad, 0, 'every decision record consistent with its key');
    // H (30% of 24 partitions) is too big for one: split, after its anchor, in both modes.
    t.ok((kinds.get(ORDER_SPREAD) ?? 0) + (kinds.get(ORDER_MOVED) ?? 0) > 1000, `premise: the hot key was placed (${[...kinds]})`);
  });
}

t.test("a 'hot' / 'cooled' listener that decides again does not change the decision record its call's caller reads", async (t) => {
  const keys = stream(60_000, 11);
  const n = 24;
  const p = new DynamicPartitioner();
  const d = p.decision;
  let nested = 0;
  const again = () => {
    nested++;
    // Another key, as a producer's send() from the listener would place it.
    p.decide('t', `nested-${nested}`, n);
  };
  p.on('hot', again);
  p.on('cooled', again);
  let bad = 0;
  let checked = 0;
  for (const key of keys) {
    const before = nested;
    const q = p.decide('t', key, n);
    if (nested === before) continue;
    checked++;
    if (d.partition !== q || d.keyZero !== (key.includes('\u0000') ? 1 : 0)) bad++;
  }
  t.ok(checked > 0, `premise: listeners decided again inside ${checked} calls`);
  t.equal(bad, 0, "each such call's record is its own key's: its partition and zero byte");
});

t.test('a key too long for the key region: order none, no entry, zero byte not known', async (t) => {
  const p = new DynamicPartitioner();
  const q = p.decide('t', 'x'.repeat(70_000), 12);
  t.same({ ...p.decision }, { partition: q, order: ORDER_NONE, entry: -1, width: 1, keyZero: -1 });
});

t.test('the public declarations have decide() and decision, not the old side channel', async (t) => {
  const dts = readFileSync(join(__dirname, '..', '..', 'build', 'partitioner', 'partitioner.d.ts'), 'utf8');
  t.match(dts, /decide\(topic: string/);
  t.match(dts, /get decision\(\): Decision/);
  for (const name of ['lastOrder', 'lastKeyZero', 'lastEntry', 'entryWidthOf', 'recentMessagesPerPartition']) t.notMatch(dts, name);
});
