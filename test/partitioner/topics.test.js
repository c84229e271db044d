'use strict';
// Topics: each has its own counts, loads and hot keys, and its own clocks (a message-count
// horizon counts its messages). With more topics than maxTopics, a new topic is partitioned
// without state (Kafka's partition, a 'warning') until the least recently used topic has been
// idle long enough; that one is forgotten: its hot keys get 'cooled' events, it leaves
// stats(), and work goes on. A forgotten topic's history must not leak into the topic
// that takes its place.
const t = require('tap');
const { DynamicPartitioner, partitionForKey } = require('../..');
const { DecayedCounts, prng, keyNames } = require('./lib/helpers');

const N = 12;
const background = keyNames(3000, 'bg-');

/** Sends `count` messages to `topic`: `hotKey` with probability `rate`, else background. */
function send(p, topic, count, hotKey, rate, rand, n = N) {
  for (let i = 0; i < count; i++) p.partition(topic, rand() < rate ? hotKey : `${topic}-${background[Math.floor(rand() * background.length)]}`, n);
}

// A topic with state gives its slot up only once it has been idle for this many decisions
// (max(16384, 16 x maxTopics), stats().evictions), and at most one every 1024 decisions.
const IDLE = 16384;
const EVERY = 1024;

t.test('more topics than maxTopics: a new topic waits without state until a topic is idle; the idle one is forgotten, its hot keys cooled', async (t) => {
  const p = new DynamicPartitioner({ maxTopics: 3, sketch: { sampling: 1 } });
  const rand = prng(71);
  const events = [];
  const warnings = [];
  p.on('hot', (h) => events.push(['hot', h.topic, h.key]));
  p.on('cooled', (h) => events.push(['cooled', h.topic, h.key, h.partitions]));
  p.on('warning', (w) => warnings.push(w));
  for (const topic of ['A', 'B', 'C']) send(p, topic, 5000, `${topic}-hot`, 0.3, rand);
  t.same(events, [['hot', 'A', 'A-hot'], ['hot', 'B', 'B-hot'], ['hot', 'C', 'C-hot']], 'one hot key per topic');
  send(p, 'A', 100, 'A-hot', 0.3, rand); // A is used again: B is now the least recently used
  events.length = 0;
  // D arrives while B (the least recently used) was used 5100 decisions ago: not idle.
  const q = p.partition('D', 'x', N);
  t.equal(q, partitionForKey('x', N), 'D works: Kafka\'s partition');
  t.same(events, [], 'no topic was forgotten');
  t.equal(warnings.length, 1, 'one warning');
  t.ok(warnings[0].code === 'KDP_TOPIC_CAPACITY' && warnings[0].topic === 'D' && warnings[0].maxTopics === 3,
    `a TopicCapacityError naming D (${warnings[0] && warnings[0].message})`);
  t.same(Object.keys(p.stats().topics).sort(), ['A', 'B', 'C'], 'stats() keeps A, B, C');
  t.equal(p.stats().topicsWithoutState, 1, 'stats(): one topic without state');
  t.equal(p.stats().evictions, 0, 'stats(): no eviction');
  // D's hot key is never spread while it is without state: every message on its key's partition.
  let off = 0;
  for (let i = 0; i < 3000; i++) if (p.partition('D', 'D-hot', N) !== partitionForKey('D-hot', N)) off++;
  t.equal(off, 0, 'without state, a key always goes to its own partition');
  t.same(p.hotKeys('D'), [], 'and is not reported hot');
  t.equal(warnings.length, 1, 'the warning comes once per topic');
  // B stays idle while A and C carry on: once B has been idle long enough, D takes its slot.
  for (let i = 0; i < IDLE; i++) { send(p, 'A', 1, 'A-hot', 0.3, rand); send(p, 'C', 1, 'C-hot', 0.3, rand); }
  events.length = 0;
  send(p, 'D', EVERY, 'D-hot', 0.3, rand);
  t.same(events.filter((e) => e[0] === 'cooled'), [['cooled', 'B', 'B-hot', 1]], 'B, idle, was forgotten: its hot key cooled');
  t.same(Object.keys(p.stats().topics).sort(), ['A', 'C', 'D'], 'stats() has A, C, D');
  t.equal(p.stats().topicsWithoutState, 0, 'no topic without state');
  t.equal(p.stats().evictions, 1, 'one eviction');
  t.same(p.hotKeys('B'), [], 'B has no hot keys');
  t.same(p.hotKeys('A').map((h) => h.key), ['A-hot'], 'A keeps its hot key');
  t.same(p.hotKeys('C').map((h) => h.key), ['C-hot'], 'C keeps its hot key');
  t.equal(p.share('B', 'B-hot'), 0, 'share() of a forgotten topic is 0');
  // B comes back as a new topic once C has been idle: it starts over (warm-up again), then works as before.
  for (let i = 0; i < IDLE; i++) { send(p, 'A', 1, 'A-hot', 0.3, rand); send(p, 'D', 1, 'D-hot', 0.3, rand); }
  events.length = 0;
  send(p, 'B', 5000, 'B-hot', 0.3, rand);
  t.same(events.filter((e) => e[0] === 'cooled').map((e) => e[1]), ['C'], 'B coming back evicts C (idle, the least recently used)');
  t.ok(events.some((e) => e[0] === 'hot' && e[1] === 'B' && e[2] === 'B-hot'), 'B-hot turns hot again');
  t.ok(Math.abs(p.stats().topics.B.recentMessages - 5000 * (1 - 2 ** (-5000 / 20000)) / (5000 / 20000) / Math.LN2) < 5,
    `B's recent messages count only its new traffic (${p.stats().topics.B.recentMessages.toFixed(1)})`);
  // Many more topics than slots, all busy: work continues, never an eviction per message.
  const before = p.stats().evictions;
  let decisions = 0;
  for (let r = 0; r < 5; r++) {
    for (let i = 0; i < 50; i++) { send(p, `T${i}`, 60, `T${i}-hot`, 0.5, rand); decisions += 60; }
    send(p, 'A', 100, 'A-hot', 0.3, rand);
    decisions += 100;
  }
  const s = p.stats();
  t.equal(Object.keys(s.topics).length, 3, 'never more than maxTopics in stats()');
  t.ok(s.evictions - before <= 1 + decisions / EVERY, `evictions ${s.evictions - before} over ${decisions} decisions: at most one per ${EVERY}`);
  t.equal(s.topicsWithoutState + Object.keys(s.topics).length, 3 + 50 - (s.evictions - before), 'every topic is counted, with state or without');
  t.equal(warnings.filter((w) => w.code === 'KDP_TOPIC_CAPACITY').length, 1 + 50, 'one warning per topic that went without state');
});

t.test('past maxTopics, a batch of a topic without state is partitioned as Kafka would', async (t) => {
  const p = new DynamicPartitioner({ maxTopics: 1 });
  p.partition('only', 'k', N);
  const keys = Array.from({ length: 5000 }, (_, i) => (i % 2 ? 'hot' : `k${i}`));
  const out = p.partitionBatch('other', keys, N);
  t.same(Array.from(out), keys.map((k) => partitionForKey(k, N)), "every key on Kafka's partition");
  t.same(p.hotKeys('other'), [], 'no hot key reported');
  t.equal(p.stats().topicsWithoutState, 1, 'one topic without state');
  t.equal(p.share('other', 'hot'), 0, 'share() of a topic without state is 0');
});

t.test('per-topic stats are separate and exact', async (t) => {
  // Two topics (12 and 24 partitions) interleaved; everything checked against reference
  // counts: recent messages (key clock), loads (load clock), imbalance, hot keys. Each
  // topic's horizons count its own messages: the reference's time is the topic's message index.
  const H = 20_000;
  const HL = 10_000;
  const p = new DynamicPartitioner({ sketch: { sampling: 1 } });
  const rand = prng(72);
  const total = { X: new DecayedCounts(1, H), Y: new DecayedCounts(1, H) };
  const loads = { X: new DecayedCounts(12, HL), Y: new DecayedCounts(24, HL) };
  const n = { X: 12, Y: 24 };
  const clock = { X: 0, Y: 0 };
  const kShare = { X: new DecayedCounts(1, H), Y: new DecayedCounts(1, H) };
  const steps = 60_000;
  for (let i = 0; i < steps; i++) {
    const topic = rand() < 0.75 ? 'X' : 'Y';
    // 'k' is 30% of X and 0.5% of Y (0.12 fair shares of 24: just hot in Y too; check both).
    const isK = rand() < (topic === 'X' ? 0.3 : 0.002);
    const key = isK ? 'k' : `${topic}-${Math.floor(rand() * 5000)}`;
    const q = p.partition(topic, key, n[topic]);
    const at = clock[topic]++;
    total[topic].add(0, at);
    loads[topic].add(q, at);
    if (isK) kShare[topic].add(0, at);
  }
  const s = p.stats();
  for (const topic of ['X', 'Y']) {
    const now = clock[topic] - 1;
    const st = s.topics[topic];
    // The key clock's total: in recent messages, with the last message weighing 1 / 2^(1/H).
    const recent = total[topic].total(now) * 2 ** (-1 / H);
    t.equal(st.partitions, n[topic], `${topic}: partitions`);
    t.ok(Math.abs(st.recentMessages - recent) < 1e-6 * recent, `${topic}: recentMessages ${st.recentMessages} vs ${recent}`);
    t.equal(st.load.length, n[topic], `${topic}: one load per partition`);
    const lt = loads[topic].total(now);
    const want = Array.from({ length: n[topic] }, (_, q) => loads[topic].get(q, now) / lt);
    t.ok(st.load.every((l, q) => Math.abs(l - want[q]) < 1e-9), `${topic}: loads are the decayed shares per partition`);
    t.ok(Math.abs(st.imbalance - Math.max(...want) * n[topic]) < 1e-6, `${topic}: imbalance = max load x n (${st.imbalance.toFixed(4)})`);
    t.equal(st.hotKeys, p.hotKeys(topic).length, `${topic}: hotKeys count`);
    const kExact = kShare[topic].get(0, now) / total[topic].total(now);
    t.ok(Math.abs(p.share(topic, 'k') - kExact) <= 1e-3 * kExact, `${topic}: share of 'k' ${p.share(topic, 'k').toExponential(4)} ~ exact ${kExact.toExponential(4)} (its own topic's traffic only)`);
  }
  t.ok(p.hotKeys('X').some((h) => h.key === 'k' && h.topic === 'X'), "'k' is hot in X");
  t.ok(s.topics.X.imbalance < 1.1, `X stays balanced with 'k' spread (imbalance ${s.topics.X.imbalance.toFixed(3)})`);
});

t.test('a topic that takes a forgotten topic\'s place does not inherit its counts', async (t) => {
  // maxTopics 2. In A, 'k' has half of the traffic. A, idle, is forgotten when C arrives; C's
  // state must start from nothing. In C, 'k' is 1 message in 1000 (0.048 fair shares of
  // 48: below the hot line of 0.1): it must not be hot, and its share must be ~0.001.
  const n = 48;
  const p = new DynamicPartitioner({ maxTopics: 2, sketch: { sampling: 1 } });
  const events = [];
  p.on('hot', (h) => events.push(['hot', h.topic, h.key, h.share]));
  p.on('cooled', (h) => events.push(['cooled', h.topic, h.key]));
  for (let i = 0; i < 20_000; i++) p.partition('A', i % 2 ? 'k' : `a-${i}`, n);
  for (let i = 0; i < IDLE; i++) p.partition('B', `b-${i}`, n); // A idle long enough to give its slot up
  for (let i = 0; i < 5000; i++) p.partition('C', i % 1000 === 0 ? 'k' : `c-${i}`, n);
  t.same(events.slice(0, 2).map((e) => e.slice(0, 3)), [['hot', 'A', 'k'], ['cooled', 'A', 'k']], 'premise: hot in A, cooled when A was forgotten');
  const inC = events.filter((e) => e[1] === 'C');
  t.same(inC, [], `'k' is not hot in C (events in C: ${JSON.stringify(inC)})`);
  const share = p.share('C', 'k');
  t.ok(share <= 0.001 + Math.E / p.options.sketch.width, `share('C', 'k') ${share.toExponential(4)} is ~ 5 / 5000 (within the sketch bound)`);
});
