'use strict';
// Cold keys are never moved: over long Zipf runs, every message whose key was not hot at
// that moment goes to partitionForKey(key, n, base), the partition Kafka / librdkafka
// would pick (partitionForKey is checked against them in test/core/differential.test.js and
// test/core/java-crosscheck.test.js). The hot set is followed through the 'hot' / 'cooled' events.
const t = require('tap');
const { DynamicPartitioner, partitionForKeys } = require('../..');
const { zipfIndexes, keyNames } = require('./lib/helpers');

const MESSAGES = 1_000_000;
const KEYS = 100_000;
const N = 48;
const names = keyNames(KEYS);

/** Penalties change during the run (before the message or batch that covers steps 300k, 600k): they steer hot keys, never cold keys. */
function penaltyAt(from, p, to = from + 1) {
  const covers = (step) => from <= step && step < to;
  if (covers(300_000)) p.setPartitionPenalty('t', 5, 2);
  if (covers(600_000)) { p.setPartitionPenalty('t', 5, 0); p.setPartitionPenalty('t', 40, 0.5); }
}

t.test('single calls, murmur2_random, Zipf 1.1: every message is checked exactly', async (t) => {
  const idx = zipfIndexes(1.1, KEYS, MESSAGES, 31);
  const normal = partitionForKeys(names, N, 'murmur2_random');
  const p = new DynamicPartitioner();
  const hot = new Set();
  const everHot = new Set();
  p.on('hot', (h) => { hot.add(h.key); everHot.add(h.key); });
  p.on('cooled', (h) => hot.delete(h.key));
  let checked = 0;
  let wrong = 0;
  let moved = 0;
  let example = '';
  for (let i = 0; i < MESSAGES; i++) {
    penaltyAt(i, p);
    const k = idx[i];
    const wasHot = hot.has(names[k]);
    const q = p.partition('t', names[k], N);
    if (wasHot) { if (q !== normal[k]) moved++; continue; }
    checked++;
    if (q !== normal[k]) { wrong++; if (!example) example = `message ${i}: ${names[k]} went to ${q}, not ${normal[k]}`; }
  }
  t.comment(`${checked} cold messages checked; ${MESSAGES - checked} of hot keys (${moved} moved); ${everHot.size} keys were hot at some point`);
  t.ok(moved > 100_000 && everHot.size > 20, 'premise: hot keys were spread');
  t.ok(checked > 250_000, 'premise: many messages were of cold keys');
  t.equal(wrong, 0, `no cold message moved ${example}`);
});

for (const [base, exponent] of [['consistent_random', 1.0], ['fnv1a', 1.2], ['murmur2_random', 1.2]]) {
  t.test(`partitionBatch, ${base}, Zipf ${exponent}: every message of a key cold for its whole batch`, async (t) => {
    // A batch's events come after the batch, so a key that turned hot or cooled inside a
    // batch is skipped for that batch; every other key was cold or hot throughout.
    const idx = zipfIndexes(exponent, KEYS, MESSAGES, 32);
    const normal = partitionForKeys(names, N, base);
    const p = new DynamicPartitioner({ partitioner: base });
    const hot = new Set();
    const changed = new Set();
    const everHot = new Set();
    p.on('hot', (h) => { changed.add(h.key); hot.add(h.key); everHot.add(h.key); });
    p.on('cooled', (h) => { changed.add(h.key); hot.delete(h.key); });
    const batch = 1024;
    let checked = 0;
    let skipped = 0;
    let wrong = 0;
    let example = '';
    for (let start = 0; start < MESSAGES; start += batch) {
      const size = Math.min(batch, MESSAGES - start);
      penaltyAt(start, p, start + size);
      const before = new Set(hot);
      changed.clear();
      const keys = new Array(size);
      for (let j = 0; j < size; j++) keys[j] = names[idx[start + j]];
      const out = p.partitionBatch('t', keys, N);
      for (let j = 0; j < size; j++) {
        const key = keys[j];
        if (before.has(key) || changed.has(key)) { skipped++; continue; }
        checked++;
        const k = idx[start + j];
        if (out[j] !== normal[k]) { wrong++; if (!example) example = `message ${start + j}: ${key} went to ${out[j]}, not ${normal[k]}`; }
      }
    }
    t.equal(checked + skipped, MESSAGES, 'every message accounted for');
    t.comment(`${checked} cold messages checked, ${skipped} of hot (or changing) keys; ${everHot.size} keys were hot at some point`);
    t.ok(everHot.size > 20 && skipped > 100_000, 'premise: there were hot keys');
    t.ok(checked > 250_000, 'premise: many cold messages');
    t.equal(wrong, 0, `no cold message moved ${example}`);
  });
}
