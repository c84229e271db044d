'use strict';
// maxWaitMs bounds the wait for a predecessor that may never be read, not for one being handled
// (docs/ordering.md, "A group catching up on a backlog"): a message that waits for a predecessor
// another member's record shows read and not handled yet waits on past maxWaitMs, and goes in
// order once a record shows it handled; one whose predecessor no record shows read goes out
// flagged 'timeout' at maxWaitMs, as before.
const t = require('tap');
const { Resequencer, encodeOrderHeader, ORDER_HEADER, ORDER_ANCHOR, ORDER_SPREAD } = require('../..');

const TOPIC = 'coming';
const PID = '000000000000c000';

function message(partition, offset, header) {
  return { topic: TOPIC, partition, offset, key: Buffer.from('k'), value: Buffer.from(`${partition}:${offset}`), headers: [{ [ORDER_HEADER]: header }] };
}

/** A member owning partition 1, waiting for records of partition 0 (another member's); its clock is `clock.now`. */
function member() {
  const clock = { now: 0 };
  const r = new Resequencer({ maxWaitMs: 1000 }, () => clock.now);
  r.useRecords();
  r.assign(TOPIC, [1]);
  // Sequence 2 on partition 1, after sequence 1 on partition 0 (the other member's).
  const out = r.push(message(1, 7, encodeOrderHeader(ORDER_SPREAD, PID, 2, 1, 2, 2, 0, 0)));
  return { r, clock, out };
}

const record = (marked) => ({
  offset: 40, end: 42, unhandled: marked ? [40] : [], producers: [{ id: PID, read: 1 }], marked: marked ? [{ producer: 0, sequence: 1 }] : [],
});

t.test('a predecessor shown read and unhandled: the wait goes on past maxWaitMs, then in order', async (t) => {
  const { r, clock, out } = member();
  t.same(out, [], 'premise: held');
  t.same(r.setRecord(TOPIC, 0, record(true)), [], 'the record shows sequence 1 read at offset 40, unhandled');
  clock.now = 5000;
  t.same(r.expire(), [], 'past maxWaitMs: still held (its predecessor is coming)');
  t.equal(r.held, 1);
  clock.now = 9000;
  t.same(r.expire(), [], 'and again');
  const released = r.setRecord(TOPIC, 0, { ...record(false), offset: 41 });
  t.equal(released.length, 1, 'a record showing it handled releases it');
  t.equal(released[0].ordered, true, 'in order');
});

t.test('a predecessor no record shows read: flagged timeout at maxWaitMs', async (t) => {
  const { r, clock } = member();
  // The record knows the producer up to sequence 0 only: sequence 1 is not read there.
  r.setRecord(TOPIC, 0, { offset: 40, end: 40, unhandled: [], producers: [], marked: [] });
  clock.now = 1500;
  const released = r.expire();
  t.equal(released.length, 1, 'released');
  t.equal(released[0].ordered, false);
  t.equal(released[0].reason, 'timeout');
});

t.test('the renewed wait keeps the order of expiry: an older wait behind it still times out', async (t) => {
  const { r, clock } = member();
  r.setRecord(TOPIC, 0, record(true));
  // A second key's anchor... then its successor on partition 1 waits for partition 0's sequence 5, never read.
  const other = (offset, seq, prev) => ({ ...message(1, offset, encodeOrderHeader(ORDER_SPREAD, PID, seq, prev, 2, 2, 0, 0)), key: Buffer.from('j') });
  r.push({ ...message(1, 8, encodeOrderHeader(ORDER_ANCHOR, PID, 4, 0, 2, 2, 0)), key: Buffer.from('j') });
  clock.now = 10;
  t.same(r.push(other(9, 6, 5)), [], 'premise: held (sequence 5 is not read anywhere)');
  clock.now = 2000;
  const released = r.expire();
  t.same(released.map((x) => [x.message.offset, x.reason]), [[9, 'timeout']], 'the wait for what is not read times out; the one for what is coming does not');
  t.equal(r.held, 1);
});
