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

// splitRunMs: a split key's runs last RUN_TICKS ticks of the run clock (the partitioner's timer
// ticks RUN_TICKS times per splitRunMs; here the test ticks it by hand, every `every` messages
// of the stream), bounded by a quarter of a partition's recent fair share, and are hotRun's
// until the clock first ticks.
const { RUN_TICKS } = require('../../build/core/abi');

/** As run(), ticking the core's run clock every `every` messages of the stream (0: never); `afterTick` marks each H message that follows a tick. */
function timed(options, n, every, messages = 40_000) {
  const p = new DynamicPartitioner(options);
  const rand = prng(9);
  const placed = [];
  const afterTick = [];
  let ticked = false;
  for (let i = 0; i < messages; i++) {
    if (every > 0 && i % every === 0) {
      p.core.exports.runTick();
      ticked = true;
    }
    const hot = rand() < 0.3;
    const q = p.decide('t', hot ? 'H' : `c-${Math.floor(rand() * 1e6)}`, n);
    if (hot && i >= messages / 2 && p.decision.order === 2 /* ORDER_SPREAD */) {
      placed.push(q);
      afterTick.push(ticked);
    }
    if (hot) ticked = false;
  }
  p.close();
  const changes = [];
  for (let i = 1; i < placed.length; i++) if (placed[i] !== placed[i - 1]) changes.push(i);
  return { placed, afterTick, changes };
}

t.test('splitRunMs: before the run clock ticks, a split key\'s runs are hotRun\'s', async (t) => {
  const untimed = run({ hotRun: 8, splitRunMs: 0 }, 12);
  const waiting = timed({ hotRun: 8, splitRunMs: 60_000 }, 12, 0);
  t.ok(untimed.placed.length > 5000, `premise: ${untimed.placed.length} spread messages of H`);
  t.same(waiting.placed, untimed.placed, 'the same placements as without timed runs');
});

t.test('splitRunMs: a split key changes partition only at a tick, after RUN_TICKS of them', async (t) => {
  t.equal(RUN_TICKS, 4, 'premise: four ticks per splitRunMs');
  const every = 40; // a run spans 3 to 4 ticks: 120-160 messages of the stream, about 36-48 of H
  const r = timed({ hotRun: 8, splitRunMs: 60_000 }, 12, every);
  t.ok(r.placed.length > 5000, `premise: ${r.placed.length} spread messages of H`);
  t.ok(r.changes.length > 0, `the runs end (${r.changes.length} changes)`);
  t.same(r.changes.filter((i) => !r.afterTick[i]), [], 'every change of partition is at the first message after a tick');
  const ticks = 20_000 / every;
  t.ok(r.changes.length <= ticks / (RUN_TICKS - 1), `at most one change per ${RUN_TICKS - 1} ticks (${r.changes.length} for ${ticks} ticks)`);
  const hotRuns = run({ hotRun: 8, splitRunMs: 0 }, 12);
  t.ok(r.changes.length * 3 < hotRuns.changes, `far fewer changes than runs of hotRun (${hotRuns.changes})`);
});

t.test('splitRunMs: with a clock that stops, a run ends by count (a quarter of a fair share)', async (t) => {
  // One tick, then none: every run is bounded by 0.25 x 14427 / 12 = 300 messages of H.
  const r = timed({ hotRun: 8, splitRunMs: 60_000 }, 12, 20_000_000);
  const spans = r.changes.map((c, i) => c - (i === 0 ? 0 : r.changes[i - 1])).slice(1);
  t.ok(spans.length > 10, `the runs end without the clock (${spans.length + 1} changes)`);
  t.ok(Math.max(...spans) <= 2 * 301, `no run past twice the bound (the same partition may be chosen twice): longest ${Math.max(...spans)}`);
  t.ok(spans.filter((s) => s > 301).length <= spans.length / 4, 'most runs within the bound');
  t.ok(spans.filter((s) => s > 100).length >= spans.length / 2, `most runs far past hotRun (${spans.filter((s) => s > 100).length} of ${spans.length} past 100)`);
});
