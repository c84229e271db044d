'use strict';
// 'hot' and 'cooled' payloads: the key as given (a string) or a copy of its bytes (Buffer /
// Uint8Array, also from partitionBatch), the topic, the share at that moment (checked
// against the exact count), partitions 1 at turning hot and at cooling.
const t = require('tap');
const { DynamicPartitioner } = require('../..');
const { DecayedCounts } = require('./lib/helpers');

const N = 12;

t.test('a Buffer key is reported as a copy of its bytes', async (t) => {
  for (const [label, make] of [
    ['Buffer', () => Buffer.from('hot-buffer-key')],
    ['Uint8Array', () => new Uint8Array(Buffer.from('hot-buffer-key'))],
    ['Buffer view into a larger buffer', () => Buffer.from('xxxxhot-buffer-keyyyyy').subarray(4, 18)],
  ]) {
    for (const batch of [false, true]) {
      const p = new DynamicPartitioner();
      const events = [];
      p.on('hot', (h) => events.push(h));
      p.on('cooled', (h) => events.push(h));
      const key = make();
      for (let i = 0; i < 2000; i++) {
        const k = i % 2 ? key : `c-${i}`;
        if (batch) p.partitionBatch('t', [k], N); else p.partition('t', k, N);
      }
      const what = `${label}${batch ? ', partitionBatch' : ''}`;
      t.equal(events.length, 1, `${what}: one event`);
      const e = events[0];
      t.ok(Buffer.isBuffer(e.key), `${what}: a Buffer`);
      t.not(e.key, key, `${what}: not the caller's object`);
      t.equal(e.key.toString(), 'hot-buffer-key', `${what}: the key's bytes only`);
      key.fill(0); // the caller reuses its buffer
      t.equal(e.key.toString(), 'hot-buffer-key', `${what}: unaffected by later changes to the caller's buffer`);
      t.equal(p.hotKeys('t')[0].key.toString(), 'hot-buffer-key', `${what}: hotKeys() too`);
    }
  }
});

t.test('payloads: topic, share, partitions and reason, at turning hot and at cooling', async (t) => {
  const H = 2000;
  // sampling 1: estimates never below the truth (sampling.test.js covers the default).
  const p = new DynamicPartitioner({ horizon: { messages: H }, sketch: { sampling: 1 } });
  const ref = new DecayedCounts(1, H);
  const events = [];
  let now = 0;
  p.on('hot', (h) => events.push({ ...h, type: 'hot', exact: ref.share(0, now) }));
  p.on('cooled', (h) => events.push({ ...h, type: 'cooled', exact: ref.share(0, now) }));
  const key = 'string-key';
  // 25% for 10 half-lives, then none for 10.
  for (; now < 40_000; now++) {
    const isKey = now < 20_000 && now % 4 === 0;
    if (isKey) ref.add(0, now); else ref.addOther(now);
    p.partition('orders', isKey ? key : `c-${now % 3000}`, N);
  }
  const mine = events.filter((e) => e.key === key);
  t.same(mine.map((e) => e.type), ['hot', 'cooled']);
  const [hot, cooled] = mine;
  t.equal(hot.topic, 'orders');
  t.equal(hot.key, key, 'the string as given');
  t.equal(hot.partitions, 1, 'partitions 1 at turning hot (its message went to its own partition)');
  t.equal(hot.reason, 'share');
  t.ok(hot.share > p.options.hotThreshold / N, `share ${hot.share} above the hot line`);
  t.ok(hot.share >= hot.exact * (1 - 1e-9) && hot.share <= hot.exact + Math.E / p.options.sketch.width,
    `share ${hot.share} ~ exact ${hot.exact} (never below, within the sketch bound)`);
  t.equal(cooled.topic, 'orders');
  t.equal(cooled.partitions, 1, 'partitions 1 at cooling');
  t.ok(cooled.share < p.options.coolThreshold / N, `share ${cooled.share} below the cooling line`);
  t.ok(Math.abs(cooled.share - cooled.exact) <= 1e-6, `share ${cooled.share} ~ exact ${cooled.exact}`);
  t.same(p.hotKeys('orders').filter((h) => h.key === key), [], 'gone from hotKeys()');
});
