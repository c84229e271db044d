'use strict';
// A topic's partition count changes mid-stream (12 -> 24 -> 12): no error; cold keys
// follow partitionForKey(key, new n) from the first message on; hot keys stay hot and
// within allowedPartitions(key, new n, w). A count above maxPartitions is a RangeError
// (OutOfRangeError) naming numPartitions, and leaves the topic as it was.
const t = require('tap');
const { DynamicPartitioner, partitionForKey, allowedPartitions, OutOfRangeError } = require('../..');
const { zipfIndexes, keyNames, DecayedCounts } = require('./lib/helpers');

const names = keyNames(20_000);

for (const base of ['murmur2_random', 'fnv1a']) {
  t.test(`${base}: 12 -> 24 -> 12 partitions mid-stream`, async (t) => {
    const idx = zipfIndexes(1.1, names.length, 150_000, 61);
    // Split keys (relocate: false): a relocated key has width 1 on a partition of its choice.
    const p = new DynamicPartitioner({ partitioner: base, relocate: false });
    const ref = new DecayedCounts(names.length, p.options.horizon.messages);
    const hot = new Set();
    const cooledAtChange = [];
    let changing = false;
    p.on('hot', (h) => hot.add(h.key));
    p.on('cooled', (h) => { hot.delete(h.key); if (changing) cooledAtChange.push(h.key); });
    const phases = [[0, 12], [50_000, 24], [100_000, 12]];
    const stats = { cold: 0, coldWrong: 0, hot: 0, hotOutside: 0, hotMoved: 0 };
    const perPhase = [];
    let example = '';
    let hotBefore = null;
    for (let ph = 0; ph < phases.length; ph++) {
      const [from, n] = phases[ph];
      const to = ph + 1 < phases.length ? phases[ph + 1][0] : idx.length;
      const seen = { cold: 0, hot: 0, hotMoved: 0 };
      if (ph > 0) {
        hotBefore = new Set(hot);
        changing = true;
      }
      for (let i = from; i < to; i++) {
        const key = names[idx[i]];
        const wasHot = hot.has(key);
        const q = p.partition('t', key, n);
        ref.add(idx[i], i);
        changing = false;
        if (!wasHot) {
          stats.cold++; seen.cold++;
          if (q !== partitionForKey(key, n, base)) { stats.coldWrong++; if (!example) example = `${key} at ${i} -> ${q} with n=${n}`; }
          continue;
        }
        const h = p.hotKeys('t').find((x) => x.key === key);
        if (!h) continue; // cooled on this very message: it went to its own partition (checked as cold next time)
        stats.hot++; seen.hot++;
        const allowed = allowedPartitions(key, n, h.partitions, base);
        if (!allowed.includes(q)) { stats.hotOutside++; if (!example) example = `hot ${key} at ${i} -> ${q}, allowed [${allowed}]`; }
        if (q !== allowed[0]) { stats.hotMoved++; seen.hotMoved++; }
      }
      t.equal(p.stats().topics.t.partitions, n, `stats() reports ${n} partitions`);
      perPhase.push(seen);
      if (ph > 0) {
        // Counts are kept through a change; the lines are in fair shares of the new count.
        // Growing (12 -> 24) lowers them: every hot key stays hot. Shrinking (24 -> 12)
        // doubles them: a key hot before stays hot if its exact share is clearly above the
        // new cooling line, and has cooled if clearly below it.
        // (A 'relief' key cools at reliefThreshold / 2 instead of coolThreshold.)
        const o = p.options;
        const cool = o.coolThreshold / n;
        const reasons = new Map(p.hotKeys('t').map((h) => [h.key, h.reason]));
        let kept = 0;
        let above = 0;
        const wrong = [];
        for (const k of hotBefore) {
          const share = ref.share(Number(k.slice(4)), to - 1);
          if (share > 1.1 * cool) { above++; if (hot.has(k)) kept++; else wrong.push(`${k} cooled at ${share.toExponential(3)}`); }
          const line = reasons.get(k) === 'relief' ? o.reliefThreshold / 2 / n : cool;
          if (hot.has(k) && share < 0.9 * line) wrong.push(`${k} (${reasons.get(k)}) still hot at ${share.toExponential(3)}`);
        }
        if (n > phases[ph - 1][1]) t.equal(kept, above, `phase ${ph} (grown): all ${above} of the ${hotBefore.size} hot keys still above the cooling line are hot`);
        t.ok(kept > 5, `phase ${ph}: premise: ${kept} keys clearly above the cooling line`);
        t.same(wrong, [], `phase ${ph}: hot keys from before the change follow the cooling line for n=${n}`);
      }
    }
    t.comment(`per phase: ${JSON.stringify(perPhase)}`);
    t.same(cooledAtChange, [], 'no key cooled because of the change');
    t.ok(perPhase.every((s) => s.cold > 10_000 && s.hotMoved > 1000), 'premise: cold and moved hot messages in every phase');
    t.equal(stats.coldWrong, 0, `cold keys follow partitionForKey(key, n) for the current n ${example}`);
    t.equal(stats.hotOutside, 0, `hot keys stay within allowedPartitions(key, n, w) ${example}`);
  });
}

t.test('right after a change a hot key reports 1 partition until its next message', async (t) => {
  const p = new DynamicPartitioner();
  for (let i = 0; i < 5000; i++) p.partition('t', i % 2 ? 'H' : `c-${i}`, 12);
  const before = p.hotKeys('t').find((h) => h.key === 'H');
  t.ok(before && before.partitions > 1, `premise: H spread over ${before && before.partitions} partitions`);
  p.partition('t', 'c-x', 24);
  t.equal(p.hotKeys('t').find((h) => h.key === 'H').partitions, 1, 'its width is not known for 24 yet');
  const q = p.partition('t', 'H', 24);
  const h = p.hotKeys('t').find((x) => x.key === 'H');
  t.ok(h.partitions >= 2, `then ${h.partitions}`);
  t.ok(allowedPartitions('H', 24, h.partitions).includes(q), 'and the message is inside');
});

t.test('numPartitions above maxPartitions: OutOfRangeError naming numPartitions, nothing changed', async (t) => {
  const p = new DynamicPartitioner({ maxPartitions: 32 });
  for (const call of [
    () => p.partition('new', 'k', 33),
    () => p.partitionBatch('new', ['k'], 33),
  ]) {
    const err = t.throws(call, OutOfRangeError);
    t.ok(err instanceof RangeError, 'a RangeError');
    t.equal(err.code, 'KDP_OUT_OF_RANGE');
    t.equal(err.argument, 'numPartitions');
    t.match(err.message, /^numPartitions must be at most options\.maxPartitions \(32\), got number 33$/);
  }
  t.notOk('new' in p.stats().topics, 'no topic was created');
  t.equal(p.partition('t', 'k', 32), partitionForKey('k', 32), '32 is fine');
  t.throws(() => p.partition('t', 'k', 33), { argument: 'numPartitions', code: 'KDP_OUT_OF_RANGE' }, 'also for a resize');
  t.throws(() => p.partitionBatch('t', ['k'], 1000), { argument: 'numPartitions', code: 'KDP_OUT_OF_RANGE' });
  t.equal(p.stats().topics.t.partitions, 32, 'the topic keeps its count');
  t.equal(p.partition('t', 'k', 32), partitionForKey('k', 32), 'and works');
  // The default maxPartitions is 1024.
  const d = new DynamicPartitioner();
  t.throws(() => d.partition('t', 'k', 1025), { argument: 'numPartitions' });
  t.equal(d.partition('t', 'k', 1024), partitionForKey('k', 1024));
});

t.test('a topic without state (every slot busy) changes its count: its keys follow the new count, the topic with state is untouched', async (t) => {
  const p = new DynamicPartitioner({ maxTopics: 1 });
  p.on('warning', () => {});
  for (let i = 0; i < 1000; i++) p.partition('busy', names[i % 50], 12);
  const busy = p.stats().topics.busy;
  const keys = [...names.slice(0, 200), ...names.slice(0, 50).map((k) => Buffer.from(k))];
  for (const n of [12, 24, 7, 12]) {
    t.same(keys.map((k) => p.partition('other', k, n)), keys.map((k) => partitionForKey(k, n)), `${n} partitions: partitionForKey(key, ${n}) from the first message on`);
  }
  t.same(p.stats().topics, { busy }, 'the topic with state is as it was');
  t.equal(p.stats().topicsWithoutState, 1);
});
