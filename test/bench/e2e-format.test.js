'use strict';
// bench:e2e's closing line, its order-violation count and its output file names, on hand-made
// figures (no Kafka).

const t = require('tap');
const { unexplainedOrderViolations, OUT_OF_ORDER, NOT_ORDERED, HAS_ORDERED } = require('../../bench/e2e/stats');
const { lastLine, resequencerLine, handlersLine, svgFile } = require('../../bench/e2e/format');
const { lagChart } = require('../../bench/e2e/svg');
const { MOVED, SPREAD, SPLIT, run } = require('./lib/records');
const FLAGGED = OUT_OF_ORDER | HAS_ORDERED | NOT_ORDERED;

t.test('unexplained order violations: every one of a key never split, flagged or not', async (t) => {
  // A cold key handled 0, 2, 1: one violation, nothing flagged.
  const cold = run([[0, 0, 0, 0], [2, 2, 0, 0], [1, 1, 0, 0]]);
  t.equal(cold.violations, 1);
  t.equal(unexplainedOrderViolations(cold), 1);
  // A relocated key overtaken across a flagged message: summarizeRun explains it by the flag,
  // but a key relocated whole is handed out in order, so it still counts.
  const relocated = run([[0, 0, 0, MOVED], [2, 2, FLAGGED, MOVED], [1, 1, HAS_ORDERED, MOVED]]);
  t.equal(relocated.unexplainedViolations, 0);
  t.same(relocated.violationsByKeyClass, { cold: 0, relocated: 1, split: 0 });
  t.equal(unexplainedOrderViolations(relocated), 1);
});

t.test('unexplained order violations: a split key\'s only without a flag on the way', async (t) => {
  const explained = run([[0, 0, 0, 0], [2, 2, FLAGGED, SPREAD | SPLIT], [1, 1, HAS_ORDERED, SPREAD | SPLIT], [3, 3, HAS_ORDERED, SPREAD | SPLIT]]);
  t.equal(explained.violations, 1);
  t.equal(unexplainedOrderViolations(explained), 0);
  const unexplained = run([[0, 0, 0, SPREAD | SPLIT], [2, 2, HAS_ORDERED, SPREAD | SPLIT], [1, 1, HAS_ORDERED, SPREAD | SPLIT]]);
  t.equal(unexplained.violations, 1);
  t.equal(unexplainedOrderViolations(unexplained), 1);
  const inOrder = run([[0, 0, 0, 0], [1, 1, FLAGGED, SPREAD | SPLIT], [2, 2, HAS_ORDERED, SPREAD | SPLIT]]);
  t.equal(unexplainedOrderViolations(inOrder), 0);
});

/** The fields lastLine reads, as a run of bench/e2e.js has them. */
function side(name, { maxLag, p99, drain, capped = false, violations }) {
  const r = { side: name, maxLag, latencyMs: { p50: 1, p99, max: p99 }, drainSeconds: capped ? null : drain, drainCapped: capped, drainCap: 120, lost: 0, duplicated: 0 };
  return name === 'dynamic' ? { ...r, ...violations } : r;
}

t.test('the closing line: static and dynamic figures, the dynamic run\'s unexplained violations, lost and dup', async (t) => {
  const violations = { violationsByKeyClass: { cold: 0, relocated: 2, split: 40 }, unexplainedViolations: 3, unexplainedViolationsNotSplit: 2 };
  const runs = [side('static', { maxLag: 9756, p99: 21047.24, drain: 20.94 }), { ...side('dynamic', { maxLag: 1420, p99: 4083.6, drain: 4.5, violations }), lost: 1, duplicated: 7 }];
  t.equal(lastLine(runs), 'e2e: static max-lag 9756 p99 21047.2 ms drain 20.9 s | dynamic max-lag 1420 p99 4083.6 ms drain 4.5 s | order violations 3 lost 1 dup 7');
});

t.test('the closing line: a drain that reached the cap, a side not run', async (t) => {
  t.equal(lastLine([side('static', { maxLag: 50000, p99: 90000, capped: true })]),
    'e2e: static max-lag 50000 p99 90000.0 ms drain >120 s | dynamic max-lag - p99 - ms drain - s | order violations - lost - dup -');
  const violations = { violationsByKeyClass: { cold: 0, relocated: 0, split: 0 }, unexplainedViolations: 0, unexplainedViolationsNotSplit: 0 };
  t.equal(lastLine([side('dynamic', { maxLag: 0, p99: 12, drain: 0, violations })]),
    'e2e: static max-lag - p99 - ms drain - s | dynamic max-lag 0 p99 12.0 ms drain 0.0 s | order violations 0 lost 0 dup 0');
});

t.test('chart files: the given name for one scenario or the first, the scenario before the extension for the others', async (t) => {
  const both = ['steady', 'slow-consumer'];
  t.equal(svgFile('lag.svg', 'steady', both), 'lag.svg');
  t.equal(svgFile('lag.svg', 'slow-consumer', both), 'lag-slow-consumer.svg');
  t.equal(svgFile('out/lag.svg', 'slow-consumer', ['slow-consumer']), 'out/lag.svg');
  t.equal(svgFile('out.d/chart', 'slow-consumer', both), 'out.d/chart-slow-consumer');
  t.equal(svgFile('.svg', 'slow-consumer', both), '.svg-slow-consumer');
});

t.test('the lag chart marks the slowdown with its label', async (t) => {
  const series = [{ name: 'static', points: [[0, 0], [10, 100], [20, 0]], stopAt: 15 }];
  const svg = lagChart(series, 'title', [{ at: 10, label: 'consumer 0 at 1/2 <slow>' }]);
  t.match(svg, /<text [^>]*>consumer 0 at 1\/2 &lt;slow&gt;<\/text>/);
  // x axis 0..20 over 70..740 px: second 10 at 405.
  t.match(svg, /<line x1="405" x2="405"[^>]*stroke="#777"/);
  t.notMatch(lagChart(series, 'title'), /stroke="#777"/);
});

t.test('the resequencer line: the dynamic run\'s latency beside the unordered run\'s, only when both ran', async (t) => {
  const dynamic = { ...side('dynamic', { maxLag: 0, p99: 812.34, drain: 0 }), scenario: 'steady' };
  dynamic.latencyMs.p50 = 201.26;
  const unordered = { ...side('unordered', { maxLag: 0, p99: 640, drain: 0 }), scenario: 'steady' };
  unordered.latencyMs.p50 = 180;
  t.equal(resequencerLine([dynamic, unordered]),
    'e2e resequencer (steady): latency p50 201.3 ms p99 812.3 ms with order headers, p50 180.0 ms p99 640.0 ms with orderHeaders \'none\'');
  t.equal(resequencerLine([dynamic]), undefined);
});

t.test('the handlers line (--handler-ms): every run\'s max lag, p99 and unexplained violations, static\'s all of them; none without --handler-ms', async (t) => {
  const clean = { violationsByKeyClass: { cold: 0, relocated: 0, split: 5 }, unexplainedViolations: 0, unexplainedViolationsNotSplit: 0 };
  // Static has no flags: its violations are all of a never-split (cold) key.
  const broken = { violationsByKeyClass: { cold: 3, relocated: 0, split: 0 }, unexplainedViolations: 3, unexplainedViolationsNotSplit: 3 };
  const runs = [
    { ...side('static', { maxLag: 812, p99: 140.26, drain: 1 }), ...broken, scenario: 'steady', handlerMs: 2, concurrency: 64 },
    { ...side('dynamic', { maxLag: 95, p99: 21.04, drain: 1, violations: clean }), scenario: 'steady', handlerMs: 2, concurrency: 64 },
  ];
  t.equal(handlersLine(runs),
    'e2e handlers (steady): 2 ms per message, 64 calls at once | static max-lag 812 p99 140.3 ms order violations 3 | dynamic max-lag 95 p99 21.0 ms order violations 0');
  t.equal(handlersLine([{ ...runs[1], concurrency: 1 }]), 'e2e handlers (steady): 2 ms per message, 1 call at once | dynamic max-lag 95 p99 21.0 ms order violations 0');
  t.equal(handlersLine(runs.map((r) => ({ ...r, handlerMs: null }))), undefined);
});
