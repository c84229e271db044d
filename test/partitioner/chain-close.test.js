'use strict';
// A hot key's chain (docs/ordering.md, "Order markers") closes with a RETURN before another
// opens: a key the sweep cooled while its messages were away owes a RETURN on its next
// message, and that message carries it even when the key is hot enough to turn hot again
// there (it turns hot on a later message). An ANCHOR with the old chain open would not wait
// for the old chain's last messages, on partitions a reader may not have read yet: a reader
// would release it, and what follows on the key's own partition, before them.
//
// Where a key turns hot again on its next message: at 64 partitions a fair share of a
// 200-message horizon is about 4.5 recent messages, so the hot line (0.1 fair shares) is
// below one message and a key the sweep cooled (below 0.05 fair shares) is above it again
// with its next message (minHotMessages 0).
const t = require('tap');
const { DynamicPartitioner } = require('../..');
const { ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED } = require('../../build/core/abi');
const { prng } = require('./lib/helpers');

const N = 64;

t.test('a key cooled while away: its next message returns, its chain opens again after', async (t) => {
  const p = new DynamicPartitioner({ relocate: false, horizon: { messages: 200 }, loadHorizon: { messages: 200 }, minHotMessages: 0, warmupMessages: 0 });
  const cooled = [];
  p.on('cooled', (h) => cooled.push(String(h.key)));
  const rand = prng(0x5eed);
  const decide = (key) => {
    p.decide('t', key, N);
    return p.decision.order;
  };
  for (let i = 0; i < 4000; i++) decide(rand() < 0.3 ? 'H' : `c-${Math.floor(rand() * 1e6)}`);
  t.equal(decide('H'), ORDER_SPREAD, 'premise: H is hot and split');
  // H stops: the sweep cools it while its messages are away.
  let others = 0;
  while (!cooled.includes('H') && others < 100_000) {
    decide(`c-${Math.floor(rand() * 1e6)}`);
    others++;
  }
  t.ok(cooled.includes('H'), `premise: the sweep cooled H after ${others} other messages`);
  t.equal(decide('H'), ORDER_RETURN, "H's next message closes its chain");
  t.equal(decide('H'), ORDER_ANCHOR, 'the one after opens a new chain (H is hot again)');
  t.equal(decide('H'), ORDER_SPREAD, 'and goes on split');
  p.close();
});

t.test('over phases of heat and silence, no chain opens while one is open', async (t) => {
  const p = new DynamicPartitioner({ relocate: false, horizon: { messages: 200 }, loadHorizon: { messages: 200 }, minHotMessages: 0, warmupMessages: 0 });
  const rand = prng(0xc4a1);
  const open = new Map();
  let anchors = 0;
  let returns = 0;
  let bad = 0;
  for (let phase = 0; phase < 60; phase++) {
    const share = [0.3, 0, 0.05, 0.2, 0][phase % 5];
    for (let i = 0; i < 800; i++) {
      const key = rand() < share ? `H${phase % 3}` : `c-${Math.floor(rand() * 1e6)}`;
      p.decide('t', key, N);
      const order = p.decision.order;
      if (order === ORDER_ANCHOR) {
        anchors++;
        if (open.get(key)) bad++;
        open.set(key, true);
      } else if (order === ORDER_RETURN) {
        returns++;
        open.set(key, false);
      } else if ((order === ORDER_SPREAD || order === ORDER_MOVED) && !open.get(key)) bad++;
    }
  }
  p.close();
  t.ok(anchors > 10 && returns > 10, `premise: chains opened (${anchors}) and closed (${returns})`);
  t.equal(bad, 0, 'every ANCHOR with no chain open, every spread message within an open chain');
});
