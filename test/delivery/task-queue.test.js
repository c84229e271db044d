'use strict';
// TaskQueue (src/delivery/task-queue.ts) with a key's lane far longer than a call's arguments
// may be: a rebalance that drops a partition keeps the rest of the lane in release order, and
// the first task kept behind the dropped one is flagged 'unowned'.

const t = require('tap');
const { TaskQueue } = require('../../build/delivery/task-queue');

const LANE = 150000; // beyond what one spread call takes (about 120,000 arguments on Node 20)

function release(partition, offset) {
  return { message: { topic: 't', partition, offset, key: 'k', value: null }, ordered: true, order: null };
}

t.test('a lane of 150,000 tasks survives a drop, in order, the first kept one flagged', (t) => {
  const q = new TaskQueue();
  const pending = new Set();
  // One call at a time: no lanes yet, every task loose; the drop by key puts them in lanes.
  q.add(release(1, 0), 't/1', pending, false, false);
  for (let i = 0; i < LANE; i++) q.add(release(0, i), 't/0', pending, false, false);
  const removed = q.drop(new Set(['t/1']), true);
  t.equal(removed.length, 1, 'the dropped partition\'s one task leaves');
  t.equal(q.waiting, LANE, 'every other task stays');
  let expected = 0;
  let flagged = 0;
  let misordered = 0;
  for (let task = q.take(0); task !== undefined; task = q.take(0)) {
    if (task.release.message.offset !== expected) misordered++;
    if (task.release.reason === 'unowned') flagged++;
    expected++;
    q.finished(task);
  }
  t.equal(expected, LANE, 'all taken');
  t.equal(misordered, 0, 'in release order');
  t.equal(flagged, 1, 'only the first kept behind the dropped one is flagged');
  t.equal(q.laneCount, 0, 'the lane is gone once empty');
  t.end();
});

t.test('a lane hands its tasks out one at a time, in release order', (t) => {
  const q = new TaskQueue();
  const pending = new Set();
  for (let i = 0; i < LANE; i++) q.add(release(0, i), 't/0', pending, true, false);
  let task = q.take(0);
  t.equal(q.take(0), undefined, 'the lane is busy: nothing else may start');
  let n = 0;
  let misordered = 0;
  while (task !== undefined) {
    if (task.release.message.offset !== n) misordered++;
    n++;
    q.finished(task);
    task = q.take(0);
  }
  t.equal(n, LANE, 'every task taken once');
  t.equal(misordered, 0, 'in release order');
  t.equal(q.waiting, 0, 'none left waiting');
  t.end();
});
