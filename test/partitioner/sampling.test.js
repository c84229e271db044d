'use strict';
// The default sketch is sampled (options.sketch.sampling = 4): a message of a key the table
// does not track updates the sketch once in 4 messages on average, with a weight of 4, at
// random gaps; a tracked key is counted exactly from its admission on. So:
//   - an untracked key's estimate is unbiased up to the count-min collisions: its error is
//     that of a sample of about count / sampling messages, sd <= sqrt(sampling x count)
//     (each recent message weighs at most 1), plus the count-min overestimate;
//   - a tracked key's count is exact except for the error of its estimate at admission,
//     which decays with the horizon;
//   - no periodic pattern of keys can keep a key out of the samples (the gaps are random).
// Expected values come from exact decayed counts (lib/helpers.js), not from the partitioner.
const t = require('tap');
const { DynamicPartitioner } = require('../..');
const { decayedAtEnd, zipfIndexes, keyNames, prng } = require('./lib/helpers');

const MESSAGES = 200_000;
const KEYS = 20_000;
const N = 48;
const HALF_LIFE = 20_000;
const names = keyNames(KEYS);

function feed(stream, options = {}) {
  const p = new DynamicPartitioner({ horizon: { messages: HALF_LIFE }, ...options });
  for (let i = 0; i < stream.length; i += 1000) {
    p.partitionBatch('t', Array.from(stream.subarray(i, i + 1000), (k) => names[k]), N);
  }
  return p;
}

t.test('sampled estimates: within 4 sd of the sample plus the count-min bound, no bias downwards', async (t) => {
  const stream = zipfIndexes(1.0, KEYS, MESSAGES, 11);
  const exact = decayedAtEnd(stream, KEYS, HALF_LIFE);
  const p = feed(stream);
  const sampling = p.options.sketch.sampling;
  t.equal(sampling, 4, 'premise: the default samples 1 in 4');
  const cms = Math.E * exact.total / p.options.sketch.width; // count-min bound, in recent messages
  let outside = 0;
  let checked = 0;
  let sumError = 0;
  let sumTrue = 0;
  let worst = '';
  for (let k = 0; k < KEYS; k += k < 200 ? 1 : 7) {
    const truth = exact.counts[k];
    const est = p.share('t', names[k]) * exact.total;
    const allowed = 4 * Math.sqrt(sampling * Math.max(truth, 1)) + cms;
    checked++;
    sumError += est - truth;
    sumTrue += truth;
    if (Math.abs(est - truth) > allowed) {
      outside++;
      if (!worst) worst = `${names[k]}: estimate ${est.toFixed(2)} vs true ${truth.toFixed(2)} (allowed +-${allowed.toFixed(2)})`;
    }
  }
  t.ok(outside <= checked * 0.01, `${outside} of ${checked} keys outside 4 sd + the count-min bound (<= 1%) ${worst}`);
  // Unbiased sampling: the summed error is the count-min overestimate, not a shortfall.
  t.ok(sumError > -0.01 * sumTrue, `summed error ${sumError.toFixed(1)} of ${sumTrue.toFixed(1)} recent messages is not negative`);
  // The hottest keys are tracked: exact up to their admission error, which has decayed.
  for (let k = 0; k < 10; k++) {
    const truth = exact.counts[k];
    const est = p.share('t', names[k]) * exact.total;
    t.ok(Math.abs(est - truth) <= 0.01 * truth, `${names[k]} (tracked): ${est.toFixed(1)} vs true ${truth.toFixed(1)} within 1%`);
  }
});

t.test('no periodic key pattern hides a key: a key on every 4th message (the sampling) turns hot', async (t) => {
  // Messages 1, 5, 9, ... are H; the others are background keys, each rare. A sampler that
  // took every 4th message (0, 4, 8, ...) would never see H.
  const rand = prng(3);
  const p = new DynamicPartitioner();
  t.equal(p.options.sketch.sampling, 4, 'premise: the default samples 1 in 4');
  const hot = new Set();
  p.on('hot', (h) => hot.add(h.key));
  for (let i = 0; i < 50_000; i++) {
    p.partition('t', i % 4 === 1 ? 'H' : `bg-${Math.floor(rand() * 1e6)}`, N);
  }
  t.same([...hot], ['H'], 'H turned hot, and nothing else');
  const share = p.share('t', 'H');
  t.ok(Math.abs(share - 1 / 4) < 0.01, `H: share ${share.toFixed(4)} ~ 1/4`);
});

t.test('sampling 1 counts every message: the estimate of a key never falls below its true count', async (t) => {
  const stream = zipfIndexes(1.0, KEYS, 50_000, 5);
  const exact = decayedAtEnd(stream, KEYS, HALF_LIFE);
  const p = feed(stream, { sketch: { sampling: 1 } });
  let under = 0;
  for (let k = 0; k < KEYS; k += 13) {
    if (p.share('t', names[k]) * exact.total < exact.counts[k] * (1 - 1e-6)) under++;
  }
  t.equal(under, 0, 'no key below its true count');
  const sampled = feed(stream);
  let sampledUnder = 0;
  for (let k = 0; k < KEYS; k += 13) {
    if (sampled.share('t', names[k]) * exact.total < exact.counts[k] * (1 - 1e-6)) sampledUnder++;
  }
  t.ok(sampledUnder > 0, `premise: with sampling 4 some keys are estimated low (${sampledUnder})`);
});
