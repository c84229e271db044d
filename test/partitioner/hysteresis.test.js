'use strict';
// Hysteresis: after turning hot, a key stays hot while its share is above coolThreshold / n
// even when it is below hotThreshold / n; a key oscillating around the hot line does not
// flap. Each premise (where the key's exact share really was) is checked with the reference
// counts, so that a test cannot pass because the stream missed the band it aims at.
const t = require('tap');
const { DynamicPartitioner, partitionForKey } = require('../..');
const { DecayedCounts, prng, keyNames } = require('./lib/helpers');

const N = 48;
const H = 5000;
const BACKGROUND = keyNames(5000, 'bg-');

/**
 * Feeds `steps` messages; `rateAt(i)` is X's fraction of the traffic at step i. X's messages
 * are spaced evenly (an accumulator, not a coin), so that its share follows the rate
 * smoothly; the other messages go to random background keys. Returns X's events and X's
 * exact share (in fair shares) at every step.
 */
function run({ steps, rateAt, seed, options = {}, key = 'X', background = BACKGROUND, topic = 't' }) {
  const p = new DynamicPartitioner({ horizon: { messages: H }, ...options });
  const ref = new DecayedCounts(1, H);
  const rand = prng(seed);
  const events = [];
  let now = 0;
  p.on('hot', (h) => { if (h.key === key) events.push({ type: 'hot', at: now, reason: h.reason }); });
  p.on('cooled', (h) => { if (h.key === key) events.push({ type: 'cooled', at: now }); });
  const fair = new Float64Array(steps);
  let acc = 0;
  for (let i = 0; i < steps; i++) {
    now = i;
    acc += rateAt(i);
    if (acc >= 1) { acc -= 1; p.partition(topic, key, N); ref.add(0, i); }
    else { p.partition(topic, background[Math.floor(rand() * background.length)], N); ref.addOther(i); }
    fair[i] = ref.share(0, i) * N;
  }
  return { p, events, fair };
}

function range(a, from, to) {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = from; i < to; i++) { lo = Math.min(lo, a[i]); hi = Math.max(hi, a[i]); }
  return [lo, hi];
}

t.test('a key between the cooling and the hot line after turning hot stays hot', async (t) => {
  // X: 0.5% of the traffic (0.24 fair shares) for 5 half-lives, then 0.156% (0.075 fair
  // shares: between coolThreshold 0.05 and hotThreshold 0.1) for 20 half-lives.
  const phase1 = 5 * H;
  const steps = 25 * H;
  const r = run({ steps, seed: 21, rateAt: (i) => (i < phase1 ? 0.005 : 0.075 / N) });
  const o = r.p.options;
  // Premise: from 4 half-lives into phase 2 on, X's exact share is inside the band.
  const [lo, hi] = range(r.fair, phase1 + 4 * H, steps);
  t.comment(`X's exact share in phase 2 (after settling): ${lo.toFixed(4)} .. ${hi.toFixed(4)} fair shares`);
  t.ok(lo > o.coolThreshold && hi < o.hotThreshold, 'premise: X sat between the lines');
  t.same(r.events.map((e) => e.type), ['hot'], 'one hot event, no cooled');
  t.ok(r.events.length && r.events[0].at < phase1, 'X turned hot in phase 1');
  t.ok(r.p.hotKeys('t').some((h) => h.key === 'X'), 'X is still hot at the end');
});

t.test('a key oscillating around the hot line does not flap', async (t) => {
  // X's rate alternates between 1.4x and 0.6x the hot line every H/2 messages: its
  // exact share crosses the hot line again and again but never reaches the cooling line.
  const steps = 30 * H;
  const line = 0.1 / N;
  const r = run({ steps, seed: 22, rateAt: (i) => (Math.floor(i / (H / 2)) % 2 === 0 ? 1.4 : 0.6) * line });
  const o = r.p.options;
  let crossings = 0;
  for (let i = 4 * H; i < steps; i++) if ((r.fair[i - 1] > o.hotThreshold) !== (r.fair[i] > o.hotThreshold)) crossings++;
  const [lo] = range(r.fair, 4 * H, steps);
  t.comment(`X's exact share crossed the hot line ${crossings} times; lowest ${lo.toFixed(4)} fair shares`);
  t.ok(crossings >= 10, 'premise: X crossed the hot line many times');
  t.ok(lo > o.coolThreshold, 'premise: but never fell to the cooling line');
  t.ok(r.events.length >= 1 && r.events[0].type === 'hot', 'X turned hot');
  t.ok(r.events.length <= 2, `at most a couple of events (${r.events.map((e) => e.type).join(', ')})`);
  t.equal(r.events.filter((e) => e.type === 'cooled').length, 0, 'never cooled');
});

t.test('a key oscillating across both lines turns hot and cools once per swing, not more', async (t) => {
  // Rate alternates between 0.25 and 0.01 fair shares every 6 half-lives: each high phase
  // should give exactly one 'hot', each low phase exactly one 'cooled'.
  const period = 6 * H;
  const steps = 8 * period;
  const r = run({ steps, seed: 23, rateAt: (i) => (Math.floor(i / period) % 2 === 0 ? 0.25 : 0.01) / N });
  const o = r.p.options;
  // Premise, per phase: high phases end above the hot line, low phases below the cooling line.
  for (let ph = 0; ph < steps / period; ph++) {
    const end = r.fair[(ph + 1) * period - 1];
    if (ph % 2 === 0) t.ok(end > o.hotThreshold, `premise: phase ${ph} ends hot (${end.toFixed(3)})`);
    else t.ok(end < o.coolThreshold, `premise: phase ${ph} ends cold (${end.toFixed(3)})`);
  }
  const types = r.events.map((e) => e.type);
  t.same(types, ['hot', 'cooled', 'hot', 'cooled', 'hot', 'cooled', 'hot', 'cooled'], 'one event per crossing of the band');
});

t.test('a relief key stays hot between reliefThreshold / 2 and reliefThreshold', async (t) => {
  // 8 partitions; half of all traffic goes to keys whose normal partition is P, so P is
  // overloaded (load ~ 4x the mean). R (normal partition P) gets 0.5% of the traffic =
  // 0.04 fair shares: above reliefThreshold (0.025), below hotThreshold (0.1), so it turns
  // hot with reason 'relief'. Then R falls to 0.24% = 0.0192 fair shares, between
  // reliefThreshold / 2 and reliefThreshold: it must stay hot. Then 0.05% = 0.004: it cools.
  const n = 8;
  const HR = 20_000;
  const names = keyNames(40_000, 'c-');
  const byPartition = Array.from({ length: n }, () => []);
  for (const k of names) byPartition[partitionForKey(k, n)].push(k);
  let R = null;
  for (let i = 0; R === null; i++) if (partitionForKey(`R-${i}`, n) === 0) R = `R-${i}`;
  const P = 0;
  const rand = prng(24);
  const p = new DynamicPartitioner({ horizon: { messages: HR } });
  const ref = new DecayedCounts(1, HR);
  const events = [];
  let now = 0;
  p.on('hot', (h) => { if (h.key === R) events.push({ type: 'hot', at: now, reason: h.reason }); });
  p.on('cooled', (h) => { if (h.key === R) events.push({ type: 'cooled', at: now }); });
  const phases = [[0.005, 6 * HR], [0.0024, 12 * HR], [0.0005, 8 * HR]];
  const fairAtEnd = [];
  let minMid = Infinity;
  let maxMid = 0;
  let acc = 0;
  for (const [rate, length] of phases) {
    for (let j = 0; j < length; j++, now++) {
      acc += rate; // R's messages evenly spaced
      if (acc >= 1) { acc -= 1; p.partition('t', R, n); ref.add(0, now); continue; }
      ref.addOther(now);
      const list = rand() < 0.5 ? byPartition[P] : byPartition[1 + Math.floor(rand() * (n - 1))];
      p.partition('t', list[Math.floor(rand() * list.length)], n);
      if (rate === 0.0024 && j > 4 * HR) {
        minMid = Math.min(minMid, ref.share(0, now) * n);
        maxMid = Math.max(maxMid, ref.share(0, now) * n);
      }
    }
    fairAtEnd.push(ref.share(0, now - 1) * n);
  }
  const o = p.options;
  t.comment(`R's exact share at the phase ends: ${fairAtEnd.map((f) => f.toFixed(4)).join(', ')} fair shares; phase 2 (settled) ${minMid.toFixed(4)} .. ${maxMid.toFixed(4)}`);
  t.ok(fairAtEnd[0] > o.reliefThreshold && fairAtEnd[0] < o.hotThreshold, 'premise: phase 1 between relief and hot');
  t.ok(minMid > o.reliefThreshold / 2 && maxMid < o.reliefThreshold, 'premise: phase 2 between relief / 2 and relief');
  t.ok(fairAtEnd[2] < o.reliefThreshold / 2, 'premise: phase 3 below relief / 2');
  t.same(events.map((e) => e.type), ['hot', 'cooled'], 'hot once, cooled once');
  t.equal(events[0] && events[0].reason, 'relief', 'made hot for relief');
  t.ok(events[0] && events[0].at < phases[0][1], 'in phase 1');
  t.ok(events[1] && events[1].at >= phases[0][1] + phases[1][1], 'cooled only in phase 3');
});
