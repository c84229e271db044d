'use strict';
// The Resequencer restores each spread key's produce order from the order headers, fed
// messages the way a consumer reads them: each partition in offset order, partitions
// interleaved arbitrarily (one of them delayed). The producer side is the real one: the
// KafkaJS adapter's partitioner, which adds the same header the DynamicProducer does.
const t = require('tap');
const { Resequencer, createKafkaJsPartitioner, decodeOrderHeader, ORDER_HEADER } = require('../..');
const { prng } = require('../partitioner/lib/helpers.js');

const N = 8;

/** Produces `count` messages of Zipf-ish keys through the adapter; value = the key's own sequence. */
function produce(count, seed, pattern, options = {}) {
  const partition = createKafkaJsPartitioner({ warmupMessages: 50, ...options })();
  const partitionMetadata = Array.from({ length: N }, (_, i) => ({ partitionId: i }));
  const rand = prng(seed);
  const perKey = new Map();
  const logs = Array.from({ length: N }, () => []);
  for (let i = 0; i < count; i++) {
    const key = pattern(i, rand);
    const seq = (perKey.get(key) ?? 0) + 1;
    perKey.set(key, seq);
    const message = { key, value: Buffer.from(String(seq)) };
    const p = partition({ topic: 't', partitionMetadata, message });
    const headers = message.headers ? [{ [ORDER_HEADER]: message.headers[ORDER_HEADER] }] : [];
    logs[p].push({ topic: 't', partition: p, offset: logs[p].length, key: Buffer.from(key), value: message.value, headers });
  }
  return logs;
}

/** Feeds partition logs to `feed` in a random interleaving; partition `slow` comes in last (optionally). */
function consume(logs, seed, feed, slow = -1) {
  const rand = prng(seed);
  const at = logs.map(() => 0);
  const live = () => logs.map((l, p) => p).filter((p) => at[p] < logs[p].length && (p !== slow || logs.every((l, q) => q === slow || at[q] === l.length)));
  for (let open = live(); open.length > 0; open = live()) {
    const p = open[Math.floor(rand() * open.length)];
    const burst = 1 + Math.floor(rand() * 20);
    for (let i = 0; i < burst && at[p] < logs[p].length; i++) feed(logs[p][at[p]++]);
  }
}

function check(t, logs, releases) {
  const lastSeen = new Map();
  let outOfOrder = 0;
  let misordered = 0;
  for (const r of releases) {
    if (r.outOfOrder) outOfOrder++;
    const key = r.message.key.toString();
    const seq = Number(r.message.value.toString());
    if (seq !== (lastSeen.get(key) ?? 0) + 1) misordered++;
    lastSeen.set(key, seq);
  }
  const total = logs.reduce((a, l) => a + l.length, 0);
  t.equal(releases.length, total, 'every message released exactly once');
  t.equal(misordered, 0, 'every key released in produce order');
  t.equal(outOfOrder, 0, 'none flagged out of order');
}

const zipfKeys = (i, rand) => {
  const r = rand();
  if (r < 0.3) return 'hot-a';
  if (r < 0.45) return 'hot-b';
  return `cold-${Math.floor(Math.pow(rand(), 3) * 2000)}`;
};

t.test('spread keys come out in produce order, whatever the interleaving', async (t) => {
  const logs = produce(40000, 1, zipfKeys);
  const marked = logs.flat().filter((m) => m.headers.length).map((m) => decodeOrderHeader(m.headers[0][ORDER_HEADER]));
  t.ok(marked.filter((h) => h.kind === 'spread').length > 5000, 'hot keys were spread');
  const hotA = new Set(logs.flat().filter((m) => m.key.toString() === 'hot-a').map((m) => m.partition));
  t.ok(hotA.size > 1, `hot-a on ${hotA.size} partitions`);
  for (const seed of [1, 2, 3]) {
    const r = new Resequencer({ maxBufferedMessages: 1e6 });
    const releases = [];
    consume(logs, seed, (m) => releases.push(...r.push(m)));
    check(t, logs, releases);
    t.equal(r.held, 0);
  }
});

t.test('one partition delayed to the very end: the others wait for it, then all comes out in order', async (t) => {
  const logs = produce(20000, 2, zipfKeys);
  const r = new Resequencer({ maxBufferedMessages: 1e6 });
  const releases = [];
  const slow = logs.map((l) => l.length).indexOf(Math.max(...logs.map((l) => l.length)));
  let peak = 0;
  consume(logs, 9, (m) => {
    releases.push(...r.push(m));
    peak = Math.max(peak, r.held);
  }, slow);
  check(t, logs, releases);
  t.ok(peak > 0, `held up to ${peak} messages while partition ${slow} lagged`);
});

t.test('a key that turns hot, cools and turns hot again keeps its order across the transitions', async (t) => {
  // Phases: 'k' dominant, then rare, then dominant again.
  const pattern = (i, rand) => {
    const phase = Math.floor(i / 15000) % 2;
    if (phase === 0 && rand() < 0.5) return 'k';
    if (phase === 1 && rand() < 0.0005) return 'k';
    return `cold-${Math.floor(rand() * 3000)}`;
  };
  // A short horizon, so that 'k' cools within a phase: 50% → below 0.05/8 takes ~6.3 half-lives.
  const logs = produce(60000, 3, pattern, { horizon: { messages: 1500 } });
  const kinds = logs.flat().filter((m) => m.key.toString() === 'k' && m.headers.length)
    .map((m) => decodeOrderHeader(m.headers[0][ORDER_HEADER]).kind);
  t.ok(kinds.filter((k) => k === 'anchor').length >= 2, 'turned hot at least twice');
  t.ok(kinds.includes('return'), 'cooled in between');
  const r = new Resequencer({ maxBufferedMessages: 1e6 });
  const releases = [];
  consume(logs, 4, (m) => releases.push(...r.push(m)));
  check(t, logs, releases);
});

t.test('committable offsets stay below the lowest held message of each partition', async (t) => {
  const logs = produce(20000, 5, zipfKeys);
  const r = new Resequencer({ maxBufferedMessages: 1e6 });
  // Independent bookkeeping: per partition, the offsets released so far.
  const released = logs.map(() => new Set());
  const lowestUnreleased = (p, seen) => {
    for (let o = 0; o < seen; o++) if (!released[p].has(o)) return o;
    return seen;
  };
  const seen = logs.map(() => 0);
  let checks = 0;
  let wrong = 0;
  let heldSomething = false;
  consume(logs, 6, (m) => {
    seen[m.partition] = m.offset + 1;
    for (const x of r.push(m)) released[x.message.partition].add(x.message.offset);
    if (r.held > 0) heldSomething = true;
    if (checks % 7 === 0) {
      for (let p = 0; p < N; p++) {
        if (seen[p] === 0) continue;
        if (r.committable('t', p) !== lowestUnreleased(p, seen[p])) wrong++;
      }
    }
    checks++;
  });
  t.ok(heldSomething, 'some messages were held on the way');
  t.equal(wrong, 0, 'committable = the lowest offset not yet released');
  for (let p = 0; p < N; p++) t.equal(r.committable('t', p), logs[p].length, `partition ${p}: past the last message once all are released`);
});

t.test('past maxBufferedMessages the oldest held message is released, flagged, and nothing is lost', async (t) => {
  const logs = produce(20000, 7, zipfKeys);
  const r = new Resequencer({ maxBufferedMessages: 10 });
  const releases = [];
  let peak = 0;
  const slow = 0;
  consume(logs, 8, (m) => {
    releases.push(...r.push(m));
    peak = Math.max(peak, r.held);
  }, slow);
  releases.push(...r.flush());
  t.equal(releases.length, logs.reduce((a, l) => a + l.length, 0), 'every message released exactly once');
  t.ok(peak <= 10, `held at most ${peak}`);
  const flagged = releases.filter((x) => x.outOfOrder);
  t.ok(flagged.length > 0, `${flagged.length} flagged`);
  t.ok(flagged.every((x) => x.reason === 'capacity' || x.reason === 'flush'));
});

t.test('a message whose predecessor never comes is released after maxWaitMs, flagged', async (t) => {
  let now = 1000;
  const r = new Resequencer({ maxWaitMs: 500 }, () => now);
  const logs = produce(5000, 9, zipfKeys);
  const spread = logs.flat().find((m) => m.headers.length && decodeOrderHeader(m.headers[0][ORDER_HEADER]).kind === 'spread');
  t.same(r.push(spread), [], 'held: its predecessor was not seen');
  now += 499;
  t.same(r.expire(), []);
  now += 2;
  const out = r.expire();
  t.equal(out.length, 1);
  t.equal(out[0].message, spread);
  t.equal(out[0].outOfOrder, true);
  t.equal(out[0].reason, 'timeout');
  t.equal(r.held, 0);
});

t.test('bad options and bad messages are rejected', async (t) => {
  t.throws(() => new Resequencer({ maxWait: 1 }), { code: 'KDP_INVALID_OPTION' });
  t.throws(() => new Resequencer({ maxWaitMs: -1 }), { code: 'KDP_INVALID_OPTION' });
  t.throws(() => new Resequencer().push({ topic: 't' }), { code: 'KDP_INVALID_ARG_TYPE' });
});
