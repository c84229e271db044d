'use strict';
// A producer writing to an endless stream of topic names (per tenant, per day) while every
// topic slot is busy: the topics it partitions without state are kept up to
// max(1024, 16 × maxTopics), as DynamicProducer keeps its topics; a new one beyond makes it
// forget the least recently used quarter at once. stats().topicsWithoutState counts the topics
// the partitioner holds beyond those with state, so it shows whether they stay bounded. A topic
// with state is never forgotten this way, and a forgotten topic's keys still go to Kafka's
// partition (partitionForKey, which the Java vectors check independently).
const t = require('tap');
const { DynamicPartitioner, partitionForKey, partitionForKeys } = require('../..');

const N = 12;

/** The documented bound on topics without state (docs/design.md). */
const kept = (maxTopics) => Math.max(1024, 16 * maxTopics);

/** Counts the TopicCapacityError warnings per topic: a topic gets one when it is new to the partitioner. */
function warningsOf(p) {
  const count = new Map();
  p.on('warning', (w) => {
    if (w.code === 'KDP_TOPIC_CAPACITY') count.set(w.topic, (count.get(w.topic) ?? 0) + 1);
  });
  return count;
}

t.test('a stream of new topics with every slot busy: bounded, a quarter forgotten at once, topics with state kept', async (t) => {
  const maxTopics = 4;
  const bound = kept(maxTopics);
  const p = new DynamicPartitioner({ maxTopics });
  const warnings = warningsOf(p);
  // S0 holds a hot key and then stays idle: the least recently used topic of all, yet with state
  // (idle for fewer than max(16384, 16 × maxTopics) decisions, so no slot is taken from it).
  for (let i = 0; i < 2000; i++) p.partition('S0', i % 2 === 0 ? 'S0-hot' : `S0-${i}`, N);
  const busy = ['B1', 'B2', 'B3'];
  for (const b of busy) p.partition(b, 'k', N);
  t.same(Object.keys(p.stats().topics).sort(), ['B1', 'B2', 'B3', 'S0'], 'every slot taken');
  t.same(p.hotKeys('S0').map((h) => h.key), ['S0-hot'], 'S0 has a hot key');
  const s0Messages = p.stats().topics.S0.messages;

  // A topic without state used all along stays among the most recently used: never forgotten.
  p.partition('kept', 'k', N);
  const tenants = 10 * bound;
  const made = 1 + tenants;
  let most = 0;
  let forgets = 0;
  let wrongStep = 0;
  let off = 0;
  let before = p.stats().topicsWithoutState;
  t.equal(before, 1, "'kept' is without state");
  for (let i = 0; i < tenants; i++) {
    const key = `k${i}`;
    if (p.partition(`tenant-${i}`, key, N) !== partitionForKey(key, N)) off++;
    if (i % 100 === 0) p.partition('kept', key, N);
    if (i % 16 === 0) for (const b of busy) p.partition(b, key, N);
    const now = p.stats().topicsWithoutState;
    most = Math.max(most, now);
    if (now !== before + 1) {
      forgets++;
      if (before !== bound || now !== bound - bound / 4 + 1) wrongStep++;
    }
    before = now;
  }
  t.equal(off, 0, 'every message of a topic without state went to its key\'s partition');
  t.equal(most, bound, `at most ${bound} topics without state (max(1024, 16 × maxTopics)) after ${made} were made`);
  t.equal(wrongStep, 0, `each forgetting takes a full table (${bound}) down by a quarter, the new topic added: ${bound - bound / 4 + 1}`);
  t.equal(forgets, Math.ceil((made - bound) / (bound / 4)), `one forgetting per ${bound / 4} topics made beyond the first ${bound}, not one per message`);

  const s = p.stats();
  t.same(Object.keys(s.topics).sort(), ['B1', 'B2', 'B3', 'S0'], 'the topics with state keep their slots');
  t.equal(s.evictions, 0, 'no topic with state was given up');
  // S0 kept its state, not just its slot: its next message is counted on it, with no warning.
  p.partition('S0', 'S0-hot', N);
  t.equal(p.stats().topics.S0.messages, s0Messages + 1, 'S0\'s count goes on from where it was');
  t.same(p.hotKeys('S0').map((h) => h.key), ['S0-hot'], 'S0 keeps its hot key');
  t.notOk(warnings.has('S0'), 'S0 was never partitioned without state');
  t.equal(warnings.get('kept'), 1, 'the topic without state used all along was never forgotten');
  // tenant-0, the least recently used, was forgotten: it comes back as a new topic.
  t.equal(warnings.get('tenant-0'), 1);
  p.partition('tenant-0', 'k0', N);
  t.equal(warnings.get('tenant-0'), 2, 'tenant-0 was forgotten: it is new again (a second warning)');
  t.equal(warnings.get(`tenant-${tenants - 1}`), 1, 'the last tenant was not forgotten');
  p.close();
});

t.test("a forgotten topic's keys still go to Kafka's partition; its null keys start a new sticky run", async (t) => {
  const maxTopics = 1;
  const bound = kept(maxTopics);
  const run = 100;
  const p = new DynamicPartitioner({ maxTopics, stickyRun: run });
  const warnings = warningsOf(p);
  p.partition('busy', 'k', N);
  const keys = Array.from({ length: 500 }, (_, i) => (i % 5 === 0 ? Buffer.from(`key-${i}`) : `key-${i}`));
  const expected = keys.map((k) => partitionForKey(k, N));
  t.same(Array.from(partitionForKeys(keys, N)), expected, 'partitionForKey and partitionForKeys agree');

  let off = 0;
  for (let i = 0; i < keys.length; i++) if (p.partition('returning', keys[i], N) !== expected[i]) off++;
  t.equal(off, 0, 'without state: each key on its partition');
  // A run and a half of null keys: the second run has run / 2 messages left.
  const first = Array.from({ length: run + run / 2 }, () => p.partition('returning', null, N));
  t.equal(new Set(first.slice(0, run)).size, 1, 'a sticky run of null keys on one partition');
  t.not(first[run], first[run - 1], 'the next run on another partition');

  // Many more new topics than are kept, the slot busy throughout; 'returning' is not used meanwhile.
  for (let i = 0; i < 2 * bound; i++) {
    p.partition(`day-${i}`, 'k', N);
    if (i % 64 === 0) p.partition('busy', 'k', N);
  }
  t.ok(p.stats().topicsWithoutState <= bound, `still at most ${bound} topics without state (${p.stats().topicsWithoutState})`);
  t.equal(p.stats().evictions, 0, 'the topic with state kept its slot');

  // Its next message makes it new (a second warning): a new sticky run of null keys, a full one,
  // where the old run would have ended after run / 2 messages.
  const again = Array.from({ length: run + 1 }, () => p.partition('returning', null, N));
  t.equal(warnings.get('returning'), 2, "'returning' was forgotten: it is new again");
  t.equal(new Set(again.slice(0, run)).size, 1, `a new run: ${run} null keys on one partition`);
  t.not(again[run], again[run - 1], 'then the next run');
  off = 0;
  for (let i = 0; i < keys.length; i++) if (p.partition('returning', keys[i], N) !== expected[i]) off++;
  t.equal(off, 0, "after being forgotten: each key still on Kafka's partition");
  t.same(Array.from(p.partitionBatch('returning', keys, N)), expected, 'partitionBatch() too');
  // With another partition count (the topic grew while forgotten): Kafka's partition for that count.
  const grown = keys.map((k) => partitionForKey(k, 2 * N));
  t.same(keys.map((k) => p.partition('returning', k, 2 * N)), grown, `and for ${2 * N} partitions`);
  p.close();
});
