'use strict';
// Null keys. With a *_random base (which does not decide a null key), null-key messages go
// in sticky runs of stickyRun messages, each run on the least loaded partition (decayed
// load + penalty x fair share, the loads here computed independently with the load
// half-life). With a deterministic base, a null key is the empty key: it goes to
// partitionForKey(null, n, base), unless it is hot.
const t = require('tap');
const { DynamicPartitioner, partitionForKey, allowedPartitions } = require('../..');
const { DecayedCounts, prng, keyNames } = require('./lib/helpers');

const N = 12;
const LOAD_HALF_LIFE = 10_000; // DEFAULTS.loadHorizon

/**
 * Feeds `stream` (keys; null / undefined are null keys) to a fresh partitioner, keeping
 * exact decayed loads. For every null-key message that starts a run, records whether the
 * chosen partition was (within 1e-9) a least loaded one. `hook(i, p)` runs before message i.
 */
function runNulls(stream, { options = {}, n = N, hook = () => {}, penalties = new Float64Array(n) } = {}) {
  const p = new DynamicPartitioner({ loadHorizon: { messages: LOAD_HALF_LIFE }, ...options });
  const loads = new DecayedCounts(n, LOAD_HALF_LIFE);
  const run = p.options.stickyRun;
  const out = new Int32Array(stream.length);
  const starts = []; // { i, chosen, value, min, argmins }
  let nulls = 0;
  for (let i = 0; i < stream.length; i++) {
    hook(i, p, penalties, out);
    const key = stream[i];
    const isNull = key == null;
    let before = null;
    if (isNull && nulls % run === 0) {
      // Loads before this message; the fair share counts it (the topic total includes it).
      const fair = (loads.total(i) + 1) / n;
      before = Array.from({ length: n }, (_, q) => loads.get(q, i) + penalties[q] * fair);
    }
    const q = p.partition('t', key, n);
    out[i] = q;
    if (isNull) {
      if (before) {
        const min = Math.min(...before);
        starts.push({ i, chosen: q, ok: before[q] <= min * (1 + 1e-9) + 1e-9, value: before[q], min });
      }
      nulls++;
    }
    loads.add(q, i);
  }
  return { p, out, starts, run };
}

/** Checks that null messages come in blocks of `run` on one partition each. */
function runsOf(stream, out, run) {
  const blocks = [];
  let nulls = 0;
  for (let i = 0; i < stream.length; i++) {
    if (stream[i] != null) continue;
    const b = Math.floor(nulls / run);
    if (blocks.length === b) blocks.push(new Set());
    blocks[b].add(out[i]);
    nulls++;
  }
  return blocks;
}

t.test('murmur2_random: null keys in runs of stickyRun, each run on the least loaded partition', async (t) => {
  const stream = Array.from({ length: 40 * 256 }, (_, i) => (i % 3 ? null : undefined));
  const { out, starts, run } = runNulls(stream);
  t.equal(run, 256, 'the default run');
  const blocks = runsOf(stream, out, run);
  t.equal(blocks.length, 40);
  t.ok(blocks.every((b) => b.size === 1), 'each run of 256 on one partition');
  const used = new Set(blocks.map((b) => [...b][0]));
  t.equal(used.size, N, 'the runs visit every partition');
  const bad = starts.filter((s) => !s.ok);
  t.equal(starts.length, 40);
  t.same(bad.slice(0, 3), [], 'each run starts on a least loaded partition');
  // With null keys only, the first N runs go to N different (empty) partitions, and then
  // each run to the partition whose run is oldest.
  const first = blocks.slice(0, N).map((b) => [...b][0]);
  t.equal(new Set(first).size, N, 'the first 12 runs on 12 different partitions');
  for (let r = N; r < 40; r++) t.equal([...blocks[r]][0], [...blocks[r - N]][0], `run ${r} where run ${r - N} was`);
  t.ok(out.every((q) => q >= 0 && q < N), 'never -1');
});

t.test('runs count null messages only; keyed messages in between do not cut them, and shift the load', async (t) => {
  const rand = prng(41);
  const names = keyNames(3000, 'c-');
  const stream = [];
  for (let i = 0; i < 60_000; i++) {
    const u = rand();
    stream.push(u < 0.3 ? null : u < 0.4 ? 'hot-key' : names[Math.floor(rand() * names.length)]);
  }
  const { out, starts, run, p } = runNulls(stream, { options: { stickyRun: 100 } });
  t.equal(run, 100);
  const blocks = runsOf(stream, out, run);
  t.ok(blocks.slice(0, -1).every((b) => b.size === 1), `each of ${blocks.length} runs of 100 null messages on one partition`);
  const bad = starts.filter((s) => !s.ok);
  t.same(bad.slice(0, 3), [], `each of ${starts.length} runs starts on a least loaded partition`);
  t.ok(p.hotKeys('t').some((h) => h.key === 'hot-key'), 'premise: a keyed hot key was spread meanwhile');
  for (let i = 0; i < stream.length; i++) {
    if (stream[i] !== null && stream[i] !== 'hot-key' && out[i] !== partitionForKey(stream[i], N)) {
      t.fail(`cold key moved at ${i}`);
      break;
    }
  }
});

t.test('penalties steer the next run', async (t) => {
  const stream = new Array(30 * 256).fill(null);
  const target = 7;
  const avoided = [];
  const { out, starts } = runNulls(stream, {
    hook(i, p, penalties, out) {
      // Runs 12..17: every partition but 7 carries a large penalty: all go to 7.
      if (i === 12 * 256) for (let q = 0; q < N; q++) if (q !== target) { p.setPartitionPenalty('t', q, 100); penalties[q] = 100; }
      if (i === 18 * 256) for (let q = 0; q < N; q++) { p.setPartitionPenalty('t', q, 0); penalties[q] = 0; }
      // Runs 24..29: the partition the next run would take (its run is the oldest) is
      // penalised: it must not be chosen.
      if (i >= 24 * 256 && i % 256 === 0) {
        // The partition whose last run is the oldest (the least loaded without penalty).
        const age = new Array(N).fill(-1);
        for (let j = 0; j < i; j += 256) age[out[j]] = j;
        const oldest = age.indexOf(Math.min(...age));
        p.setPartitionPenalty('t', oldest, 5);
        penalties.fill(0);
        penalties[oldest] = 5;
        for (let q = 0; q < N; q++) if (q !== oldest) p.setPartitionPenalty('t', q, 0);
        avoided.push(oldest);
      }
    },
  });
  for (let r = 12; r < 18; r++) t.equal(out[r * 256], target, `run ${r} on partition ${target}`);
  t.ok(out.slice(12 * 256, 18 * 256).every((q) => q === target), 'all of them');
  for (let r = 24; r < 30; r++) t.not(out[r * 256], avoided[r - 24], `run ${r} avoids the penalised partition ${avoided[r - 24]}`);
  const bad = starts.filter((s) => !s.ok);
  t.same(bad.slice(0, 3), [], 'every run on a least loaded partition, penalty included');
});

t.test('a run ends early when the partition count changes', async (t) => {
  const p = new DynamicPartitioner();
  const a = [];
  for (let i = 0; i < 100; i++) a.push(p.partition('t', null, 4));
  t.equal(new Set(a).size, 1, 'one partition for the first 100');
  const b = [];
  for (let i = 0; i < 300; i++) b.push(p.partition('t', null, 8));
  t.ok(b.every((q) => q >= 0 && q < 8), 'within the new count');
  t.equal(new Set(b.slice(0, 256)).size, 1, 'a fresh run of 256 after the change');
  // After a resize every partition's load restarts at the mean (assembly/spread.ts
  // topicResize), so the first new run may go anywhere; the next one must avoid it.
  t.not(b[256], b[0], 'the run after that on another partition');
});

t.test('murmur2 base: a null key is the empty key, at partitionForKey(null, n, "murmur2") unless hot', async (t) => {
  const normal = partitionForKey(null, N, 'murmur2');
  t.equal(normal, partitionForKey('', N, 'murmur2'), 'null is the empty key');
  t.ok(normal >= 0);
  // Rare null keys (0.1% = 0.012 fair shares of 12 partitions): never hot, always normal.
  const rand = prng(42);
  const names = keyNames(4000, 'c-');
  const p = new DynamicPartitioner({ partitioner: 'murmur2' });
  let nulls = 0;
  let wrong = 0;
  for (let i = 0; i < 100_000; i++) {
    if (rand() < 0.001) {
      nulls++;
      if (p.partition('t', i % 2 ? null : undefined, N) !== normal) wrong++;
    } else p.partition('t', names[Math.floor(rand() * names.length)], N);
  }
  t.ok(nulls > 50, `premise: ${nulls} null messages`);
  t.equal(wrong, 0, 'all on the normal partition');

  // Frequent null keys (30%): turn hot, then stay within allowedPartitions(null, n, w, 'murmur2').
  const q = new DynamicPartitioner({ partitioner: 'murmur2' });
  let hotEvent = null;
  q.on('hot', (h) => { if (h.key === null) hotEvent = h; });
  let beforeHot = 0;
  let wrongBefore = 0;
  let outside = 0;
  let after = 0;
  let moved = 0;
  for (let i = 0; i < 50_000; i++) {
    const isNull = rand() < 0.3;
    const wasHot = hotEvent !== null;
    const r = q.partition('t', isNull ? null : names[Math.floor(rand() * names.length)], N);
    if (!isNull) continue;
    if (!wasHot) { beforeHot++; if (r !== normal) wrongBefore++; continue; }
    const h = q.hotKeys('t').find((x) => x.key === null);
    after++;
    if (!allowedPartitions(null, N, h.partitions, 'murmur2').includes(r)) outside++;
    if (r !== normal) moved++;
  }
  t.ok(hotEvent, 'the null key turned hot');
  t.equal(hotEvent && hotEvent.key, null, 'reported as null');
  t.ok(beforeHot > 10, `premise: ${beforeHot} null messages before it turned hot`);
  t.equal(wrongBefore, 0, 'before: all on the normal partition');
  t.ok(after > 1000 && moved > after / 2, `after: ${moved} of ${after} moved`);
  t.equal(outside, 0, 'after: all inside allowedPartitions(null, n, w, "murmur2")');
});

t.test('other bases: consistent_random treats the empty key as undecided (sticky); consistent hashes null as empty', async (t) => {
  const p = new DynamicPartitioner({ partitioner: 'consistent_random' });
  const out = [];
  for (let i = 0; i < 512; i++) out.push(p.partition('t', i % 2 ? '' : null, N));
  t.ok(out.every((q) => q >= 0 && q < N), 'never -1');
  t.equal(new Set(out.slice(0, 256)).size, 1, 'one run of 256 for empty and null keys alike');
  t.equal(new Set(out.slice(256)).size, 1, 'and the next');
  t.not(out[0], out[256], 'the second run on another (less loaded) partition');
  const c = new DynamicPartitioner({ partitioner: 'consistent' });
  t.equal(partitionForKey(null, N, 'consistent'), 0, 'crc32 of nothing is 0');
  const got = new Set();
  for (let i = 0; i < 100; i++) got.add(c.partition('t', null, N));
  t.same([...got], [0], 'consistent: a null key goes to partition 0 (while not hot)');
});
