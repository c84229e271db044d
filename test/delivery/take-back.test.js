'use strict';
// Members that wait for each other's handled records (groupOrder 'wait'): when a partition
// leaves, the messages of a key that waited in the handler queue behind one of its messages
// that left go back to the resequencer and wait there for it to be handled by its next owner
// (its record says so), instead of going out flagged 'unowned' at once; without records they
// still go flagged. And the resequencer's lanes take a message held again below members held
// since in its place by offset.
const t = require('tap');
const { Dispatcher } = require('../../build/delivery/dispatch');
const { Resequencer, encodeOrderHeader, ORDER_HEADER, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN } = require('../..');

const TOPIC = 'take-back';
const PID = '000000000000b000';
const tick = () => new Promise((resolve) => setImmediate(resolve));

function message(partition, offset, header) {
  return {
    topic: TOPIC, partition, offset, key: Buffer.from('k'), value: Buffer.from(`${partition}:${offset}`),
    headers: header === undefined ? [] : [{ [ORDER_HEADER]: header }],
  };
}

/** A resequencer and dispatcher as DynamicConsumer wires them; the handler call of 1:0 waits for gate(). */
function consumer(records) {
  const r = new Resequencer({ maxWaitMs: 60_000 }, () => 0);
  if (records) r.useRecords();
  r.assign(TOPIC, [0, 1]);
  const c = { r, owned: new Set([0, 1]), told: new Map(), handled: [], gate: undefined };
  c.d = new Dispatcher(r, { retries: 0, retryBackoffMs: 0, ordering: 'key' }, {
    handle: (m, info) => {
      const id = `${m.partition}:${m.offset}`;
      c.told.set(id, info);
      if (id !== '1:0') return void c.handled.push(id);
      return new Promise((resolve) => {
        c.gate = resolve;
      }).then(() => void c.handled.push(id));
    },
    owns: (tp) => c.owned.has(Number(tp.slice(TOPIC.length + 1))),
    handlerError: () => t.fail('no handler fails'),
    fail: () => t.fail('nothing gives up'),
    progress: () => {},
  });
  c.d.begin(4);
  // One producer's key k: an unmarked message on partition 1 (its call waits), then ANCHOR 0:0
  // (sequence 1), SPREAD 1:1 (2, after partition 0, offset not known), SPREAD 1:2 (3, after 1:1).
  c.d.accept(r.push(message(1, 0)));
  c.d.accept(r.push(message(0, 0, encodeOrderHeader(ORDER_ANCHOR, PID, 1, 0, 2, 2, 0))));
  c.d.accept(r.push(message(1, 1, encodeOrderHeader(ORDER_SPREAD, PID, 2, 1, 2, 2, 0, 0))));
  c.d.accept(r.push(message(1, 2, encodeOrderHeader(ORDER_SPREAD, PID, 3, 2, 2, 2, 0, 1))));
  return c;
}

/** Partition 0 leaves, as DynamicConsumer revokes it: drop(), then forget() once no call of it is under way. */
function revoke0(c) {
  c.owned.delete(0);
  c.d.drop([{ topic: TOPIC, partition: 0 }]);
  c.d.forget([{ topic: TOPIC, partition: 0 }]);
}

t.test("with records: what waited behind the anchor that left waits for its next owner's record, then goes in order", async (t) => {
  const c = consumer(true);
  t.equal(c.d.waiting, 3, 'premise: the anchor and the two spread messages wait behind the call of 1:0');
  revoke0(c);
  c.gate();
  await tick();
  t.same(c.handled, ['1:0'], 'nothing of the chain handled: its anchor left unhandled');
  t.equal(c.r.held, 2, 'the two spread messages are held again by the resequencer');
  t.equal(c.d.ledger.safeOffset(TOPIC, 1), 1, 'partition 1 is committed below them');
  t.same(c.r.awaited(), [{ topic: TOPIC, partition: 0 }], "partition 0's record is read for them");
  // Partition 0's next owner handled 0:0 and committed offset 1 (sequence 1 of the producer read there).
  c.d.accept(c.r.setRecord(TOPIC, 0, { offset: 1, end: 1, unhandled: [], producers: [{ id: PID, read: 1 }], marked: [] }));
  await tick();
  t.same(c.handled, ['1:0', '1:1', '1:2'], 'then they go, in order');
  t.same([c.told.get('1:1').ordered, c.told.get('1:2').ordered], [true, true], 'neither flagged');
  t.equal(c.d.ledger.safeOffset(TOPIC, 1), 3, 'and partition 1 may be committed past them');
});

t.test('with records: the partition comes back here, the anchor is read again and goes first', async (t) => {
  const c = consumer(true);
  revoke0(c);
  c.gate();
  await tick();
  c.owned.add(0);
  c.d.assign([{ topic: TOPIC, partition: 0 }]);
  c.d.accept(c.r.push(message(0, 0, encodeOrderHeader(ORDER_ANCHOR, PID, 1, 0, 2, 2, 0))));
  await tick();
  t.same(c.handled, ['1:0', '0:0', '1:1', '1:2'], 'the anchor, then what waited for it');
  t.ok([...c.told.values()].every((info) => info.ordered), 'none flagged');
});

t.test("with records: a call of the partition leaving that fails after the revoke gives its key's waiting messages back to the resequencer", async (t) => {
  const r = new Resequencer({ maxWaitMs: 60_000 }, () => 0);
  r.useRecords();
  r.assign(TOPIC, [0, 1]);
  const owned = new Set([0, 1]);
  const told = new Map();
  const handled = [];
  let reject;
  const errors = [];
  const d = new Dispatcher(r, { retries: 0, retryBackoffMs: 0, ordering: 'key' }, {
    handle: (m, info) => {
      const id = `${m.partition}:${m.offset}`;
      told.set(id, info);
      if (id !== '0:0') return void handled.push(id);
      return new Promise((_, no) => {
        reject = no;
      });
    },
    owns: (tp) => owned.has(Number(tp.slice(TOPIC.length + 1))),
    handlerError: (e) => errors.push(e.message),
    fail: () => t.fail('nothing gives up'),
    progress: () => {},
  });
  d.begin(4);
  // ANCHOR 0:0 in a call; SPREAD 1:1 (after partition 0) and 1:2 wait behind it in the key's lane.
  d.accept(r.push(message(0, 0, encodeOrderHeader(ORDER_ANCHOR, PID, 1, 0, 2, 2, 0))));
  d.accept(r.push(message(1, 1, encodeOrderHeader(ORDER_SPREAD, PID, 2, 1, 2, 2, 0, 0))));
  d.accept(r.push(message(1, 2, encodeOrderHeader(ORDER_SPREAD, PID, 3, 2, 2, 2, 0, 1))));
  t.equal(d.waiting, 2, 'premise: two wait behind the call of 0:0');
  owned.delete(0);
  d.drop([{ topic: TOPIC, partition: 0 }]);
  reject(new Error('the database went away'));
  await tick();
  d.forget([{ topic: TOPIC, partition: 0 }]);
  t.equal(errors.length, 1, 'the failed call was reported');
  t.same(handled, [], 'neither handled: the anchor is its next owner\'s to handle');
  t.equal(r.held, 2, 'both held again by the resequencer');
  d.accept(r.setRecord(TOPIC, 0, { offset: 1, end: 1, unhandled: [], producers: [{ id: PID, read: 1 }], marked: [] }));
  await tick();
  t.same(handled, ['1:1', '1:2'], "once partition 0's record shows the anchor handled, in order");
  t.ok(told.get('1:1').ordered && told.get('1:2').ordered, 'neither flagged');
});

t.test('without records: the first message kept behind the one that left goes flagged, as before', async (t) => {
  const c = consumer(false);
  revoke0(c);
  c.gate();
  await tick();
  t.same(c.handled, ['1:0', '1:1', '1:2'], 'handled at once');
  t.same(c.told.get('1:1'), { ordered: false, outOfOrder: true, reason: 'unowned', order: c.told.get('1:1').order }, "the anchor's successor flagged 'unowned'");
  t.equal(c.told.get('1:2').ordered, true, 'what follows it is in order after it');
});

t.test("a message held again goes in its lane's place by offset, before members held since", async (t) => {
  const r = new Resequencer({ maxWaitMs: 60_000 }, () => 0);
  r.assign(TOPIC, [0, 1]);
  // RETURN 1:5 (sequence 5, after 0:?) waits for its predecessor (sequence 4) on partition 0; an
  // unmarked message of the key after it (1:6) waits behind it in its lane.
  const out = [];
  out.push(...r.push(message(1, 5, encodeOrderHeader(ORDER_RETURN, PID, 5, 4, 2, 2, 0, 0))));
  out.push(...r.push(message(1, 6)));
  t.same(out, [], 'premise: both held');
  // RETURN 1:2 (sequence 3, after 0), of the chain's earlier episode, pushed again now: it goes before 1:5 in the lane.
  out.push(...r.push(message(1, 2, encodeOrderHeader(ORDER_RETURN, PID, 3, 2, 2, 2, 0, 0))));
  t.same(out, [], 'it waits for its own predecessor');
  out.push(...r.push(message(0, 7, encodeOrderHeader(ORDER_SPREAD, PID, 4, 3, 2, 2, 0, 1))));
  t.same(out.map((x) => `${x.message.partition}:${x.message.offset}`), [], "sequence 4 waits for sequence 3 (1:2), which waits for 2");
  out.push(...r.push(message(0, 1, encodeOrderHeader(ORDER_SPREAD, PID, 2, 1, 2, 2, 0, 0))));
  t.same(out.map((x) => `${x.message.partition}:${x.message.offset}`), ['0:1', '1:2', '0:7', '1:5', '1:6'],
    'sequence 2 goes, then 1:2 before the lane members read after it, and the chain in order');
  t.ok(out.every((x) => x.ordered), 'none flagged');
});
