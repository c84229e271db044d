'use strict';
// When the Resequencer must release something out of order (timeout, capacity, flush), it
// releases the message whose predecessor is missing, and what waits behind it follows in
// order — not the oldest held message ahead of held predecessors. forget() drops a revoked
// partition's held messages and offsets.
const t = require('tap');
const { Resequencer, encodeOrderHeader, ORDER_SPREAD, ORDER_HEADER } = require('../..');

const PRODUCER = Buffer.from('0123456789abcdef', 'hex');
const offsets = new Map();
/** A spread message of key `k` with `sequence`, waiting for `previous`, on `partition`. */
function spread(partition, sequence, previous, k = 'k') {
  const offset = offsets.get(partition) ?? 0;
  offsets.set(partition, offset + 1);
  return {
    topic: 't', partition, offset, key: Buffer.from(k), value: Buffer.from(String(sequence)),
    headers: [{ [ORDER_HEADER]: encodeOrderHeader(ORDER_SPREAD, PRODUCER, sequence, previous, 3, 4, 0) }],
  };
}
const seqs = (released) => released.map((r) => `${r.message.value}${r.outOfOrder ? `!${r.reason}` : ''}`);

t.test('timeout: the chain is released from its first message, in order', async (t) => {
  let now = 0;
  const r = new Resequencer({ maxWaitMs: 100 }, () => now);
  // 4 (the predecessor of 5) was handled before a restart and never comes. 7 and 6 arrive
  // first (their partitions are read first), then 5.
  t.same(seqs(r.push(spread(2, 7, 6))), []);
  now = 10;
  t.same(seqs(r.push(spread(3, 6, 5))), []);
  now = 20;
  t.same(seqs(r.push(spread(1, 5, 4))), []);
  now = 99;
  t.same(seqs(r.expire()), [], 'nothing has waited 100 ms yet');
  now = 100;
  t.same(seqs(r.expire()), ['5!timeout', '6', '7'], 'once 7 has waited 100 ms, 5 goes first, flagged; 6 and 7 follow in order');
  t.equal(r.held, 0);
});

t.test('an older message released out of order does not stall the successor of a newer one', async (t) => {
  let now = 0;
  const r = new Resequencer({ maxWaitMs: 100 }, () => now);
  // After a restart: 12 and 13 (partition 3) follow 11, handled before; 10 (partition 2) was
  // handled before too but is read again, its predecessor 9 not; 14 (partition 2, after 10)
  // follows 13. Spread messages are ordered by their chain alone, not behind 10 in its partition.
  r.push(spread(3, 12, 11));
  now = 1;
  r.push(spread(3, 13, 12));
  now = 2;
  r.push(spread(2, 10, 9));
  r.push(spread(2, 14, 13));
  now = 101;
  t.same(seqs(r.expire()), ['12!timeout', '13', '14'], '12 waited long enough, 13 and 14 follow it');
  now = 102;
  t.same(seqs(r.expire()), ['10!timeout'], '10 goes flagged once it has waited long enough');
  t.equal(r.held, 0);
});

t.test('capacity: the same', async (t) => {
  const r = new Resequencer({ maxBufferedMessages: 2 });
  t.same(seqs(r.push(spread(2, 17, 16))), []);
  t.same(seqs(r.push(spread(3, 16, 15))), []);
  t.same(seqs(r.push(spread(1, 15, 14))), ['15!capacity', '16', '17']);
});

t.test('flush: the same', async (t) => {
  const r = new Resequencer();
  r.push(spread(2, 27, 26));
  r.push(spread(3, 26, 25));
  r.push(spread(1, 25, 24));
  t.same(seqs(r.flush()), ['25!flush', '26', '27']);
});

t.test('forget(): a revoked partition\'s held messages and offsets are dropped', async (t) => {
  let now = 0;
  const r = new Resequencer({ maxWaitMs: 100 }, () => now);
  const a = spread(5, 37, 36);
  r.push(a);
  r.push(spread(6, 36, 35));
  t.equal(r.held, 2);
  t.equal(r.committable('t', 5), a.offset);
  t.equal(r.forget('t', 6), 1, 'one message dropped');
  t.equal(r.held, 1);
  t.equal(r.committable('t', 6), undefined, 'nothing known of the forgotten partition');
  t.equal(r.committable('t', 5), a.offset, 'the other partition untouched');
  now = 200;
  t.same(seqs(r.expire()), ['37!timeout'], 'what waited for a dropped message is released by the timeout');
  t.equal(r.forget('t', 9), 0, 'an unknown partition: nothing dropped');
});
