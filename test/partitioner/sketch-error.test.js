'use strict';
// share() against exact decayed counts computed here (test/partitioner/lib/helpers.js):
// it must never fall below the true share (a count-min sketch with conservative update
// only overestimates; tracked keys are counted exactly), and its overestimate must stay
// within the count-min bound: with width w and depth d, for each key, with probability at
// least 1 - e^-d, estimate - true <= e * total / w (Cormode & Muthukrishnan 2005,
// epsilon = e / w). As a share: overestimate <= e / w.
const t = require('tap');
const { DynamicPartitioner } = require('../..');
const { decayedAtEnd, zipfIndexes, keyNames, DecayedCounts } = require('./lib/helpers');

const MESSAGES = 200_000;
const KEYS = 20_000;
const N = 48;
const HALF_LIFE = 20_000; // = DEFAULTS.horizon.messages
const names = keyNames(KEYS);
const stream = zipfIndexes(1.0, KEYS, MESSAGES, 7);
const exact = decayedAtEnd(stream, KEYS, HALF_LIFE);

function feed(options) {
  // sampling 1: the count-min guarantees hold for a sketch that sees every message
  // (sampling.test.js covers the sampled default).
  const p = new DynamicPartitioner({ horizon: { messages: HALF_LIFE }, ...options, sketch: { sampling: 1, ...options.sketch } });
  const chunk = 1000;
  for (let i = 0; i < MESSAGES; i += chunk) {
    const keys = [];
    for (let j = i; j < i + chunk; j++) keys.push(names[stream[j]]);
    p.partitionBatch('t', keys, N);
  }
  return p;
}

/** The sample: the 100 hottest keys (tracked), every 10th key after (mid and tail, mostly untracked). */
const sample = [];
for (let k = 0; k < KEYS; k++) if (k < 100 || k % 10 === 0) sample.push(k);

function compare(p, width) {
  const bound = Math.E / width;
  const under = [];
  let within = 0;
  const over = [];
  for (const k of sample) {
    const truth = exact.counts[k] / exact.total;
    const est = p.share('t', names[k]);
    if (est < truth * (1 - 1e-6)) under.push({ key: names[k], truth, est, recentTrue: exact.counts[k], recentEst: est * exact.total });
    const o = est - truth;
    over.push(o);
    if (o <= bound) within++;
  }
  over.sort((a, b) => a - b);
  under.sort((a, b) => (b.truth - b.est) / b.truth - (a.truth - a.est) / a.truth);
  return { under, within: within / sample.length, bound, over };
}

function underMessage(r) {
  if (r.under.length === 0) return `no key of ${sample.length} below its true share`;
  const w = r.under[0];
  return `no key below its true share: ${r.under.length} of ${sample.length} were, worst ${w.key} ` +
    `${w.recentEst.toFixed(4)} recent messages vs true ${w.recentTrue.toFixed(4)} (${(100 * (1 - w.est / w.truth)).toFixed(1)}% low)`;
}

t.test('the topic total matches the exact decayed count', async (t) => {
  const p = feed({});
  const recent = p.stats().topics.t.recentMessages;
  t.ok(Math.abs(recent - exact.total) <= 1e-9 * exact.total, `recentMessages ${recent} vs exact ${exact.total}`);
  // Closed form for a steady stream of one message per step, the last one weighing
  // 2^(-1/H): 2^(-1/H) (1 - 2^(-M/H)) / (1 - 2^(-1/H)).
  const closed = Math.pow(2, -1 / HALF_LIFE) * (1 - Math.pow(2, -MESSAGES / HALF_LIFE)) / (1 - Math.pow(2, -1 / HALF_LIFE));
  t.ok(Math.abs(exact.total - closed) <= 1e-6 * closed, 'the reference total is the geometric series');
});

t.test('a small sketch (width 256): never below the truth, within the count-min bound for >= 95% of keys', async (t) => {
  const width = 256;
  const p = feed({ sketch: { width, depth: 4 } });
  const r = compare(p, width);
  t.comment(`width ${width}: ${sample.length} keys, bound ${r.bound.toExponential(3)}, within ${(100 * r.within).toFixed(2)}%, ` +
    `median overestimate ${r.over[r.over.length >> 1].toExponential(3)}, max ${r.over[r.over.length - 1].toExponential(3)}`);
  t.same(r.under.slice(0, 3), [], underMessage(r));
  t.ok(r.within >= 0.95, `${(100 * r.within).toFixed(2)}% of keys within e/width`);
  // The bound must be meaningful here: the tail keys' true shares are far below it, so an
  // estimate of "anything up to the bound" would not be informative, and a sketch that
  // ignored collisions entirely would be caught by the upper bound alone.
  t.ok(exact.counts[KEYS - 1] / exact.total < r.bound / 100, 'tail shares are far below the bound');
});

t.test('the default sketch (width 16384): never below the truth, tiny error', async (t) => {
  const p = feed({});
  const width = 16384;
  const r = compare(p, width);
  const median = r.over[r.over.length >> 1];
  const p99 = r.over[Math.floor(r.over.length * 0.99)];
  t.comment(`default: bound ${r.bound.toExponential(3)}, within ${(100 * r.within).toFixed(2)}%, ` +
    `median overestimate ${median.toExponential(3)}, p99 ${p99.toExponential(3)}, max ${r.over[r.over.length - 1].toExponential(3)}`);
  t.same(r.under.slice(0, 3), [], underMessage(r));
  t.ok(r.within >= 0.99, `${(100 * r.within).toFixed(2)}% of keys within e/width = ${r.bound.toExponential(3)}`);
  // Tiny: the 99th percentile of the overestimate is below a tenth of the admission line
  // (0.5 * reliefThreshold / n = 0.0125 / 48 of the traffic), so errors cannot decide
  // which keys get tracked.
  t.ok(p99 < 0.1 * (0.0125 / N), `p99 overestimate ${p99.toExponential(3)} < ${(0.1 * 0.0125 / N).toExponential(3)}`);
  // The hottest keys are tracked exactly: within 1e-3 relative (the surplus of their sketch
  // estimate at admission has decayed by 2^-10 since).
  for (let k = 0; k < 20; k++) {
    const truth = exact.counts[k] / exact.total;
    const est = p.share('t', names[k]);
    t.ok(Math.abs(est - truth) <= 1e-3 * truth, `rank ${k}: ${est} vs ${truth}`);
  }
});

t.test('a key that leaves the exact table keeps its count (share never below the truth)', async (t) => {
  // Minimal case, default options but for a horizon long enough that counts are plain
  // message counts: 'a' gets 10 messages right after the warm-up, is admitted to the exact
  // table (any key is, while the topic is small), and is dropped from it when 100,000
  // other distinct keys have made its share small. Its true count is still 10.
  const p = new DynamicPartitioner({ horizon: { messages: 1e12 }, sketch: { sampling: 1 } });
  const ref = new DecayedCounts(1, 1e12);
  let now = 0;
  for (let i = 0; i < 300; i++, now++) { p.partition('t', `warm-${i}`, N); ref.addOther(now); }
  for (let i = 0; i < 10; i++, now++) { p.partition('t', 'a', N); ref.add(0, now); }
  for (let i = 0; i < 100_000; i++, now++) { p.partition('t', `other-${i}`, N); ref.addOther(now); }
  const truth = ref.share(0, now - 1);
  const est = p.share('t', 'a');
  t.ok(est >= truth * (1 - 1e-6), `share('a') ${est} (${(est * (now)).toFixed(3)} messages) >= true ${truth} (10 messages)`);
});

t.test('every key of a run with a small exact table: never below the truth', async (t) => {
  // With few exact entries, keys move in and out of the table all the time.
  const p = feed({ maxTrackedKeys: 32 });
  const r = compare(p, 16384);
  t.same(r.under.slice(0, 3), [], underMessage(r));
});
