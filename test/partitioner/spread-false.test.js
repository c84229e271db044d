'use strict';
// spread: false detects and reports hot keys (hotKeys(), 'hot' events) but never moves a
// message: every key, hot or not, goes to partitionForKey(key, n, base).
const t = require('tap');
const { DynamicPartitioner, partitionForKeys } = require('../..');
const { zipfIndexes, keyNames, DecayedCounts } = require('./lib/helpers');

const N = 48;
const KEYS = 20_000;
const MESSAGES = 300_000;
const names = keyNames(KEYS);

for (const base of ['murmur2_random', 'fnv1a']) {
  t.test(`${base}: hot keys reported, every message at its normal partition`, async (t) => {
    const idx = zipfIndexes(1.1, KEYS, MESSAGES, 51);
    const normal = partitionForKeys(names, N, base);
    const p = new DynamicPartitioner({ partitioner: base, spread: false });
    const ref = new DecayedCounts(KEYS, p.options.horizon.messages);
    const hotEvents = [];
    let cooledEvents = 0;
    p.on('hot', (h) => hotEvents.push(h));
    p.on('cooled', () => cooledEvents++);
    let moved = 0;
    let example = '';
    const batch = 1000;
    for (let start = 0; start < MESSAGES; start += batch) {
      const keys = [];
      for (let j = start; j < start + batch; j++) keys.push(names[idx[j]]);
      // Half of the run through single calls, half through batches.
      const out = start % 2000 === 0 ? p.partitionBatch('t', keys, N) : Int32Array.from(keys, (k) => p.partition('t', k, N));
      for (let j = 0; j < batch; j++) {
        ref.add(idx[start + j], start + j);
        if (out[j] !== normal[idx[start + j]]) { moved++; if (!example) example = `: ${keys[j]} went to ${out[j]}`; }
      }
    }
    t.equal(moved, 0, `no message left its normal partition${example}`);
    const hot = p.hotKeys('t');
    t.comment(`${hotEvents.length} hot events, ${cooledEvents} cooled; ${hot.length} hot at the end`);
    t.ok(hotEvents.length >= 10, 'hot events were emitted');
    t.ok(hotEvents.every((h) => h.partitions === 1), 'hot payloads have partitions 1');
    t.ok(hot.length >= 10 && hot.every((h) => h.partitions === 1), 'hotKeys() reports them, with partitions 1');
    t.equal(p.stats().topics.t.hotKeys, hot.length, 'stats() counts them');
    // Every key whose exact share is clearly above the hot line is reported, and every
    // key reported for its share is above the cooling line.
    const now = MESSAGES - 1;
    const reported = new Set(hot.map((h) => h.key));
    const o = p.options;
    for (let k = 0; k < KEYS; k++) {
      const share = ref.share(k, now);
      if (share > 1.05 * o.hotThreshold / N && !reported.has(names[k])) t.fail(`${names[k]} (share ${share}) not reported`);
    }
    for (const h of hot) {
      const share = ref.share(Number(h.key.slice(4)), now);
      if (h.reason === 'share') t.ok(share > o.coolThreshold / N, `${h.key}: exact share ${share.toExponential(3)} above the cooling line`);
      t.ok(Math.abs(h.share - share) <= 1e-3 * share + 1e-6, `${h.key}: reported share ${h.share.toExponential(4)} ~ exact ${share.toExponential(4)}`);
    }
  });
}

t.test('the same stream with spread: true does move messages (the test above is not vacuous)', async (t) => {
  const idx = zipfIndexes(1.1, KEYS, 100_000, 51);
  const normal = partitionForKeys(names, N);
  const p = new DynamicPartitioner({ spread: true });
  let moved = 0;
  for (let i = 0; i < idx.length; i++) if (p.partition('t', names[idx[i]], N) !== normal[idx[i]]) moved++;
  t.ok(moved > 10_000, `${moved} messages moved`);
});

t.test('spread: false still puts null keys (not decided by murmur2_random) in sticky runs', async (t) => {
  const p = new DynamicPartitioner({ spread: false, stickyRun: 50 });
  const out = [];
  for (let i = 0; i < 500; i++) out.push(p.partition('t', null, N));
  t.ok(out.every((q) => q >= 0 && q < N), 'valid partitions');
  for (let r = 0; r < 10; r++) t.equal(new Set(out.slice(r * 50, r * 50 + 50)).size, 1, `run ${r} on one partition`);
  t.equal(new Set(out).size, 10, 'ten runs on ten partitions');
});
