'use strict';
// Determinism: the same options and the same stream give the same decisions, whether fed
// one message at a time or in batches; allowedPartitions is a fixed, documented sequence;
// and every message of a hot key lands inside it.
const t = require('tap');
const { DynamicPartitioner, partitionForKey, allowedPartitions } = require('../..');
const { zipfIndexes, keyNames, prng, keyId } = require('./lib/helpers');

const N = 48;

/** A mixed stream: Zipf-ranked string keys, some as Buffers, some null, a few very long. */
function mixedStream(messages, seed) {
  const names = keyNames(20_000);
  const idx = zipfIndexes(1.1, names.length, messages, seed);
  const rand = prng(seed + 1);
  const long = ['L'.repeat(70_000), Buffer.alloc(66_000, 7), 'M'.repeat(40_000)]; // longer than the key region; half of it
  const out = new Array(messages);
  for (let i = 0; i < messages; i++) {
    const u = rand();
    if (u < 0.03) out[i] = null;
    else if (u < 0.04) out[i] = undefined;
    else if (u < 0.2) out[i] = Buffer.from(names[idx[i]]);
    else if (u < 0.2003) out[i] = long[Math.floor(rand() * long.length)];
    else out[i] = names[idx[i]];
  }
  return out;
}

function eventLog(p) {
  const log = [];
  p.on('hot', (h) => log.push(['hot', h.topic, keyId(h.key), h.share, h.partitions, h.reason]));
  p.on('cooled', (h) => log.push(['cooled', h.topic, keyId(h.key), h.share, h.partitions, h.reason]));
  return log;
}

const normalise = (hot) => hot.map((h) => ({ ...h, key: keyId(h.key) }));

t.test('two instances with the same options and stream decide the same', async (t) => {
  const stream = mixedStream(150_000, 3);
  const options = { hotThreshold: 0.2, coolThreshold: 0.08, maxTrackedKeys: 256, stickyRun: 100 };
  const a = new DynamicPartitioner(options);
  const b = new DynamicPartitioner(options);
  const logA = eventLog(a);
  const logB = eventLog(b);
  const outA = new Int32Array(stream.length);
  const outB = new Int32Array(stream.length);
  for (const [p, out] of [[a, outA], [b, outB]]) {
    for (let i = 0; i < stream.length; i++) {
      const topic = i % 5 === 0 ? 'other' : 'main';
      if (i === 50_000) p.setPartitionPenalty('main', 3, 2);
      out[i] = p.partition(topic, stream[i], topic === 'main' ? N : 12);
    }
  }
  let differ = 0;
  for (let i = 0; i < stream.length; i++) if (outA[i] !== outB[i]) differ++;
  t.equal(differ, 0, `all ${stream.length} decisions equal`);
  t.ok(logA.length > 0, `events happened (${logA.length})`);
  t.same(logA, logB, 'the same events in the same order');
  t.same(normalise(a.hotKeys('main')), normalise(b.hotKeys('main')), 'the same hot keys');
  t.ok(a.hotKeys('main').length > 0, 'some keys are hot');
  t.same(a.stats(), b.stats(), 'the same stats');
  // The stream did move messages (otherwise equality would be trivial).
  let moved = 0;
  for (let i = 0; i < stream.length; i++) {
    const k = stream[i];
    if (i % 5 !== 0 && k != null && outA[i] !== partitionForKey(k, N)) moved++;
  }
  t.ok(moved > 1000, `${moved} messages left their normal partition`);
});

t.test('partitionBatch gives what the same single calls give on a fresh instance', async (t) => {
  const stream = mixedStream(60_000, 4);
  const single = new DynamicPartitioner({ maxTrackedKeys: 128 });
  const logS = eventLog(single);
  const expected = new Int32Array(stream.length);
  // Alternate topics and partition counts between chunks, as a producer would.
  const plan = [];
  for (let i = 0, c = 0; i < stream.length; c++) {
    const size = [1, 7, 1000, 5000, 4096, 4097, 333][c % 7];
    const end = Math.min(stream.length, i + size);
    plan.push({ start: i, end, topic: c % 3 === 2 ? 'b' : 'a', n: c % 3 === 2 ? 12 : N });
    i = end;
  }
  for (const { start, end, topic, n } of plan) for (let i = start; i < end; i++) expected[i] = single.partition(topic, stream[i], n);
  const batch = new DynamicPartitioner({ maxTrackedKeys: 128 });
  const logB = eventLog(batch);
  const got = new Int32Array(stream.length);
  for (const { start, end, topic, n } of plan) got.set(batch.partitionBatch(topic, stream.slice(start, end), n), start);
  let differ = 0;
  let first = -1;
  for (let i = 0; i < stream.length; i++) if (got[i] !== expected[i]) { differ++; if (first < 0) first = i; }
  t.equal(differ, 0, `all ${stream.length} decisions equal (first difference at ${first})`);
  t.same(logB.map((e) => e.slice(0, 3)), logS.map((e) => e.slice(0, 3)), `the same events (${logS.length})`);
  t.same(normalise(batch.hotKeys('a')), normalise(single.hotKeys('a')), 'the same hot keys');
  t.same(batch.stats(), single.stats(), 'the same stats');
});

t.test('allowedPartitions: stable, starts at the normal partition, distinct, prefix-consistent, an arithmetic sequence', async (t) => {
  const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
  const rand = prng(5);
  const keys = [...keyNames(40), '', Buffer.from([0, 255, 1]), 'ключ', '🔑'];
  for (let i = 0; i < 20; i++) keys.push(Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 40) }, () => Math.floor(rand() * 256))));
  let checked = 0;
  for (const base of ['murmur2_random', 'murmur2', 'consistent', 'fnv1a', 'fnv1a_random']) {
    for (const n of [1, 2, 3, 4, 12, 48, 97, 128, 1000]) {
      for (const key of keys) {
        const full = allowedPartitions(key, n, n, base);
        const normal = partitionForKey(key, n, base);
        if (full.length !== n || full[0] !== normal || new Set(full).size !== n || !full.every((p) => Number.isInteger(p) && p >= 0 && p < n)) {
          t.fail(`${base} n=${n} key ${keyId(key)}: ${JSON.stringify(full.slice(0, 10))}... normal ${normal}`);
          continue;
        }
        // normal, normal + step, normal + 2 step, ... (mod n), step coprime with n
        const step = n > 1 ? (full[1] - full[0] + n) % n : 1;
        let arithmetic = gcd(step, n) === 1;
        for (let i = 1; i < n; i++) if ((full[i] - full[i - 1] + n) % n !== step) arithmetic = false;
        if (!arithmetic) t.fail(`${base} n=${n} key ${keyId(key)}: not an arithmetic sequence with a step coprime with n`);
        // Prefix-consistent and stable, for every width; widths above n give all n.
        for (const w of [1, 2, 3, 5, 8, 9, 17, n - 1, n, n + 1, 5 * n]) {
          if (w < 1) continue;
          const a = allowedPartitions(key, n, w, base);
          const want = full.slice(0, Math.min(w, n));
          if (a.length !== want.length || a.some((p, i) => p !== want[i])) t.fail(`${base} n=${n} w=${w} key ${keyId(key)}: not a prefix`);
          checked++;
        }
      }
    }
  }
  t.ok(checked > 10_000, `${checked} (key, n, width, partitioner) combinations checked`);
  t.same(allowedPartitions('x', 12, 4), allowedPartitions('x', 12, 4, 'murmur2_random'), 'murmur2_random is the default');
  t.same(allowedPartitions(Buffer.from('x'), 12, 12), allowedPartitions('x', 12, 12), 'a string and its UTF-8 bytes are the same key');
  t.same(allowedPartitions(null, 12, 4), [], 'a null key has none under murmur2_random (it is not decided by its bytes)');
  t.same(allowedPartitions(null, 12, 4, 'murmur2'), allowedPartitions('', 12, 4, 'murmur2'), 'under murmur2 a null key is the empty key');
  t.same(allowedPartitions('', 12, 4, 'consistent_random'), [], 'an empty key has none under consistent_random');
});

t.test('allowedPartitions lists `width` partitions also for topics of more than 4096 partitions', async (t) => {
  // maxPartitions allows up to 2^20 partitions per topic; a hot key may then be allowed
  // more than 4096 of them, and a consumer must be able to list all of them.
  const n = 8192;
  for (const w of [4096, 4097, 6000, 8192]) {
    const a = allowedPartitions('k', n, w);
    t.equal(a.length, w, `allowedPartitions('k', ${n}, ${w}) has ${w} entries (got ${a.length})`);
  }
  // The partitioner's own widths do go that high (a key with 75% of a 8192-partition
  // topic), and its messages follow the documented sequence normal + i * step (mod n),
  // rebuilt here from its first two members, beyond position 4096.
  const first = allowedPartitions('k', n, 2);
  const step = (first[1] - first[0] + n) % n;
  const position = new Int32Array(n).fill(-1);
  for (let i = 0, q = first[0]; i < n; i++, q = (q + step) % n) position[q] = i;
  t.ok(position.every((i) => i >= 0), 'premise: the sequence covers all partitions');
  const p = new DynamicPartitioner({ maxPartitions: n, maxTopics: 8 });
  let beyond = 0;
  let outsideSequence = 0;
  let hotMessages = 0;
  for (let i = 0; i < 120_000; i++) {
    const key = i % 4 ? 'k' : `o-${i}`;
    const q = p.partition('t', key, n);
    if (key !== 'k' || i % 7 !== 0) continue; // a sample: hotKeys() after each message is slow
    const h = p.hotKeys('t').find((x) => x.key === 'k');
    if (!h) continue;
    hotMessages++;
    if (position[q] >= h.partitions) outsideSequence++;
    if (position[q] >= 4096) beyond++;
  }
  const width = (p.hotKeys('t').find((x) => x.key === 'k') || { partitions: 0 }).partitions;
  t.ok(width > 4096 && beyond > 0, `premise: 'k' got width ${width} and ${beyond} of ${hotMessages} sampled messages went beyond position 4096`);
  t.equal(outsideSequence, 0, 'the messages are within the first `width` of the sequence');
  t.equal(allowedPartitions('k', n, width).length, width, 'so allowedPartitions(k, n, width) must list all of them');
});

t.test('two hot keys of different widths: each stays inside its own allowed partitions', async (t) => {
  // Minimal case, default options: 'big' has 60% of the traffic (width ~ 0.6 * 48 and up),
  // 'mid' 20% (width ~ 10); both are wider than the 8 partitions a decision scans at once.
  const n = 48;
  const p = new DynamicPartitioner();
  let outside = 0;
  let checked = 0;
  let example = null;
  for (let i = 0; i < 20_000; i++) {
    const key = i % 5 < 3 ? 'big' : i % 5 === 3 ? 'mid' : `cold-${i}`;
    const q = p.partition('t', key, n);
    const h = p.hotKeys('t').find((x) => x.key === key);
    if (!h || h.partitions < 2) continue;
    checked++;
    const allowed = allowedPartitions(key, n, h.partitions);
    if (!allowed.includes(q)) {
      outside++;
      if (!example) example = `message ${i} of '${key}' went to ${q}, position ${allowedPartitions(key, n, n).indexOf(q)} of its sequence; width ${h.partitions}: [${allowed}]`;
    }
  }
  const widths = p.hotKeys('t').map((h) => `${h.key}: ${h.partitions}`).join(', ');
  t.ok(checked > 10_000, `premise: ${checked} messages of hot keys (${widths})`);
  t.equal(outside, 0, `none outside allowedPartitions (${outside} were; first: ${example})`);
});

t.test('every message of a hot key lands inside allowedPartitions(key, n, its width)', async (t) => {
  for (const base of ['murmur2_random', 'consistent', 'fnv1a']) {
    // Split keys (relocate: false): a relocated key has width 1 on a partition of its choice.
    const p = new DynamicPartitioner({ partitioner: base, horizon: { messages: 5000 }, loadHorizon: { messages: 3000 }, relocate: false });
    const names = keyNames(5000);
    const idx = zipfIndexes(1.2, names.length, 60_000, 6);
    const hot = new Map(); // key -> width seen last
    let turnedHot = null;
    p.on('hot', (h) => { turnedHot = h; hot.set(h.key, 0); });
    p.on('cooled', (h) => hot.delete(h.key));
    let checked = 0;
    let outside = 0;
    let shrank = 0;
    let firstNotNormal = 0;
    let moved = 0;
    for (let i = 0; i < idx.length; i++) {
      const key = names[idx[i]];
      if (i === 20_000) p.setPartitionPenalty('t', partitionForKey(names[0], N, base), 3);
      turnedHot = null;
      const q = p.partition('t', key, N);
      if (turnedHot && turnedHot.key === key) {
        // The message that turns a key hot still goes to its normal partition.
        if (q !== partitionForKey(key, N, base)) firstNotNormal++;
        continue;
      }
      if (!hot.has(key)) continue;
      const h = p.hotKeys('t').find((x) => x.key === key);
      const allowed = allowedPartitions(key, N, h.partitions, base);
      checked++;
      if (!allowed.includes(q)) outside++;
      if (q !== allowed[0]) moved++;
      if (h.partitions < hot.get(key)) shrank++;
      hot.set(key, h.partitions);
    }
    t.ok(checked > 10_000 && moved > 1000, `${base}: premise: ${checked} messages of hot keys, ${moved} moved`);
    t.equal(outside, 0, `${base}: none outside allowedPartitions (${outside} of ${checked} were)`);
    t.equal(firstNotNormal, 0, `${base}: each turning-hot message went to the key's normal partition`);
    t.equal(shrank, 0, `${base}: widths only grow while a key stays hot`);
  }
});
