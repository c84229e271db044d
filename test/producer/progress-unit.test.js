'use strict';
// The handoff gate (src/producer/hold/progress.ts) alone: when a move waits in the producer for the
// consumers of the partition its key left. The figures are worked by hand from the rule: a
// partition whose committed offset is c and advances at r messages per ms reaches a
// predecessor at offset o in (o + 1 - c) / r ms; the move waits while that is over 250 ms.
const t = require('tap');
const { ConsumerProgress, HOLD_FROM_MS } = require('../../build/producer/hold/progress');

const progress = (over = {}) => {
  const p = new ConsumerProgress();
  p.update('t', { committed: [100, 100, 100], perMs: [0.1, 0, NaN], at: Date.now(), intervalMs: 1000, holdMs: 10_000, ...over });
  return p;
};

t.test('a move waits while its old partition\'s consumers need over 250 ms to reach its predecessor', async (t) => {
  t.equal(HOLD_FROM_MS, 250);
  const p = progress();
  t.ok(p.holds('t', 0, 150, 0), '51 messages at 0.1/ms: 510 ms, it waits');
  t.notOk(p.holds('t', 0, 120, 0), '21 messages at 0.1/ms: 210 ms, it goes');
  t.notOk(p.holds('t', 0, 99, 0), 'committed past it already: it goes');
  t.ok(p.holds('t', 1, 101, 0), 'consumers that stand still: it waits');
  t.notOk(p.holds('t', 1, 99, 0), '... unless they are past it');
  t.notOk(p.holds('t', 2, 500, 0), 'pace not known (first read): it goes');
  t.notOk(p.holds('t', 3, 500, 0), 'a partition the read did not have: it goes');
  t.notOk(progress({ committed: [NaN, 100, 100], perMs: [0, 0, 0] }).holds('t', 0, 500, 0), 'a partition the group never committed: it goes');
  t.notOk(p.holds('other', 0, 500, 0), 'a topic the monitor does not read: it goes');
});

t.test('it waits at most holdMs, not on stale progress, and not during a flush', async (t) => {
  const p = progress({ holdMs: 2000 });
  t.ok(p.holds('t', 1, 500, 1999), 'within holdMs');
  t.notOk(p.holds('t', 1, 500, 2000), 'holdMs reached');
  t.notOk(progress({ at: Date.now() - 3001 }).holds('t', 1, 500, 0), 'read over three intervals ago');
  t.ok(progress({ at: Date.now() - 2500 }).holds('t', 1, 500, 0), 'read within three intervals');
  p.open(true);
  p.open(true);
  t.notOk(p.holds('t', 1, 500, 0), 'a flush under way');
  p.open(false);
  t.notOk(p.holds('t', 1, 500, 0), 'another one still under way');
  p.open(false);
  t.ok(p.holds('t', 1, 500, 0), 'all ended');
  p.update('t', undefined);
  t.ok(p.empty);
  t.notOk(p.holds('t', 1, 500, 0), 'forgotten');
});

t.test('the consumers\' progress since the read counts', async (t) => {
  // Read 400 ms ago at 0.1/ms: about 40 messages handled since.
  const p = progress({ at: Date.now() - 400 });
  t.notOk(p.holds('t', 0, 150, 0), '51 - 40 = 11 messages left: 110 ms, it goes');
  t.ok(p.holds('t', 0, 175, 0), '76 - 40 = 36 left: 360 ms, it waits');
});

t.test('several groups (one LagMonitor each): a move waits while any of them is behind; each one\'s stop counts alone', async (t) => {
  const p = new ConsumerProgress();
  const fast = {};
  const slow = {};
  const at = Date.now();
  p.update('t', { committed: [1000], perMs: [1], at, intervalMs: 1000, holdMs: 10_000 }, fast);
  p.update('t', { committed: [100], perMs: [0.1], at, intervalMs: 1000, holdMs: 10_000 }, slow);
  t.ok(p.holds('t', 0, 150, 0), 'the slow group needs 510 ms to pass offset 150: it waits');
  p.update('t', undefined, slow);
  t.notOk(p.holds('t', 0, 150, 0), 'that group\'s monitor stopped: the other one is past it');
  t.notOk(p.empty, 'the other group is still known');
  p.update('t', undefined, fast);
  t.ok(p.empty);
});
