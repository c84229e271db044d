'use strict';
// bench:e2e's order figures on hand-made records: a violation is explained only by a flag on a
// message of the same producer and key sent after the late one, up to the one that overtook it.

const t = require('tap');
const { summarizeRun, lagSlope, OUT_OF_ORDER, NOT_ORDERED, HAS_ORDERED } = require('../../bench/e2e/stats');
const { MOVED, SPREAD, SPLIT, part, run } = require('./lib/records');

t.test('a split key overtaken across a flagged message: explained', async (t) => {
  const flagged = OUT_OF_ORDER | HAS_ORDERED | NOT_ORDERED;
  const r = run([[0, 0, 0, 0], [2, 2, flagged, SPREAD | SPLIT], [1, 1, HAS_ORDERED, SPREAD | SPLIT], [3, 3, HAS_ORDERED, SPREAD | SPLIT]]);
  t.equal(r.violations, 1);
  t.same(r.violationsByKeyClass, { cold: 0, relocated: 0, split: 1 });
  t.equal(r.unexplainedViolations, 0);
  t.equal(r.splitMessages, 3);
  t.equal(r.splitOrderedShare, 2 / 3);
  t.same(r.keysByClass, { relocated: 0, split: 1 });
});

t.test('a flag on the late message itself or after the overtaking one explains nothing', async (t) => {
  const flagged = OUT_OF_ORDER | HAS_ORDERED | NOT_ORDERED;
  const r = run([[0, 0, 0, 0], [2, 2, HAS_ORDERED, MOVED], [1, 1, flagged, MOVED], [3, 3, flagged, MOVED]]);
  t.equal(r.violations, 1);
  t.same(r.violationsByKeyClass, { cold: 0, relocated: 1, split: 0 });
  t.equal(r.unexplainedViolations, 1);
  t.equal(r.unexplainedViolationsNotSplit, 1);
  t.equal(r.splitOrderedShare, null);
});

t.test('in order: no violation, duplicates counted once', async (t) => {
  const rows = [[0, 0, 0, 0], [1, 1, HAS_ORDERED, MOVED], [1, 1, HAS_ORDERED, MOVED], [2, 2, HAS_ORDERED, MOVED]];
  const producers = [{ sent: 3, ackedMask: new Uint8Array(3).fill(1) }];
  const r = summarizeRun({ producers, parts: [part(rows)], consumers: 1, keys: 1 });
  t.equal(r.violations, 0);
  t.equal(r.duplicated, 1);
  t.equal(r.lost, 0);
  t.equal(r.unexplainedViolations, 0);
});

t.test('latency is of the messages sent in the measured window; the other figures of all', async (t) => {
  // Four messages handled at 1000..1003; sent at 900, 950, 990, 995: from 950 on, three are in
  // the window, with latencies 1001-950 = 51, 1002-990 = 12 and 1003-995 = 8.
  const rows = [[0, 0, 0, 0], [1, 1, 0, 0], [2, 2, 0, 0], [3, 3, 0, 0]];
  const records = part(rows);
  [900, 950, 990, 995].forEach((sent, i) => { records.sent[i] = sent; });
  const producers = [{ sent: 4, ackedMask: new Uint8Array(4).fill(1) }];
  const all = summarizeRun({ producers, parts: [records], consumers: 1, keys: 1 });
  t.equal(all.latencyMs.max, 100, 'no window: every message (1000 - 900)');
  const windowed = summarizeRun({ producers, parts: [records], consumers: 1, keys: 1, measureFrom: 950 });
  t.equal(windowed.latencyMs.max, 51);
  t.equal(windowed.latencyMs.p50, 12);
  t.equal(windowed.handled, 4, 'handled, lost and order are counted over every message');
  t.equal(windowed.lost, 0);
});

t.test('lag growth: the least-squares slope of the samples in the window', async (t) => {
  // total = 50 t + 400 exactly from t = 10 to 70; samples outside the window are ignored.
  const samples = [{ t: 2, total: 9000 }];
  for (let s = 10; s <= 70; s += 5) samples.push({ t: s, total: 50 * s + 400 });
  samples.push({ t: 80, total: 0 });
  t.equal(lagSlope(samples, 10, 70), 50);
  t.equal(lagSlope([{ t: 1, total: 5 }, { t: 2, total: 3 }, { t: 3, total: 4 }], 0, 10), -0.5, 'slope of (1,5), (2,3), (3,4)');
  t.ok(Number.isNaN(lagSlope([{ t: 1, total: 5 }], 0, 10)), 'one sample: no slope');
});
