'use strict';
// A hot key's messages go in runs: one choice of partition per run of hotRun messages, or
// fewer where a run would move a partition's load by more than half of balanceTolerance.
// With the default horizons a fair share is loadHorizon / ln 2 / n recent messages, so the
// cap is at most 0.5 x 0.02 x 14427 / n (less while the topic is young): 36 at n = 4 (hotRun 8
// applies), 3 at n = 48.
const t = require('tap');
const { DynamicPartitioner } = require('../..');
const { prng } = require('./lib/helpers');

function run(options, n, messages = 40_000) {
  const p = new DynamicPartitioner(options);
  const rand = prng(9);
  const placed = [];
  for (let i = 0; i < messages; i++) {
    const hot = rand() < 0.3;
    const q = p.decide('t', hot ? 'H' : `c-${Math.floor(rand() * 1e6)}`, n);
    // The second half: the topic's loads have grown past the cap's warm-up (a young topic's
    // fair share is small, so its runs are short).
    if (hot && i >= messages / 2 && p.decision.order === 2 /* ORDER_SPREAD */) placed.push(q);
  }
  let changes = 0;
  for (let i = 1; i < placed.length; i++) if (placed[i] !== placed[i - 1]) changes++;
  return { placed, changes };
}

t.test('runs keep a hot key\'s messages together: at most one change of partition per hotRun messages', async (t) => {
  const runs = run({ hotRun: 8 }, 4);
  const single = run({ hotRun: 1 }, 4);
  t.ok(runs.placed.length > 5000, `premise: ${runs.placed.length} spread messages of H in the second half`);
  t.ok(runs.changes <= Math.ceil(runs.placed.length / 8) + 2, `${runs.changes} changes for ${runs.placed.length} messages in runs of 8`);
  t.ok(single.changes > 2 * runs.changes, `premise: choosing every message changes more often (${single.changes})`);
});

t.test('the cap: at 48 partitions a run is at most 3 messages, so hotRun 8 and hotRun 3 place alike', async (t) => {
  const eight = run({ hotRun: 8 }, 48);
  const three = run({ hotRun: 3 }, 48);
  t.ok(eight.placed.length > 3000, `premise: ${eight.placed.length} spread messages of H`);
  t.same(eight.placed, three.placed, 'the same placements');
  const atFour = [run({ hotRun: 8 }, 4), run({ hotRun: 3 }, 4)];
  t.notSame(atFour[0].placed, atFour[1].placed, 'premise: at 4 partitions (cap 36) they differ');
});
