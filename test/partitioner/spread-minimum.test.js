'use strict';
// The default policy spreads little more than balance needs: messages of spread keys at most
// 1.25x the offline minimum (the least traffic of whole keys that must leave their partitions
// for every partition to be within balanceTolerance, computed from the true key shares: see
// test/tools/simulate.test.js for its hand-checked cases), while the hottest partition stays
// within 5% of the mean after warm-up and every window after the first within the noise of
// placing each message at random. Zipf 0.8 / 1.0 / 1.2, 100k keys, 1M messages.
const t = require('tap');
const { simulate } = require('../../build/tools/simulate');

const W = 100_000;
for (const [workload, n] of [['zipf:0.8', 12], ['zipf:1.0', 48], ['zipf:1.2', 4], ['zipf:1.0', 100]]) {
  t.test(`${workload}, ${n} partitions`, async (t) => {
    const r = simulate({ workload, keys: 100_000, messages: 1_000_000, partitions: n, window: W, seed: 3 });
    const d = r.dynamic;
    const spread = d.spreadMessages / 1_000_000;
    t.ok(d.offlineMinimum > 0.01, `premise: balance needs spreading (minimum ${(100 * d.offlineMinimum).toFixed(1)}%)`);
    t.ok(spread <= 1.25 * d.offlineMinimum, `spread ${(100 * spread).toFixed(1)}% <= 1.25 x minimum ${(100 * d.offlineMinimum).toFixed(1)}%`);
    t.ok(d.maxOverMeanAfterWarmup <= 1.05, `max/mean after warm-up ${d.maxOverMeanAfterWarmup.toFixed(3)}`);
    const noise = 1 + 2.5 * Math.sqrt(n / W);
    const worst = Math.max(...d.windows.slice(1));
    t.ok(worst <= noise * 1.02, `worst window after the first ${worst.toFixed(3)} <= 1.02 x noise ${noise.toFixed(3)}`);
    t.equal(d.coldMessagesMoved, 0, 'no message of a key never hot moved');
    t.match(r.detection, { missed: 0, falseHot: 0 }, 'detection: none missed, none false');
  });
}
