'use strict';
// The KeyHandoffs bookkeeping (src/producer/hold/key-handoffs.ts) alone, without a client: which messages wait, in
// what order they are released, and what their order header's `after` field says then.
const t = require('tap');
const { KeyHandoffs } = require('../../build/producer/hold/key-handoffs');
const { ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED } = require('../..');

const HEADER = 'kdp-order';
/** A header as OrderChains writes it: after = the previous message's partition (last field). */
const header = (kind, after) => ({ [HEADER]: `2;${kind};0011223344556677;9;8;1;4;0;${after}` });
const afterOf = (h) => h[HEADER].slice(h[HEADER].lastIndexOf(';') + 1);

function setup() {
  const released = [];
  const kept = new Set(); // entries the handoff asks to keep (DynamicPartitioner.hold())
  const h = new KeyHandoffs(8, (m) => released.push(m.name), (e, held) => {
    if (held === kept.has(e)) throw new Error(`entry ${e} kept ${held} twice`);
    if (held) kept.add(e);
    else kept.delete(e);
  });
  /** What the producer does for one message of entry `e`: returns whether it was held. */
  const send = (name, e, order, partition, after) => {
    let wait;
    let hd;
    let link;
    if (order !== undefined) {
      hd = header(order === ORDER_MOVED ? 'm' : order === ORDER_SPREAD ? 's' : order === ORDER_RETURN ? 'r' : 'a', after ?? '');
      wait = h.waitFor(e, order, 't', partition, hd);
      link = h.track(e, order, partition, name);
    }
    if (wait !== undefined || h.busy(e)) {
      h.hold(e, { name, topic: 't', header: hd, after: wait });
      return { held: true, link, header: hd };
    }
    released.push(name);
    return { held: false, link, header: hd };
  };
  return { h, released, send, kept };
}

t.test('a move waits for its predecessor\'s report, then names its offset; later messages of the key wait behind it', async (t) => {
  const { h, released, send, kept } = setup();
  const anchor = send('a', 0, ORDER_ANCHOR, 1);
  t.notOk(anchor.held, 'an anchor never waits');
  const move = send('m1', 0, ORDER_MOVED, 3, 1);
  t.ok(move.held, 'the first moved message after the anchor (another partition) waits');
  t.ok(send('m2', 0, ORDER_MOVED, 3, 3).held, 'the next one, same partition, waits behind it (FIFO)');
  t.ok(send('cold', 0, undefined, 1).held, 'an unmarked message of the same key waits too');
  t.notOk(send('other', 1, ORDER_MOVED, 2).held, 'another key does not wait (its chain has no predecessor)');
  t.equal(h.held, 3);
  t.same([...kept], [0], 'the entry with held messages is kept (never freed meanwhile)');
  h.settled(anchor.link, 1, 41);
  t.same(released, ['a', 'other', 'm1', 'm2', 'cold'], 'released in order once the report is in');
  t.equal(afterOf(move.header), '1:41', 'after = partition:offset of the anchor');
  t.equal(h.held, 0);
  t.same([...kept], [], 'and let go once its last is released');
});

t.test('the first spread message after a move waits for the move\'s report and names its offset (the move may have waited while later messages went to its partition)', async (t) => {
  const { h, released, send } = setup();
  const a = send('a', 5, ORDER_ANCHOR, 0);
  const m = send('m', 5, ORDER_MOVED, 1, 0);
  t.ok(m.held, 'premise: the move waits for the anchor');
  t.notOk(send('x', 6, ORDER_SPREAD, 1).held, "another key's message goes to the move's partition meanwhile");
  const s = send('s', 5, ORDER_SPREAD, 2, 1);
  t.ok(s.held, 'the key turned split: its first spread message, on another partition, waits');
  h.settled(a.link, 0, 7);
  t.same(released, ['a', 'x', 'm'], 'the move goes once the anchor is delivered; the spread message still waits');
  h.settled(m.link, 1, 30);
  t.same(released, ['a', 'x', 'm', 's'], 'then the spread message, once the move is delivered');
  t.equal(afterOf(s.header), '1:30', "naming the move's partition and offset");
  const s2 = send('s2', 5, ORDER_SPREAD, 3, 2);
  t.notOk(s2.held, 'the next spread message does not wait');
  t.equal(afterOf(s2.header), '2', 'and names its predecessor\'s partition only');
  // Delivered already: the offset goes in at once.
  const a7 = send('a7', 7, ORDER_ANCHOR, 0);
  const m7 = send('m7', 7, ORDER_MOVED, 1, 0);
  h.settled(a7.link, 0, 3);
  h.settled(m7.link, 1, 9);
  const s7 = send('s7', 7, ORDER_SPREAD, 2, 1);
  t.notOk(s7.held, 'a spread message after a delivered move does not wait');
  t.equal(afterOf(s7.header), '1:9', "and names the move's offset at once");
});

t.test('a known offset is written at once; the same partition, a split key and a failed predecessor never wait', async (t) => {
  const { h, send } = setup();
  const a = send('a', 2, ORDER_ANCHOR, 0);
  h.settled(a.link, 0, 7);
  const m = send('m', 2, ORDER_MOVED, 1, 0);
  t.notOk(m.held, 'predecessor delivered already: no wait');
  t.equal(afterOf(m.header), '0:7', 'and its offset is in the header at once');
  t.notOk(send('same', 2, ORDER_MOVED, 1, 1).held, 'same partition as the predecessor: no wait');
  t.equal(afterOf(send('same2', 2, ORDER_MOVED, 1, 1).header), '1', '... and no offset');
  // A split key: its spread messages never wait, nor does its return.
  send('a3', 3, ORDER_ANCHOR, 0);
  t.notOk(send('s1', 3, ORDER_SPREAD, 2, 0).held, 'a spread message never waits');
  t.notOk(send('r3', 3, ORDER_RETURN, 0, 2).held, 'the return of a split key does not wait');
  // A relocated key whose last message failed: the next move goes with its partition only.
  const a4 = send('a4', 4, ORDER_ANCHOR, 0);
  const m4 = send('m4', 4, ORDER_MOVED, 3, 0);
  t.ok(m4.held, 'premise: waits');
  h.settled(a4.link, 0, -1);
  t.equal(h.held, 0, 'released when its predecessor failed');
  t.equal(afterOf(m4.header), '0', 'after = the partition only');
});

t.test('the return of a relocated key waits for its last moved message', async (t) => {
  const { h, released, send } = setup();
  const a = send('a', 5, ORDER_ANCHOR, 0);
  h.settled(a.link, 0, 1);
  const m = send('m', 5, ORDER_MOVED, 2, 0);
  const r = send('r', 5, ORDER_RETURN, 0, 2);
  t.ok(r.held, 'the return (back to its own partition) waits');
  h.settled(m.link, 2, 99);
  t.same(released.slice(-2), ['m', 'r']);
  t.equal(afterOf(r.header), '2:99');
});

t.test('a report naming another partition (placed by librdkafka) is what after names', async (t) => {
  const { h, send } = setup();
  const a = send('a', 6, ORDER_ANCHOR, 0);
  const m = send('m', 6, ORDER_MOVED, 2, 0);
  h.settled(a.link, 3, 5);
  t.equal(afterOf(m.header), '3:5');
});

t.test('a release that settles another link of the same key (refused at once) releases each message once', async (t) => {
  const released = [];
  let h;
  const links = {};
  h = new KeyHandoffs(4, (m) => {
    released.push(m.name);
    if (m.name === 'm1') h.settled(links.m1, -1, -1); // refused at once: its successors go on
  }, () => {});
  const hd = () => header('m', '0');
  links.a = h.track(0, ORDER_ANCHOR, 0, 'a');
  const w1 = h.waitFor(0, ORDER_MOVED, 't', 2, hd());
  links.m1 = h.track(0, ORDER_MOVED, 2, 'm1');
  h.hold(0, { name: 'm1', topic: 't', header: hd(), after: w1 });
  const w2 = h.waitFor(0, ORDER_MOVED, 't', 3, hd());
  t.equal(w2, links.m1, 'premise: m2 waits for m1');
  h.track(0, ORDER_MOVED, 3, 'm2');
  h.hold(0, { name: 'm2', topic: 't', header: hd(), after: w2 });
  h.settled(links.a, 0, 10);
  t.same(released, ['m1', 'm2'], 'each once, in order');
  t.equal(h.held, 0);
});

t.test('take() empties it (a disconnect that could not wait)', async (t) => {
  const { h, send, kept } = setup();
  send('a', 1, ORDER_ANCHOR, 0);
  send('m', 1, ORDER_MOVED, 1, 0);
  send('c', 1, undefined, 0);
  t.same([...kept], [1]);
  t.same(h.take().map((m) => m.name), ['m', 'c']);
  t.equal(h.held, 0);
  t.notOk(h.busy(1));
  t.same([...kept], [], 'no entry kept');
});

t.test('with a gate, a move with a delivered predecessor waits until the gate lets it go; its key\'s later messages behind it', async (t) => {
  const { h, released, send } = setup();
  const asked = [];
  let holding = true;
  h.gate = (topic, partition, offset, heldMs) => { asked.push({ topic, partition, offset, heldMs }); return holding; };
  const a = send('a', 0, ORDER_ANCHOR, 1);
  h.settled(a.link, 1, 41);
  t.same(released, ['a'], 'premise: the anchor went');
  const m = send('m', 0, ORDER_MOVED, 3, 1);
  t.ok(m.held, 'the move waits though its predecessor\'s offset is known');
  t.same(asked[0], { topic: 't', partition: 1, offset: 41, heldMs: 0 }, 'the gate is asked about the predecessor');
  t.ok(send('m2', 0, ORDER_MOVED, 3, 3).held, 'the key\'s next message waits behind it');
  t.notOk(send('other', 1, ORDER_ANCHOR, 2).held, 'another key does not');
  t.equal(h.gatedKeys, 1);
  h.recheck();
  t.same(released, ['a', 'other'], 'still held while the gate says so');
  t.ok(asked.at(-1).heldMs >= 0 && asked.length >= 2, 'asked again on recheck()');
  holding = false;
  h.recheck();
  t.same(released, ['a', 'other', 'm', 'm2'], 'released in order once the gate opens');
  t.equal(afterOf(m.header), '1:41', 'with the predecessor\'s offset');
  t.equal(h.gatedKeys, 0);
  t.equal(h.held, 0);
});

t.test('with a gate, a move whose predecessor is in flight is asked about at its report; the gate\'s time counts from then', async (t) => {
  const { h, released, send } = setup();
  const asked = [];
  h.gate = (topic, partition, offset, heldMs) => { asked.push(heldMs); return heldMs < 30; };
  const a = send('a', 2, ORDER_ANCHOR, 0);
  const m = send('m', 2, ORDER_MOVED, 1, 0);
  t.ok(m.held);
  t.same(asked, [], 'not asked while the predecessor is in flight');
  h.settled(a.link, 0, 5);
  t.same(released, ['a'], 'held by the gate at the report');
  t.same(asked, [0]);
  await new Promise((r) => setTimeout(r, 40));
  h.recheck();
  t.same(released, ['a', 'm'], 'let go when the gate says it waited long enough');
  t.ok(asked.at(-1) >= 30, `asked with the time it waited (${asked.at(-1)} ms)`);
  t.equal(afterOf(m.header), '0:5');
});

t.test('with a gate, a failed predecessor, the same partition and a split key never wait for it; take() forgets gated keys', async (t) => {
  const { h, send } = setup();
  let asked = 0;
  h.gate = () => { asked++; return true; };
  const a = send('a', 3, ORDER_ANCHOR, 0);
  h.settled(a.link, 0, -1);
  t.notOk(send('m', 3, ORDER_MOVED, 2, 0).held, 'predecessor failed: no wait');
  send('a4', 4, ORDER_ANCHOR, 0);
  t.notOk(send('s4', 4, ORDER_SPREAD, 2, 0).held, 'a spread message never waits');
  const a5 = send('a5', 5, ORDER_ANCHOR, 1);
  h.settled(a5.link, 1, 9);
  t.notOk(send('same', 5, ORDER_MOVED, 1, 1).held, 'same partition: no wait');
  t.equal(asked, 0, 'the gate was not asked');
  const a6 = send('a6', 6, ORDER_ANCHOR, 1);
  h.settled(a6.link, 1, 10);
  t.ok(send('m6', 6, ORDER_MOVED, 0, 1).held, 'premise: gated');
  t.same(h.take().map((m) => m.name), ['m6']);
  t.equal(h.gatedKeys, 0);
  t.equal(h.held, 0);
});

t.test('a gate taken away (the monitor stopped): recheck() lets its keys go, and none is left counted', async (t) => {
  const { h, released, send } = setup();
  h.gate = () => true;
  const a = send('a', 7, ORDER_ANCHOR, 0);
  h.settled(a.link, 0, 3);
  t.ok(send('m', 7, ORDER_MOVED, 2, 0).held, 'premise: gated');
  t.equal(h.gatedKeys, 1);
  h.gate = undefined;
  h.recheck();
  t.same(released, ['a', 'm']);
  t.equal(h.gatedKeys, 0);
  t.equal(h.held, 0);
});
