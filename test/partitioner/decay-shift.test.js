'use strict';
// Decay after a shift: a key that was hot stops (or nearly stops); it must cool, neither
// earlier nor much later than the half-life and the thresholds say, and the key that takes
// its traffic must turn hot.
//
// Derivation of the cooling time (horizon { messages: H }, n partitions):
//   A key with S0 fair shares (share s0 = S0 / n) of a topic whose decayed total is steady
//   (one message per step for many half-lives: total = sum_j 2^(-j/H), constant up to
//   2^(-age/H)) gets no more messages. After t steps its count is c0 * 2^(-t/H) and its share
//   s0 * 2^(-t/H). It cools when the share falls below coolThreshold / n:
//       t* = H * log2(S0 / coolThreshold).
//   The partitioner notices at the key's own next message or when its round-robin sweep
//   (one table entry per message, maxTrackedKeys entries) reaches it, so
//       t* <= cooledAt - stop <= t* + maxTrackedKeys.
//   It cannot cool before t*: a tracked count is never below the exact count.
//   We compute t* exactly with the reference counts and check it against the closed form.
//
// Turning hot: a key that starts receiving a fraction r of the traffic has, after t steps,
// about r * H/ln2 * (1 - 2^(-t/H)) recent messages; it is hot once that exceeds both
// hotThreshold / n of the total and minHotMessages. The partitioner's count of it is never
// below the exact one, so it must be hot no later than the exact crossing.
const t = require('tap');
const { DynamicPartitioner, DEFAULTS } = require('../..');
const { DecayedCounts, prng, keyNames } = require('./lib/helpers');

const N = 48;
const H = 2000;
const BACKGROUND = keyNames(5000, 'bg-');

function scenario({ phase1, phase2, rateA1, rateA2, rateB2, seed, options = {} }) {
  // sampling 1: every message counts in the sketch, so the exact-count bounds below hold
  // (sampling.test.js covers the default).
  const p = new DynamicPartitioner({ horizon: { messages: H }, sketch: { sampling: 1 }, ...options });
  const rand = prng(seed);
  const ref = new DecayedCounts(2, H); // 0: A, 1: B
  const clock = { now: 0 };
  const events = [];
  p.on('hot', (h) => events.push({ type: 'hot', at: clock.now, key: h.key, share: h.share, reason: h.reason, partitions: h.partitions }));
  p.on('cooled', (h) => events.push({ type: 'cooled', at: clock.now, key: h.key, share: h.share, partitions: h.partitions }));
  let firstACoolCross = -1; // first step after the shift where A's exact share < cool / n
  let firstBHotCross = -1; // first step where B's exact count > hot * total / n and >= minHotMessages
  let shareAtStop = 0;
  const o = p.options;
  for (let i = 0; i < phase1 + phase2; i++) {
    clock.now = i;
    const inPhase2 = i >= phase1;
    const u = rand();
    let key;
    if (u < (inPhase2 ? rateA2 : rateA1)) { key = 'A'; ref.add(0, i); }
    else if (inPhase2 && u < rateA2 + rateB2) { key = 'B'; ref.add(1, i); }
    else { key = BACKGROUND[Math.floor(rand() * BACKGROUND.length)]; ref.addOther(i); }
    p.partition('t', key, N);
    if (i === phase1 - 1) shareAtStop = ref.share(0, i);
    if (inPhase2) {
      if (firstACoolCross < 0 && ref.get(0, i) < o.coolThreshold * ref.total(i) / N) firstACoolCross = i;
      const b = ref.get(1, i);
      if (firstBHotCross < 0 && b > o.hotThreshold * ref.total(i) / N && b >= o.minHotMessages) firstBHotCross = i;
    }
  }
  return { p, events, firstACoolCross, firstBHotCross, shareAtStop };
}

t.test('a hot key that stops cools at H*log2(S0/cool) (+ one sweep), and its successor turns hot', async (t) => {
  const phase1 = 20 * H;
  const r = scenario({ phase1, phase2: 10 * H, rateA1: 0.1, rateA2: 0, rateB2: 0.1, seed: 11 });
  const o = r.p.options;
  const aHot = r.events.filter((e) => e.key === 'A' && e.type === 'hot');
  const aCooled = r.events.filter((e) => e.key === 'A' && e.type === 'cooled');
  t.equal(aHot.length, 1, 'A turned hot once, in phase 1');
  t.ok(aHot.length && aHot[0].at < phase1, 'before the shift');

  const S0 = r.shareAtStop * N;
  const closed = H * Math.log2(S0 / o.coolThreshold);
  const exactT = r.firstACoolCross - phase1 + 1; // steps after the last message of phase 1
  t.comment(`A had ${S0.toFixed(3)} fair shares at the shift; t* closed form ${closed.toFixed(1)}, exact ${exactT}`);
  t.ok(r.firstACoolCross > 0, 'A\'s exact share crossed the cooling line');
  t.ok(Math.abs(exactT - closed) <= 2, 'the closed form and the exact reference agree (steady total)');

  t.equal(aCooled.length, 1, 'A cooled once');
  if (aCooled.length) {
    const at = aCooled[0].at;
    t.ok(at >= r.firstACoolCross, `not before its exact share crossed the line (cooled at ${at}, crossing at ${r.firstACoolCross})`);
    t.ok(at <= r.firstACoolCross + o.maxTrackedKeys,
      `within one sweep (${o.maxTrackedKeys} messages) after it: ${at - r.firstACoolCross} messages late`);
    t.equal(aCooled[0].partitions, 1, 'the cooled payload has partitions 1');
    t.ok(aCooled[0].share < o.coolThreshold / N, `the cooled payload's share ${aCooled[0].share} is below the line`);
  }
  t.notOk(r.p.hotKeys('t').some((h) => h.key === 'A'), 'A is no longer in hotKeys()');

  const bHot = r.events.filter((e) => e.key === 'B' && e.type === 'hot');
  t.equal(bHot.length, 1, 'B turned hot');
  t.ok(r.firstBHotCross > 0, 'B\'s exact count crossed the hot line');
  if (bHot.length) {
    t.comment(`B: hot at ${bHot[0].at - phase1} messages after the shift, exact crossing at ${r.firstBHotCross - phase1}`);
    t.ok(bHot[0].at >= phase1, 'after the shift');
    t.ok(bHot[0].at <= r.firstBHotCross, 'no later than its exact count crossed the hot line');
    // Not early either: at most a few messages' worth of sketch surplus at admission.
    t.ok(r.firstBHotCross - bHot[0].at <= 50, `not much earlier (${r.firstBHotCross - bHot[0].at} messages)`);
    t.equal(bHot[0].reason, 'share');
  }
  t.ok(r.p.hotKeys('t').some((h) => h.key === 'B'), 'B is in hotKeys() at the end');
});

t.test('a hot key whose traffic falls to a trickle cools within the same bound', async (t) => {
  const phase1 = 15 * H;
  // After the shift A keeps 0.05% of the traffic (0.024 fair shares, below coolThreshold).
  const r = scenario({ phase1, phase2: 12 * H, rateA1: 0.08, rateA2: 0.0005, rateB2: 0.08, seed: 12, options: { maxTrackedKeys: 256 } });
  const o = r.p.options;
  const aCooled = r.events.filter((e) => e.key === 'A' && e.type === 'cooled');
  t.ok(r.firstACoolCross > 0, 'A\'s exact share crossed the cooling line');
  t.equal(aCooled.length, 1, 'A cooled once');
  if (aCooled.length) {
    const at = aCooled[0].at;
    t.comment(`A cooled ${at - r.firstACoolCross} messages after its exact crossing (${r.firstACoolCross - phase1} after the shift)`);
    t.ok(at >= r.firstACoolCross, 'not before its exact share crossed the line');
    t.ok(at <= r.firstACoolCross + o.maxTrackedKeys, `within one sweep of ${o.maxTrackedKeys} messages`);
  }
  t.equal(r.events.filter((e) => e.key === 'A' && e.type === 'hot').length, 1, 'A did not turn hot again');
  t.equal(r.events.filter((e) => e.key === 'B' && e.type === 'hot').length, 1, 'B turned hot');
});

t.test('with a time horizon, a key that stops cools within a bound in wall time', async (t) => {
  // Half-life 40 ms. A has S0 = 0.2 * 48 = 9.6 fair shares when it stops; with a steady
  // message rate it cools after 40 * log2(9.6 / 0.05) = 303 ms. The rate of this loop is
  // not steady, so the bound is loose: 4 x that plus 500 ms.
  const halfLife = 40;
  const p = new DynamicPartitioner({ horizon: { ms: halfLife }, loadHorizon: { ms: halfLife } });
  t.teardown(() => p.close());
  let cooledAt = -1;
  let hotAt = -1;
  p.on('hot', (h) => { if (h.key === 'A' && hotAt < 0) hotAt = performance.now(); });
  p.on('cooled', (h) => { if (h.key === 'A') cooledAt = performance.now(); });
  const rand = prng(13);
  const tick = () => new Promise((resolve) => setTimeout(resolve, 2));
  const send = (withA) => {
    for (let i = 0; i < 200; i++) {
      p.partition('t', withA && rand() < 0.2 ? 'A' : BACKGROUND[Math.floor(rand() * BACKGROUND.length)], N);
    }
  };
  const started = performance.now();
  while (performance.now() - started < 10 * halfLife) { send(true); await tick(); }
  t.ok(hotAt > 0, 'A turned hot');
  const stop = performance.now();
  const expected = halfLife * Math.log2((0.2 * N) / DEFAULTS.coolThreshold);
  const limit = 4 * expected + 500;
  while (cooledAt < 0 && performance.now() - stop < limit) { send(false); await tick(); }
  t.ok(cooledAt > 0, `A cooled within ${limit.toFixed(0)} ms (after ${(cooledAt - stop).toFixed(0)} ms; steady-rate estimate ${expected.toFixed(0)} ms)`);
  t.ok(cooledAt < 0 || cooledAt - stop >= 0.25 * expected, 'not right away');
});
