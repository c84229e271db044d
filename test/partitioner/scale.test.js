'use strict';
// Scaling with the producer's work: a topic's detection does not depend on the traffic of
// other topics (each topic's message-count horizons count its own messages), topics beyond
// maxTopics never cost an eviction per message, and a topic of 1,024 partitions is balanced
// within 2% of random-placement noise.
const t = require('tap');
const { DynamicPartitioner, partitionForKey } = require('../..');
const { prng, keyNames, zipfIndexes } = require('./lib/helpers');

const N = 48;
const background = keyNames(5000, 'bg-');

/**
 * Sends `messages` messages to topic 'main' (key 'H' with probability 2%, else background),
 * each followed by `others` messages, one to each of `others` other topics. Returns the
 * index among main's messages at which 'H' turned hot (-1: never) and the partitioner.
 */
function detect(others, messages) {
  const p = new DynamicPartitioner({ sketch: { sampling: 1 } });
  const rand = prng(5);
  let hotAt = -1;
  let i = 0;
  p.on('hot', (h) => { if (h.topic === 'main' && h.key === 'H' && hotAt < 0) hotAt = i; });
  for (; i < messages; i++) {
    p.partition('main', rand() < 0.02 ? 'H' : background[Math.floor(rand() * background.length)], N);
    for (let o = 0; o < others; o++) p.partition(`other-${o}`, `o-${background[Math.floor(rand() * background.length)]}`, N);
  }
  return { hotAt, p };
}

t.test("a topic's hot key is found the same with 0 or 32 other topics' traffic", async (t) => {
  const alone = detect(0, 20_000);
  const crowded = detect(32, 20_000);
  t.ok(alone.hotAt > 0, `premise: 'H' (2% of main, ~0.96 fair shares) turns hot alone, after ${alone.hotAt} messages of main`);
  t.ok(crowded.hotAt > 0, `with 32 other topics (main has 1/33 of the messages), after ${crowded.hotAt} messages of main`);
  t.ok(crowded.hotAt <= 2 * alone.hotAt && crowded.hotAt >= alone.hotAt / 2,
    `found after a like number of main's messages (${crowded.hotAt} vs ${alone.hotAt})`);
  const a = alone.p.stats().topics.main;
  const c = crowded.p.stats().topics.main;
  t.ok(Math.abs(a.recentMessages - c.recentMessages) <= 1e-9 * a.recentMessages,
    `main's recent messages count main's messages only (${c.recentMessages.toFixed(3)} vs ${a.recentMessages.toFixed(3)})`);
  const sa = alone.p.share('main', 'H');
  const sc = crowded.p.share('main', 'H');
  t.ok(Math.abs(sa - sc) < 0.002, `'H' has the same share of main (${sc.toFixed(4)} vs ${sa.toFixed(4)})`);
  t.same(crowded.p.hotKeys('main').map((h) => h.key), ['H'], "main's hot keys are main's");
});

t.test('past maxTopics: no eviction per message, topics without state are counted and warned about', async (t) => {
  // 65 busy topics with 64 slots: the 65th goes without state; no slot is ever given up.
  const p = new DynamicPartitioner();
  const warnings = [];
  p.on('warning', (w) => warnings.push(w.code));
  const rand = prng(6);
  for (let r = 0; r < 2000; r++) {
    for (let topic = 0; topic < 65; topic++) p.partition(`t${topic}`, background[Math.floor(rand() * background.length)], 12);
  }
  let s = p.stats();
  t.equal(s.evictions, 0, `65 busy topics, 130,000 decisions: ${s.evictions} evictions`);
  t.equal(s.topicsWithoutState, 1, 'one topic without state');
  t.equal(Object.keys(s.topics).length, 64, '64 with state');
  t.same(warnings, ['KDP_TOPIC_CAPACITY'], 'one warning');
  // 20,000 topics of 10 messages each, one after another, over 8 slots: idle topics give their
  // slots up, but evictions stay rare (at most one per 1024 decisions), whatever the churn.
  const q = new DynamicPartitioner({ maxTopics: 8 });
  const topics = 20_000;
  let decisions = 0;
  for (let i = 0; i < topics * 10; i++, decisions++) q.partition(`u${Math.floor(i / 10)}`, background[i % background.length], 12);
  s = q.stats();
  t.ok(s.evictions > 0, `premise: idle topics gave their slots up (${s.evictions})`);
  t.ok(s.evictions <= 1 + decisions / 1024, `${s.evictions} evictions in ${decisions} decisions: at most one per 1024`);
  t.equal(Object.keys(s.topics).length, 8, 'every slot taken');
  // Topics without state are kept up to max(1024, 16 × maxTopics): forgotten-topics.test.js.
  t.ok(s.topicsWithoutState > 0 && s.topicsWithoutState <= 1024, `${s.topicsWithoutState} topics without state kept, at most 1024 of the ${topics - s.evictions - 8}`);
  // A topic without state is partitioned as Kafka would.
  const stateless = `u${topics - 1}`;
  t.notOk(stateless in s.topics, `premise: ${stateless} has no state`);
  for (const key of ['a', 'b', 'c']) t.equal(q.partition(stateless, key, 12), partitionForKey(key, 12), `${stateless}: ${key} on Kafka's partition`);
});

t.test('1,024 partitions: balance within 2% of random-placement noise on Zipf 1.0', async (t) => {
  const n = 1024;
  const keys = keyNames(100_000, 'z-');
  const warm = 200_000;
  const measured = 800_000;
  const idx = zipfIndexes(1.0, keys.length, warm + measured, 11);
  const p = new DynamicPartitioner();
  const load = new Float64Array(n);
  for (let i = 0; i < idx.length; i++) {
    const q = p.partition('wide', keys[idx[i]], n);
    if (i >= warm) load[q]++;
  }
  const imbalance = (Math.max(...load) * n) / measured;
  // Random placement of W messages over n partitions: the hottest is ~ 1 + 2.5 sqrt(n / W) times the mean.
  const noise = 1 + 2.5 * Math.sqrt(n / measured);
  let staticMax = 0;
  const statically = new Float64Array(n);
  for (let i = warm; i < idx.length; i++) statically[partitionForKey(keys[idx[i]], n)]++;
  staticMax = (Math.max(...statically) * n) / measured;
  t.ok(staticMax > noise + 0.02, `premise: Kafka's placement is well above noise (${staticMax.toFixed(3)})`);
  t.ok(imbalance <= noise + 0.02, `hottest / mean ${imbalance.toFixed(3)} within 2% of noise ${noise.toFixed(3)}`);
});
