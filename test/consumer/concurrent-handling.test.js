'use strict';
// DynamicProducer → librdkafka's mock cluster → DynamicConsumer with handler calls at once
// (concurrency), handlers that wait on I/O (random delays): never two calls of one key at once,
// each key in produce order (a spread key's across its partitions), nothing lost, the commits
// covering exactly what was handled — also with a second member joining in the middle of slow
// handlers (a rebalance: the calls of the partitions leaving end before their next owner starts).
const t = require('tap');
const { clientOptions } = require('../lib/clients');
const { committedAtEnds } = require('../lib/mock-cluster');
const { DynamicProducer, DynamicConsumer } = require('../..');

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function cluster(t) {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, { partitioner: 'murmur2_random' }, clientOptions());
  await p.connect();
  t.teardown(() => p.disconnect());
  const md = await new Promise((res, rej) => p.client.getMetadata({ timeout: 5000 }, (e, m) => (e ? rej(e) : res(m))));
  return { p, brokers: md.brokers.map((b) => `${b.host}:${b.port}`).join(',') };
}

/** Produces n messages: every tenth on one hot key (spread), the rest over `keys` keys; each value its key's sequence number. */
async function produce(p, topic, n, keys) {
  await p.send(topic, 'warm-up', null);
  for (let i = 0; i < 100 && !(p.metrics().topics[topic]?.partitions > 0); i++) {
    await p.refreshMetadata(topic).catch(() => undefined);
    await delay(20);
  }
  const sequence = new Map();
  const sends = [];
  for (let i = 0; i < n; i++) {
    const key = i % 10 === 0 ? 'hot' : `k${(i * 7919) % keys}`;
    const s = (sequence.get(key) ?? 0) + 1;
    sequence.set(key, s);
    sends.push(p.send(topic, String(s), key));
  }
  const reports = await Promise.all(sends);
  return { sequence, hotPartitions: new Set(reports.filter((r) => String(r.key) === 'hot').map((r) => r.partition)) };
}

/**
 * What the handlers of all members saw: calls of one key at once (overlaps), messages handled
 * before their predecessor without the flag that says so (breaks) or with it (flagged), and
 * messages handled for the first time (handled) or again (repeats, read again after a rebalance).
 */
function observer() {
  const o = { underway: new Map(), top: new Map(), seen: new Set(), overlaps: 0, breaks: 0, flagged: 0, handled: 0, repeats: 0, most: 0, now: 0 };
  o.start = (m, info) => {
    const key = m.key.toString();
    // A flagged message (info.outOfOrder) may overlap its key's others: the flag says so.
    const other = o.underway.get(key);
    if (other === 'ordered' && !info.outOfOrder) o.overlaps++;
    o.underway.set(key, info.outOfOrder ? 'flagged' : 'ordered');
    o.now++;
    o.most = Math.max(o.most, o.now);
    const s = Number(m.value.toString());
    const id = `${key}:${s}`;
    if (o.seen.has(id)) o.repeats++;
    else {
      o.seen.add(id);
      o.handled++;
      const top = o.top.get(key) ?? 0;
      if (s > top + 1) {
        if (info.outOfOrder) {
          o.flagged++;
          if (process.env.DEBUG_BREAKS) console.error('FLAGGED', key, s, top, m.partition, m.offset, info.reason, Date.now() % 100000);
        }
        else {
          o.breaks++;
          if (process.env.DEBUG_BREAKS) console.error("BREAK", key, s, top, m.partition, m.offset, JSON.stringify(info));
        }
      }
      o.top.set(key, Math.max(top, s));
    }
    return key;
  };
  o.end = (key) => {
    o.underway.set(key, undefined);
    o.now--;
  };
  return o;
}

function consumer(brokers, group, options) {
  // A short session: the mock cluster's coordinator waits up to it for a member to rejoin.
  return new DynamicConsumer({ 'metadata.broker.list': brokers, 'group.id': group, 'auto.offset.reset': 'earliest', 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500, log_level: 3 }, {},
    { commitIntervalMs: 100, ...options, ...clientOptions() });
}

t.test("concurrency 64, ordering 'key', handlers awaiting 0–3 ms: keys at once, each in produce order, nothing lost", async (t) => {
  const { p, brokers } = await cluster(t);
  const topic = 'concurrent-key';
  const N = 12000;
  const { sequence, hotPartitions } = await produce(p, topic, N, 2000);
  t.ok(hotPartitions.size > 1, `the hot key was spread over ${hotPartitions.size} partitions`);
  const o = observer();
  const c = consumer(brokers, 'concurrent-key', { concurrency: 64 });
  await c.connect();
  const done = c.run([topic], async (m, info) => {
    if (m.key === null) return;
    const key = o.start(m, info);
    await delay(Math.floor(Math.random() * 4));
    o.end(key);
    if (o.handled === N) setImmediate(() => c.stop());
  });
  const timer = setTimeout(() => c.stop(), 90000);
  await done;
  clearTimeout(timer);
  t.equal(o.overlaps, 0, 'never two calls of one key at once');
  t.equal(o.breaks + o.flagged, 0, 'no message of a key before its predecessor');
  t.equal(o.repeats, 0, 'none handled twice');
  t.equal(o.handled, N, 'every message handled');
  t.same([...o.top.entries()].sort(), [...sequence.entries()].sort(), "each key's last message reached");
  t.ok(o.most > 32, `calls at once: up to ${o.most} of 64`);
  await committedAtEnds(t, brokers, 'concurrent-key', topic);
});

t.test('a member joins in the middle of slow handlers: no key overlaps across members, none out of order, nothing lost', async (t) => {
  const { p, brokers } = await cluster(t);
  const topic = 'concurrent-rebalance';
  // Enough that A is still handling when the mock cluster's rebalance gives B its partitions
  // (about 10 s after B joins): the hot key's 1,400 messages take 5-15 ms each, one at a time.
  const N = 14000;
  const { sequence } = await produce(p, topic, N, 500);
  const o = observer();
  const handler = async (m, info) => {
    if (m.key === null) return;
    const key = o.start(m, info);
    await delay(5 + Math.floor(Math.random() * 10));
    o.end(key);
    lastCall = Date.now();
  };
  let lastCall = Date.now();
  // A spread key's message whose predecessor is the other member's waits for that member's commit.
  const options = { concurrency: 32, resequencer: { maxWaitMs: 30000 } };
  const A = consumer(brokers, 'concurrent-rebalance', options);
  const B = consumer(brokers, 'concurrent-rebalance', options);
  const members = [A, B];
  const revoked = [];
  const assignedB = [];
  const t0 = Date.now();
  const at = {};
  A.on('revoked', (list) => {
    revoked.push(list);
    at.revoked = Date.now() - t0;
  });
  B.on('assigned', (list) => {
    assignedB.push(...list);
    at.assignedB = Date.now() - t0;
  });
  await A.connect();
  const runA = A.run([topic], handler);
  // B joins once A is well under way: some of A's partitions move while its calls wait.
  while (o.handled < N / 4) await delay(10);
  const underwayAtJoin = o.now;
  at.join = Date.now() - t0;
  await B.connect();
  const runB = B.run([topic], handler);
  // Done once every message was handled and the members are quiet: B may still be reading again
  // what A handled above its last commit (at least once), and its commits follow.
  const deadline = Date.now() + 120000;
  while (!(o.handled === N && Date.now() - lastCall > 1500) && Date.now() < deadline) await delay(50);
  await Promise.all(members.map((x) => x.stop()));
  await Promise.all([runA, runB]);
  t.ok(underwayAtJoin > 0, `calls were under way when B joined (${underwayAtJoin})`);
  t.ok(revoked.some((list) => list.length > 0), `A gave partitions up (${revoked.map((list) => list.length).join(', ')})`);
  t.ok(assignedB.length > 0, `B took ${assignedB.length} of them`);
  t.equal(o.overlaps, 0, 'never two calls of one key at once, across both members (unless one is flagged out of order)');
  t.equal(o.breaks, 0, 'no message of a key before its predecessor without the flag that says so');
  t.equal(o.handled, N, 'every message handled');
  t.same([...o.top.entries()].sort(), [...sequence.entries()].sort(), "each key's last message reached");
  at.end = Date.now() - t0;
  t.comment(`ms from A's start: B joins ${at.join}, A's partitions revoked ${at.revoked}, B's assigned ${at.assignedB}, all handled ${at.end}`);
  t.comment(`handled again after the rebalance: ${o.repeats} (at least once); released out of order, flagged: ${o.flagged}`);
  await committedAtEnds(t, brokers, 'concurrent-rebalance', topic);
});

t.test("runBatches(): each call one key's consecutive messages, in produce order, at most handlerBatchSize; nothing lost", async (t) => {
  const { p, brokers } = await cluster(t);
  const topic = 'concurrent-batches';
  const N = 6000;
  const { sequence } = await produce(p, topic, N, 300);
  const o = observer();
  let calls = 0;
  let mixed = 0;
  let largest = 0;
  const c = consumer(brokers, 'concurrent-batches', { concurrency: 16, handlerBatchSize: 50 });
  await c.connect();
  const done = c.runBatches([topic], async (messages, infos) => {
    const keyed = messages.filter((m) => m.key !== null);
    if (keyed.length === 0) return;
    calls++;
    largest = Math.max(largest, messages.length);
    if (new Set(keyed.map((m) => m.key.toString())).size > 1 || keyed.length !== messages.length) mixed++;
    const keys = keyed.map((m, i) => o.start(m, infos[i]));
    await delay(2 + Math.floor(Math.random() * 3));
    for (const key of keys.reverse()) o.end(key);
    if (o.handled === N) setImmediate(() => c.stop());
  });
  const timer = setTimeout(() => c.stop(), 90000);
  await done;
  clearTimeout(timer);
  t.equal(mixed, 0, 'one key per call');
  t.ok(largest > 1 && largest <= 50, `several messages a call, at most 50 (largest ${largest}, ${calls} calls for ${N} messages)`);
  t.equal(o.breaks + o.flagged, 0, 'each key in produce order');
  t.equal(o.repeats, 0, 'none handled twice');
  t.equal(o.handled, N, 'every message handled');
  t.same([...o.top.entries()].sort(), [...sequence.entries()].sort(), "each key's last message reached");
  await committedAtEnds(t, brokers, 'concurrent-batches', topic);
});
