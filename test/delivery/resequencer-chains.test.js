'use strict';
// The Resequencer's memory of chains (producer and key) is bounded: a chain ends when its
// RETURN is released, and one idle longer than maxChainIdleMs is forgotten by expire().
// Order headers are made with encodeOrderHeader, as the producer makes them.
const t = require('tap');
const { Resequencer, encodeOrderHeader, ORDER_HEADER, InvalidOptionError } = require('../..');

const ANCHOR = 1;
const SPREAD = 2;
const RETURN = 3;

function message(partition, offset, key, kind, producer, sequence, previous) {
  const headers = kind ? [{ [ORDER_HEADER]: encodeOrderHeader(kind, producer, sequence, previous, 2, 4, 0) }] : undefined;
  return { topic: 't', partition, offset, key, value: Buffer.from(`${key}:${sequence}`), headers };
}

t.test('a chain is forgotten when its RETURN is released, in order', async (t) => {
  const r = new Resequencer();
  const id = '00000000000000aa';
  const got = [];
  const feed = (m) => got.push(...r.push(m));
  feed(message(0, 0, 'k', ANCHOR, id, 1, 0));
  feed(message(1, 0, 'k', SPREAD, id, 2, 1));
  t.equal(r.chainCount, 1, 'one chain while the key is spread');
  feed(message(0, 1, 'k', RETURN, id, 3, 2));
  t.equal(r.chainCount, 0, 'none after its RETURN');
  t.same(got.map((x) => [x.message.value.toString(), x.outOfOrder]), [['k:1', false], ['k:2', false], ['k:3', false]], 'all in order');
  // The key turns hot again: a new chain from an ANCHOR, in order as before.
  feed(message(0, 2, 'k', ANCHOR, id, 4, 0));
  feed(message(2, 0, 'k', SPREAD, id, 5, 4));
  t.equal(got.filter((x) => x.outOfOrder).length, 0, 'nothing out of order');
  t.equal(r.chainCount, 1);
});

t.test('chains idle longer than maxChainIdleMs are forgotten by expire(), and not before', async (t) => {
  let now = 0;
  const r = new Resequencer({ maxChainIdleMs: 60_000 }, () => now);
  for (let p = 0; p < 100; p++) {
    const id = p.toString(16).padStart(16, '0');
    r.push(message(0, 2 * p, `k${p}`, ANCHOR, id, 1, 0));
    r.push(message(1, p, `k${p}`, SPREAD, id, 2, 1));
    now += 100;
  }
  t.equal(r.chainCount, 100, '100 producers, one chain each');
  now = 60_000 + 4_950; // chains released at 0 .. 9,900 ms; those before 4,950 ms are idle over a minute
  r.expire();
  t.equal(r.chainCount, 50, 'the 50 idle ones are forgotten');
  // A chain touched again moves to the end: it is kept while older ones go.
  r.push(message(1, 100, 'k99', SPREAD, (99).toString(16).padStart(16, '0'), 3, 2));
  now = 60_000 + 20_000;
  r.expire();
  t.equal(r.chainCount, 1, 'only the one released again stays');
  const late = r.push(message(2, 0, 'k0', SPREAD, '0000000000000000', 3, 2));
  t.same(late, [], 'a message of a forgotten chain waits for its predecessor');
  now += r.options.maxWaitMs + 1;
  t.same(r.expire().map((x) => [x.outOfOrder, x.reason]), [[true, 'timeout']], 'and goes after maxWaitMs, flagged');
});

t.test('maxChainIdleMs is validated', async (t) => {
  t.throws(() => new Resequencer({ maxChainIdleMs: -1 }), InvalidOptionError);
  t.throws(() => new Resequencer({ maxChainIdleMs: 1.5 }), InvalidOptionError);
  t.equal(new Resequencer().options.maxChainIdleMs, 3_600_000, 'default: an hour');
});
