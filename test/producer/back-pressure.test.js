'use strict';
// Back-pressure with a tiny librdkafka queue (queue.buffering.max.messages = 100) on the
// mock cluster: produce() says false and 'drain' follows; send() waits once maxQueued
// messages are held; the Writable pushes back on its source and finishes only when all is
// delivered. Nothing may be lost, duplicated or reordered: read back, every (key, partition)
// holds its messages in the order they were produced (offset order = production order).
const t = require('tap');
const { Readable } = require('node:stream');
const { DynamicProducer, partitionForKey } = require('../..');
const { zipf, sleep, knownPartitions, brokersOf, consumeAll, trackHot } = require('./lib/helpers');

const N = 4;
const BASE = 'consistent_random';
const TINY = { 'test.mock.num.brokers': 3, log_level: 3, 'queue.buffering.max.messages': 100 };

function keysFor(count, seed) {
  const next = zipf(500, 1.0, seed);
  return Array.from({ length: count }, () => `k-${next()}`);
}

/**
 * Reads `topic` back and checks: every id 0..count-1 exactly once, with its key; within each
 * (key, partition) offsets follow ids; keys never hot on Kafka's partition.
 */
async function checkLog(t, p, topic, keys, hot) {
  const read = await consumeAll(await brokersOf(p.client), topic, keys.length);
  t.equal(read.total, keys.length, 'the log holds exactly the messages produced');
  const seen = new Uint8Array(keys.length);
  let dup = 0;
  let wrongKey = 0;
  let wrongPartition = 0;
  const byKeyPartition = new Map();
  for (const m of read.messages) {
    const id = Number(m.value.toString());
    if (seen[id]++) dup++;
    if (m.key.toString() !== keys[id]) wrongKey++;
    if (!hot.wasHot(keys[id]) && m.partition !== partitionForKey(keys[id], N, BASE)) wrongPartition++;
    const kp = `${keys[id]}/${m.partition}`;
    if (!byKeyPartition.has(kp)) byKeyPartition.set(kp, []);
    byKeyPartition.get(kp).push([m.offset, id]);
  }
  t.equal(dup, 0, 'no message twice');
  t.equal(seen.indexOf(0), -1, 'no message missing');
  t.equal(wrongKey, 0, 'every message with its key');
  t.equal(wrongPartition, 0, "keys never hot on Kafka's partition");
  let reordered = 0;
  for (const [kp, list] of byKeyPartition) {
    list.sort((a, b) => a[0] - b[0]);
    for (let j = 1; j < list.length; j++) {
      if (list[j][1] < list[j - 1][1] && reordered++ < 3) t.fail(`${kp}: message ${list[j][1]} at offset ${list[j][0]} after message ${list[j - 1][1]}`);
    }
  }
  t.equal(reordered, 0, 'per key and partition, offset order is production order');
}

t.test("produce() returns false on a full queue, 'drain' follows, nothing is lost or reordered", async (t) => {
  const topic = 'bp-produce';
  const p = new DynamicProducer(TINY);
  t.teardown(() => p.disconnect().catch(() => {}));
  const hot = trackHot(p);
  await p.connect();
  await knownPartitions(p, topic);
  const keys = keysFor(20_000, 31);
  const events = [];
  let delivered = 0;
  let failed = 0;
  p.on('drain', () => events.push('drain'));
  p.on('delivery', (err) => (err ? failed++ : delivered++));
  let falses = 0;
  let maxHeld = 0;
  for (let start = 0; start < keys.length; start += 4000) {
    for (let i = start; i < start + 4000; i++) {
      if (!p.produce(topic, String(i), keys[i])) {
        if (falses++ === 0) events.push('false');
      }
    }
    maxHeld = Math.max(maxHeld, p.metrics().held);
    events.push('false-end');
    await sleep(20);
  }
  t.ok(falses > 0, `produce() returned false ${falses} times`);
  t.ok(maxHeld > 0, `up to ${maxHeld} messages held at once (metrics().held)`);
  await p.flush(30000);
  t.equal(events.lastIndexOf('drain') > events.lastIndexOf('false-end'), true, "a 'drain' event followed the last held message");
  t.equal(delivered, keys.length, 'every message delivered');
  t.equal(failed, 0, 'none failed');
  t.match(p.metrics(), { held: 0, inflight: 0 }, 'nothing held or in flight afterwards');
  await checkLog(t, p, topic, keys, hot);
});

t.test('send() with maxQueued 50 waits, never holds more than 50, and every promise resolves', async (t) => {
  const topic = 'bp-send';
  const p = new DynamicProducer(TINY, {}, { maxQueued: 50 });
  t.teardown(() => p.disconnect().catch(() => {}));
  const hot = trackHot(p);
  await p.connect();
  await knownPartitions(p, topic);
  const keys = keysFor(10_000, 32);
  let maxHeld = 0;
  let sampling = true;
  (async () => {
    while (sampling) {
      maxHeld = Math.max(maxHeld, p.metrics().held);
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const settled = await Promise.allSettled(keys.map((key, i) => p.send(topic, String(i), key)));
  sampling = false;
  const rejected = settled.filter((s) => s.status === 'rejected');
  t.equal(rejected.length, 0, `every send() resolved${rejected.length ? ` (first rejection: ${rejected[0].reason})` : ''}`);
  t.ok(maxHeld > 0 && maxHeld <= 50, `held messages peaked at ${maxHeld} (1..50)`);
  // Per (key, partition), offsets in send order, from the reports themselves.
  const last = new Map();
  let reordered = 0;
  settled.forEach((s, i) => {
    if (s.status !== 'fulfilled') return;
    const kp = `${keys[i]}/${s.value.partition}`;
    if (last.has(kp) && s.value.offset <= last.get(kp)) reordered++;
    last.set(kp, s.value.offset);
  });
  t.equal(reordered, 0, 'per key and partition, report offsets follow send order');
  await checkLog(t, p, topic, keys, hot);
});

// A program that mixes produce() and send() for one key expects program order: produce()
// must not overtake send()s still waiting for room (maxQueued reached).
t.test('produce() after send()s waiting for room does not overtake them', async (t) => {
  const topic = 'bp-mixed';
  // spread: false keeps the one key (all the traffic: hot) on one partition.
  const p = new DynamicProducer(TINY, { partitioner: 'murmur2' }, { maxQueued: 50, spread: false });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  await knownPartitions(p, topic);
  const sends = [];
  for (let i = 0; i < 2000; i++) sends.push(p.send(topic, String(i), 'one-key'));
  for (let i = 2000; i < 2500; i++) p.produce(topic, String(i), 'one-key');
  await Promise.all(sends);
  await p.flush(30000);
  const read = await consumeAll(await brokersOf(p.client), topic, 2500);
  const ids = read.messages.sort((a, b) => a.offset - b.offset).map((m) => Number(m.value.toString()));
  t.equal(new Set(read.messages.map((m) => m.partition)).size, 1, 'one partition');
  const firstOut = ids.findIndex((id, j) => id !== j);
  t.equal(firstOut, -1, `offset order is program order${firstOut >= 0 ? ` (offset ${firstOut} holds message ${ids[firstOut]})` : ''}`);
});

t.test("writable(): 20,000 messages piped with back-pressure; 'finish' only after all are delivered", async (t) => {
  const topic = 'bp-stream';
  const p = new DynamicProducer(TINY);
  t.teardown(() => p.disconnect().catch(() => {}));
  const hot = trackHot(p);
  await p.connect();
  await knownPartitions(p, topic);
  const keys = keysFor(20_000, 33);
  let delivered = 0;
  p.on('delivery', (err) => { if (!err) delivered++; });
  let pulled = 0;
  let maxAhead = 0;
  const source = Readable.from((function* gen() {
    for (let i = 0; i < keys.length; i++) {
      pulled++;
      maxAhead = Math.max(maxAhead, pulled - delivered);
      // Every other message as an object with headers and a timestamp, the rest plain.
      yield i % 2 ? { value: String(i), key: keys[i], headers: [{ n: String(i) }], timestamp: 1_700_000_000_000 + i } : { value: String(i), key: keys[i] };
    }
  })());
  const sink = p.writable(topic);
  let needDrain = 0;
  sink.on('drain', () => needDrain++);
  const deliveredAtFinish = await new Promise((resolve, reject) => {
    sink.on('finish', () => resolve(delivered));
    sink.on('error', reject);
    source.pipe(sink);
  });
  t.equal(deliveredAtFinish, keys.length, "'finish' came after every message was delivered");
  t.ok(needDrain > 0, `the Writable pushed back on the source (${needDrain} 'drain' events)`);
  t.ok(maxAhead < 5000, `the source was never far ahead of delivery (at most ${maxAhead} messages)`);
  await checkLog(t, p, topic, keys, hot);
});
