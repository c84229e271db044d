'use strict';
// stats().topics[topic]: messages, spreadMessages and movedMessages, cumulative per topic, against
// the same figures counted here per message: moved from Kafka's partition of each key
// (partitionForKey), spread from each decision's order marker.
const t = require('tap');
const { DynamicPartitioner, partitionForKey, ORDER_NONE } = require('../..');
const { zipfIndexes, keyNames } = require('./lib/helpers');

t.test('per-topic counters equal per-message counts', async (t) => {
  const names = keyNames(10_000);
  const p = new DynamicPartitioner();
  const want = { a: { messages: 0, spread: 0, moved: 0 }, b: { messages: 0, spread: 0, moved: 0 } };
  const home = { a: names.map((k) => partitionForKey(k, 12)), b: names.map((k) => partitionForKey(k, 4)) };
  const ia = zipfIndexes(1.1, names.length, 200_000, 3);
  const ib = zipfIndexes(0.9, names.length, 200_000, 4);
  for (let i = 0; i < ia.length; i++) {
    for (const [topic, n, k] of [['a', 12, ia[i]], ['b', 4, ib[i]]]) {
      const q = p.decide(topic, names[k], n);
      const w = want[topic];
      w.messages++;
      if (p.decision.order !== ORDER_NONE) w.spread++;
      if (q !== home[topic][k]) w.moved++;
    }
  }
  // Null keys: counted as messages, never moved (they have no partition of their own).
  for (let i = 0; i < 100; i++) p.partition('a', null, 12);
  want.a.messages += 100;
  const s = p.stats().topics;
  for (const topic of ['a', 'b']) {
    t.same({ messages: s[topic].messages, spread: s[topic].spreadMessages, moved: s[topic].movedMessages }, want[topic], `topic ${topic}`);
    t.ok(want[topic].moved > 0 && want[topic].spread > 0, `premise: topic ${topic} spread keys (${want[topic].spread} marked, ${want[topic].moved} moved)`);
  }
});

t.test('spread: false counts messages, never spread or moved ones', async (t) => {
  const names = keyNames(1000);
  const p = new DynamicPartitioner({ spread: false });
  const idx = zipfIndexes(1.2, names.length, 50_000, 5);
  for (const k of idx) p.partition('t', names[k], 8);
  t.match(p.stats().topics.t, { messages: 50_000, spreadMessages: 0, movedMessages: 0 });
  t.ok(p.hotKeys('t').length > 0, 'hot keys detected all the same');
});
