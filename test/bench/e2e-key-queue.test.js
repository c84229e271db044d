'use strict';
// bench:e2e's static peer with --handler-ms and --concurrency (bench/e2e/key-queue.js): up to the
// limit of calls at once, never two of one key, each key in consume order, keyless messages
// independent, stored offsets below the lowest message not handled (no Kafka).

const t = require('tap');
const { KeyQueue } = require('../../bench/e2e/key-queue');
const { prng } = require('../lib/random-keys');

const tick = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('random messages over keys and partitions, random call lengths: the limit, key order, stored offsets', async (t) => {
  for (const [seed, limit] of [[1, 1], [2, 4], [3, 64]]) {
    const rand = prng(seed);
    const under = new Map();
    const order = new Map();
    const handled = new Set();
    let running = 0;
    let most = 0;
    let overlaps = 0;
    let passed = 0;
    const stored = new Map();
    const q = new KeyQueue(limit, async (m) => {
      const key = m.key === null ? null : m.key.toString();
      running++;
      most = Math.max(most, running);
      if (key !== null) {
        if (under.get(key)) overlaps++;
        under.set(key, true);
        order.set(key, [...(order.get(key) ?? []), m.n]);
      }
      await tick(Math.floor(rand() * 3));
      if (key !== null) under.set(key, false);
      handled.add(`${m.partition}:${m.offset}`);
      running--;
    }, (m, offset) => {
      if (offset === undefined) return;
      if (offset <= (stored.get(m.partition) ?? 0)) passed++; // never back
      for (let o = stored.get(m.partition) ?? 0; o < offset; o++) if (!handled.has(`${m.partition}:${o}`)) passed++;
      stored.set(m.partition, offset);
    });
    const next = [0, 0, 0];
    const sent = new Map();
    for (let n = 0; n < 600; n++) {
      const key = rand() < 0.1 ? null : Buffer.from(`k${Math.floor(rand() * 20)}`);
      const partition = Math.floor(rand() * 3);
      if (key !== null) sent.set(key.toString(), [...(sent.get(key.toString()) ?? []), n]);
      q.add({ key, partition, offset: next[partition]++, n });
      if (q.size >= 100) await q.below(50);
    }
    await q.below(0);
    t.equal(handled.size, 600, `limit ${limit}: every message handled`);
    t.ok(most <= limit && (limit === 1 || most > 1), `limit ${limit}: up to ${most} calls at once`);
    t.equal(overlaps, 0, `limit ${limit}: never two calls of one key`);
    t.same(order, sent, `limit ${limit}: each key in the order added`);
    t.equal(passed, 0, `limit ${limit}: stored offsets never pass a message not handled, never go back`);
    t.same([...stored.values()], [...stored.keys()].map((p) => next[p]), `limit ${limit}: each partition stored at its end`);
  }
});

t.test('a slow key holds only itself back; keyless messages run at once', async (t) => {
  let open;
  const gate = new Promise((resolve) => {
    open = resolve;
  });
  const started = [];
  const q = new KeyQueue(8, (m) => {
    started.push(m.offset);
    return m.key !== null && m.key.toString() === 'slow' ? gate : tick(1);
  }, () => {});
  q.add({ key: Buffer.from('slow'), partition: 0, offset: 0 });
  q.add({ key: Buffer.from('slow'), partition: 0, offset: 1 });
  q.add({ key: null, partition: 0, offset: 2 });
  q.add({ key: null, partition: 0, offset: 3 });
  q.add({ key: Buffer.from('other'), partition: 0, offset: 4 });
  t.same(started, [0, 2, 3, 4], 'the slow key once; the keyless ones and another key at once');
  await tick(10);
  t.equal(q.size, 2, "the slow key's two messages not handled");
  open();
  await q.below(0);
  t.same(started, [0, 2, 3, 4, 1], "the slow key's second after its first");
});
