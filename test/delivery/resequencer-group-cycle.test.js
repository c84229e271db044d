'use strict';
// Two consumers waiting for each other's committed offsets (docs/ordering.md, "Order in a
// group"): a limit where members share only their committed offsets (engine 'client', which
// commits no metadata), gone where they share handled records (the native engine), which show
// each predecessor handled whatever is held below it.
//
// Without records: Consumer X holds a handoff that waits for the group's
// committed offset of a partition of consumer Y to pass its predecessor; Y cannot commit that
// far because it holds a message below it, which waits (through a chain and a lane of Y's own
// partitions) for a handoff that waits for X's committed offset, which X's held message keeps
// low. Nothing breaks the cycle but maxWaitMs: the messages then go flagged `timeout`, in order
// behind them what waited, and none is lost.
//
// The logs below are one interleaving three producers can write when one producer's message
// to one partition is delayed (a stalled connection to that partition's leader): producer P1's
// anchor of key k (partition 2) is written after everything else here, though P1 sent it
// before its spread message of k to partition 0. Headers are written by hand as
// docs/ordering.md specifies them.
const t = require('tap');
const { Resequencer, ORDER_HEADER } = require('../..');
const { encodeRecord, decodeRecord } = require('../../build/delivery/handled-record');

const P1 = '00000000000000a1';
const P2 = '00000000000000a2';
const P3 = '00000000000000a3';
const header = (kind, id, sequence, previous, after) => `2;${kind};${id};${sequence};${previous};1;3;0;${after}`;
const msg = (partition, offset, key, h) => ({
  topic: 't', partition, offset, key, value: Buffer.from(`${partition}@${offset}`), headers: h ? [{ [ORDER_HEADER]: h }] : [],
});
const names = (out) => out.map((r) => `${r.message.value}${r.ordered ? '' : `!${r.reason}`}`);

// Partition 0 and 2 are Y's, partition 1 is X's. Key k's normal partition is 2; key k2's is 0.
const LOGS = {
  // P2: anchor of k (seq 1) on k's partition; then k moved to partition 1 (seq 2), whose
  // delivery report came before P2 sent the return home (seq 3, after 1:20).
  2: [
    msg(2, 1, 'k', header('a', P2, 1, 0, '')),
    msg(2, 5, 'k', header('r', P2, 3, 2, '1:20')),
    msg(2, 6, 'k', header('a', P1, 1, 0, '')), // P1's anchor of k, sent before 0@25, written late
  ],
  0: [
    msg(0, 25, 'k', header('s', P1, 2, 1, '2')), // P1's spread message of k: its predecessor is on partition 2
    msg(0, 30, 'k2', header('a', P3, 1, 0, '')), // P3's anchor of k2 on k2's partition
  ],
  1: [
    msg(1, 10, 'k2', header('m', P3, 2, 1, '0:30')), // P3 moved k2 here once 0@30 was delivered
    msg(1, 20, 'k', header('m', P2, 2, 1, '2:1')), // P2 moved k here once 2@1 was delivered
  ],
};

/** Each consumer's committed offsets passed to the other, as DynamicConsumer does (committable → setCommitted). */
function exchange(from, fromPartitions, to) {
  const out = [];
  for (const p of fromPartitions) {
    const c = from.committable('t', p);
    if (c !== undefined) out.push(...to.setCommitted('t', p, c));
  }
  return out;
}

t.test('two consumers waiting for each other\'s commits: broken by maxWaitMs, flagged, nothing lost', async (t) => {
  let now = 0;
  const x = new Resequencer({ maxWaitMs: 30_000 }, () => now);
  const y = new Resequencer({ maxWaitMs: 30_000 }, () => now);
  x.assign('t', [1]);
  y.assign('t', [0, 2]);
  const handled = { x: [], y: [] };
  const take = (who, out) => handled[who].push(...names(out));

  // Each consumer reads its partitions in offset order, interleaved.
  take('y', y.push(LOGS[2][0]));
  take('x', x.push(LOGS[1][0]));
  take('y', y.push(LOGS[0][0]));
  take('x', exchange(y, [0, 2], x));
  take('x', x.push(LOGS[1][1]));
  take('y', y.push(LOGS[0][1]));
  take('y', y.push(LOGS[2][1]));
  take('y', y.push(LOGS[2][2]));
  // The group commits and reads committed offsets many times over; no time passes for maxWaitMs.
  for (let round = 0; round < 10; round++) {
    take('x', exchange(y, [0, 2], x));
    take('y', exchange(x, [1], y));
  }
  t.same(handled.x, ['1@20'], 'X: P2\'s move of k went once Y\'s commit passed 2@1; P3\'s move of k2 (1@10) waits for 0@30');
  t.same(handled.y, ['2@1', '0@30'], 'Y: the rest waits');
  t.equal(x.held + y.held, 4, 'four messages held: 1@10 on X; 0@25, 2@5, 2@6 on Y');
  t.equal(x.committable('t', 1), 10, 'X cannot commit partition 1 past its held 1@10 (so 2@5 waits)');
  t.equal(y.committable('t', 0), 25, 'Y cannot commit partition 0 past its held 0@25 (so 1@10 waits)');
  t.same(x.expire(), [], 'before maxWaitMs nothing is given up');

  now = 30_000;
  take('x', x.expire());
  take('y', y.expire());
  for (let round = 0; round < 3; round++) {
    take('x', exchange(y, [0, 2], x));
    take('y', exchange(x, [1], y));
  }
  t.equal(x.held + y.held, 0, 'after maxWaitMs nothing is held');
  const all = [...handled.x, ...handled.y].map((n) => n.replace(/!.*/, '')).sort();
  t.same(all, ['0@25', '0@30', '1@10', '1@20', '2@1', '2@5', '2@6'], 'every message handled once');
  t.ok([...handled.x, ...handled.y].some((n) => n.endsWith('!timeout')), 'the cycle was broken by a timeout, flagged');
});

/** Each consumer's handled records passed to the other, through their text, as DynamicConsumer commits and reads them (here handled = released). */
function exchangeRecords(from, fromPartitions, to) {
  const out = [];
  for (const p of fromPartitions) {
    const offset = from.committable('t', p);
    if (offset === undefined) continue;
    const text = encodeRecord(from.recordOf('t', p, offset, [], []));
    out.push(...to.setRecord('t', p, decodeRecord(text, offset)));
  }
  return out;
}

t.test('with handled records the same interleaving waits for no timeout: every message in order, none flagged', async (t) => {
  const now = 0;
  const x = new Resequencer({ maxWaitMs: 30_000 }, () => now);
  const y = new Resequencer({ maxWaitMs: 30_000 }, () => now);
  x.useRecords();
  y.useRecords();
  x.assign('t', [1]);
  y.assign('t', [0, 2]);
  const handled = { x: [], y: [] };
  const sequence = []; // both members' handling, in the order it happened
  const take = (who, out) => {
    handled[who].push(...names(out));
    sequence.push(...names(out));
  };
  take('y', y.push(LOGS[2][0]));
  take('x', x.push(LOGS[1][0]));
  take('y', y.push(LOGS[0][0]));
  take('x', exchangeRecords(y, [0, 2], x));
  take('x', x.push(LOGS[1][1]));
  take('y', y.push(LOGS[0][1]));
  take('y', y.push(LOGS[2][1]));
  take('y', y.push(LOGS[2][2]));
  for (let round = 0; round < 10 && x.held + y.held > 0; round++) {
    take('x', exchangeRecords(y, [0, 2], x));
    take('y', exchangeRecords(x, [1], y));
  }
  t.equal(x.held + y.held, 0, 'nothing held, with no time passed (no maxWaitMs)');
  const all = [...handled.x, ...handled.y];
  t.same(all.filter((n) => n.includes('!')), [], 'none flagged');
  t.same(all.sort(), ['0@25', '0@30', '1@10', '1@20', '2@1', '2@5', '2@6'], 'every message handled once');
  // Per producer and key, send order, across members: P2's k 2@1 (Y), 1@20 (X), 2@5 (Y); P1's k
  // 2@6 (Y) then 0@25 (Y); P3's k2 0@30 (Y) then 1@10 (X).
  const before = (a, b) => sequence.indexOf(a) >= 0 && sequence.indexOf(a) < sequence.indexOf(b);
  t.ok(before('2@1', '1@20') && before('1@20', '2@5'), "P2's messages of k in send order across X and Y");
  t.ok(before('2@6', '0@25'), "P1's anchor of k before its spread message");
  t.ok(before('0@30', '1@10'), "P3's messages of k2 in send order across Y and X");
});
