'use strict';
// Memory is bounded: 10 million distinct keys (8-byte Buffers rewritten in place, fed with
// partitionBatch through one reused array) leave stats().memoryBytes exactly where it was
// once the topic got its state (its first batch: memory grows with topics, never with keys),
// and hotKeys() never holds more than maxTrackedKeys keys,
// although more keys than that are hot enough to qualify.
const t = require('tap');
const { DynamicPartitioner, partitionForKey } = require('../..');

const N = 48;
const BATCH = 4096;

function run({ messages, options, warmKeys, warmEvery }) {
  const p = new DynamicPartitioner(options);
  let initial = 0;
  const hot = new Set();
  let maxHot = 0;
  let hotEvents = 0;
  p.on('hot', (h) => { hot.add(h.key); hotEvents++; maxHot = Math.max(maxHot, hot.size); });
  p.on('cooled', (h) => hot.delete(h.key));
  // One ArrayBuffer holds the bytes of a batch's distinct keys; the Buffers are views on it.
  const bytes = Buffer.alloc(BATCH * 8);
  const views = Array.from({ length: BATCH }, (_, j) => bytes.subarray(j * 8, j * 8 + 8));
  const keys = new Array(BATCH);
  let counter = 0;
  let warm = 0;
  let maxListed = 0;
  let checkedDistinct = 0;
  let wrongDistinct = 0;
  const started = process.hrtime.bigint();
  for (let done = 0; done < messages; done += BATCH) {
    for (let j = 0; j < BATCH; j++) {
      if (warmKeys && j % warmEvery === 0) { keys[j] = warmKeys[warm++ % warmKeys.length]; continue; }
      const c = counter++;
      bytes.writeUInt32BE(c >>> 0, j * 8);
      bytes.writeUInt32BE(0x6b657900 | (Math.floor(c / 2 ** 32) & 0xff), j * 8 + 4);
      keys[j] = views[j];
    }
    const out = p.partitionBatch('t', keys, N);
    if (done === 0) initial = p.stats().memoryBytes;
    if ((done / BATCH) % 200 === 0) {
      maxListed = Math.max(maxListed, p.hotKeys('t').length);
      // A few of the distinct keys of this batch: never hot, so at their normal partition.
      for (let j = 1; j < BATCH; j += 409) {
        if (keys[j] === views[j]) { checkedDistinct++; if (out[j] !== partitionForKey(views[j], N)) wrongDistinct++; }
      }
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { p, initial, counter, maxHot, maxListed, hotEvents, seconds, checkedDistinct, wrongDistinct, hot };
}

t.test('10M distinct keys: memory unchanged, hot keys bounded', async (t) => {
  const messages = 12_505_088; // every 5th message is a warm key: 10M distinct keys (whole batches)
  const warmKeys = Array.from({ length: 40 }, (_, i) => `warm-${i}`); // 40 keys x 0.5% each = 0.24 fair shares
  const r = run({ messages, options: { maxTrackedKeys: 16 }, warmKeys, warmEvery: 5 });
  t.comment(`${r.counter} distinct keys + ${messages - r.counter} warm-key messages in ${r.seconds.toFixed(1)} s ` +
    `(${(r.seconds / (messages / 1e6)).toFixed(2)} s per million)`);
  t.ok(r.counter >= 10_000_000, `premise: ${r.counter} distinct keys`);
  t.equal(r.p.stats().memoryBytes, r.initial, `memoryBytes ${r.initial} unchanged`);
  t.ok(r.hotEvents > 0 && r.maxHot > 0, `premise: keys turned hot (${r.hotEvents} events)`);
  t.ok(r.maxHot <= 16, `at most maxTrackedKeys (16) hot at once, by the events (max ${r.maxHot}; 40 keys qualify)`);
  t.ok(r.maxListed <= 16 && r.p.hotKeys('t').length <= 16, `hotKeys() at most 16 long (max seen ${r.maxListed})`);
  t.equal(r.p.stats().topics.t.hotKeys, r.hot.size, 'stats().hotKeys agrees with the events');
  t.ok(r.checkedDistinct > 100, `premise: ${r.checkedDistinct} distinct keys checked`);
  t.equal(r.wrongDistinct, 0, 'distinct keys stay at their normal partition');
});

t.test('default options, 2M distinct keys only: memory unchanged, nothing hot', async (t) => {
  const r = run({ messages: 2_000_000, options: {} });
  t.equal(r.p.stats().memoryBytes, r.initial, `memoryBytes ${r.initial} unchanged`);
  t.equal(r.hotEvents, 0, 'a key seen once is never hot');
  t.equal(r.p.hotKeys('t').length, 0);
  t.equal(r.wrongDistinct, 0, 'distinct keys stay at their normal partition');
  // The memory is what one topic needs, not more: sketch + table + the topic's page, under 1 MiB
  // (the bound, with maxTopics topics, is more: scale.test.js).
  t.ok(r.initial < 1024 * 1024, `memoryBytes ${r.initial} < 1 MiB with the defaults and one topic`);
  t.ok(r.initial <= r.p.stats().memoryBoundBytes, `within the stated bound ${r.p.stats().memoryBoundBytes}`);
});
