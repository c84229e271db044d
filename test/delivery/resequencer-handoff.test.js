'use strict';
// Consumer groups: a message whose predecessor is on a partition this consumer does not own is
// never held for that other consumer. With the predecessor's offset (a handoff, `after` =
// partition:offset) it waits until the group's committed offset of that partition has passed it;
// with only its partition it goes at once, flagged `unowned`. Headers are written as
// docs/ordering.md specifies them, by hand, so that the test does not depend on our encoder.
const t = require('tap');
const { Resequencer, ORDER_HEADER } = require('../..');

const ID = '00000000000000cd';
const header = (kind, sequence, previous, after) => `2;${kind};${ID};${sequence};${previous};1;4;0;${after}`;
const msg = (partition, offset, h, key = 'k') => ({ topic: 't', partition, offset, key, value: Buffer.from(`${partition}@${offset}`), headers: h ? [{ [ORDER_HEADER]: h }] : [] });
const names = (out) => out.map((r) => `${r.message.value}${r.ordered ? '' : `!${r.reason}`}`);

t.test('a handoff from another consumer\'s partition waits for the group\'s committed offset, then goes in order', async (t) => {
  const r = new Resequencer();
  r.assign('t', [1]);
  // The key moved from partition 0 (another consumer's) at offset 41 to partition 1.
  t.same(names(r.push(msg(1, 7, header('m', 12, 11, '0:41')))), [], 'held: the move\'s first message');
  t.same(names(r.push(msg(1, 8, header('m', 13, 12, '1')))), [], 'and its successor behind it (chain)');
  t.same(names(r.push(msg(1, 9, null, 'other'))), ['1@9'], 'other keys pass');
  t.same(r.awaited(), [{ topic: 't', partition: 0 }], 'partition 0 is awaited');
  t.equal(r.committable('t', 1), 7, 'nothing at or above the held message is committable');
  t.same(names(r.setCommitted('t', 0, 41)), [], 'committed 41: message 41 not handled yet');
  t.same(names(r.setCommitted('t', 0, 42)), ['1@7', '1@8'], 'committed past 41: both go, in order, not flagged');
  t.same(r.awaited(), [], 'nothing awaited any more');
  t.equal(r.held, 0);
});

t.test('a handoff whose predecessor is below where this consumer started reading goes at once', async (t) => {
  const r = new Resequencer();
  r.assign('t', [0, 1]);
  // This consumer owns both partitions but started partition 0 at its committed offset 50 (a
  // rebalance): message 41 was handled by the partition's previous owner.
  t.same(names(r.push(msg(1, 3, header('m', 5, 4, '0:41')))), [], 'held until partition 0\'s start is known');
  t.same(names(r.push(msg(0, 50, null, 'x'))), ['1@3', '0@50'], 'partition 0 starts at 50 > 41: the handoff goes first, in order');
  t.same(names(r.push(msg(1, 4, header('m', 21, 20, '0:52'), 'k2'))), [], 'another key\'s handoff from offset 52, not read yet, waits');
  t.same(names(r.push(msg(0, 51, null, 'x'))), ['0@51']);
  t.same(names(r.push(msg(0, 52, header('a', 20, 0, ''), 'k2'))), ['0@52', '1@4'], 'its predecessor read: both go, in order');
  t.same(r.awaited(), [], 'owned partitions are never awaited from the group');
});

t.test('without an offset: owned → waits for the predecessor; another consumer\'s → goes at once, flagged unowned', async (t) => {
  const r = new Resequencer();
  r.assign('t', [0, 2]);
  t.same(names(r.push(msg(0, 0, header('a', 1, 0, '')))), ['0@0'], 'anchor');
  t.same(names(r.push(msg(1 + 1, 0, header('s', 3, 2, '1')))), ['2@0!unowned'], 'predecessor on partition 1 (not ours): at once, flagged');
  t.same(names(r.push(msg(0, 1, header('s', 5, 4, '2')))), [], 'predecessor 4 on partition 2 (ours): waits');
  t.same(names(r.push(msg(2, 1, header('s', 4, 3, '2')))), ['2@1', '0@1'], 'then both in order');
  t.equal(r.held, 0);
  const one = r.push(msg(2, 2, header('s', 7, 6, '3')))[0];
  t.match(one, { ordered: false, outOfOrder: true, reason: 'unowned', order: { producerId: ID, sequence: 7, previous: 6, afterPartition: 3 } }, 'the handler gets the chain to apply its own rule');
});

t.test('standalone (no assign): every partition counts as owned', async (t) => {
  let now = 0;
  const r = new Resequencer({ maxWaitMs: 100 }, () => now);
  t.same(names(r.push(msg(1, 0, header('s', 3, 2, '0')))), [], 'waits for its predecessor on partition 0');
  now = 100;
  t.same(names(r.expire()), ['1@0!timeout'], 'until maxWaitMs');
});

t.test('a predecessor on the message\'s own partition, offset unknown, not read here: below where this consumer started, it goes at once', async (t) => {
  const now = 0;
  const r = new Resequencer({ maxWaitMs: 30000 }, () => now);
  r.assign('t', [0]);
  // Partition 0 changed owner: this consumer starts it at the group's committed offset 20. The
  // key's message 7 (sequence 7) was on partition 0 too, below 20: the previous owner handled it.
  t.same(names(r.push(msg(0, 20, header('s', 8, 7, '0')))), ['0@20'], 'its predecessor came earlier on its own partition: not waited for');
  t.same(names(r.push(msg(0, 21, header('s', 9, 8, '0')))), ['0@21'], 'and its successor follows it');
  // Read here and still held (waiting for its own predecessor, on partition 1 of this consumer):
  // a successor on the same partition waits behind it.
  r.assign('t', [0, 1]);
  t.same(names(r.push(msg(0, 22, header('s', 31, 30, '1'), 'k2'))), [], 'waits for 30 (partition 1, ours)');
  t.same(names(r.push(msg(0, 23, header('s', 32, 31, '0'), 'k2'))), [], 'its successor on the same partition waits behind it');
  t.same(names(r.push(msg(1, 5, header('s', 30, 29, '1'), 'k2'))), ['1@5', '0@22', '0@23'], '30 (its predecessor came before it on partition 1) goes, then both, in order');
  t.equal(r.held, 0);
});
