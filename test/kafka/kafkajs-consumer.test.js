'use strict';
// wrapKafkaJsConsumer() over KafkaJS 2.2.4's own consumer on the real cluster. Two
// DynamicProducers (each its own keys, a hot key at 40% over Zipf background keys, spread over
// the partitions with order headers) send while the wrapped KafkaJS consumers read; the
// handlers await I/O-like delays, 16 calls at once (one per key).
//   1. one consumer;
//   2. a group of two: B joins mid-run (a rebalance: KafkaJS's eager protocol takes every
//      partition back from A), then leaves before the end (another one).
// What is expected comes from the producers' delivery reports: every delivered message handled
// (0 lost); per (producer, key), no message's first call starting before its predecessor's
// first call ended, unless it is flagged outOfOrder (0 unexplained order violations); no commit
// passing a message not handled yet when it landed; the group's committed offsets at the log
// end once both stopped. Re-deliveries (at least once, across the rebalances) are counted.
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const t = require('tap');
const { Kafka, logLevel } = require('kafkajs');
const { wrapKafkaJsConsumer } = require('../..');
const K = require('./lib/kafka');
const H = require('./lib/hot-key');

const PARTITIONS = 6;
const PER_PRODUCER = Number(process.env.KDP_KAFKAJS_MESSAGES || 6000);
const RATE = 1500; // msg/s per producer: consumed while produced
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function kafka() {
  return new Kafka({ clientId: 'kdp-kafkajs-test', brokers: K.brokers().split(','), logLevel: logLevel.NOTHING });
}

/** What a scenario saw, checked against the deliveries. */
function recorder() {
  let tick = 0;
  const calls = []; // { who, key, id, seq, partition, offset, start, end, flagged }
  const handledAt = new Map(); // partition -> Uint8Array by offset (1: a call of it ended)
  const lowest = new Map(); // partition -> lowest offset not handled yet (lazily advanced)
  let commitPastUnhandled = 0;
  let commits = 0;
  const handler = (who) => async ({ partition, message }, info) => {
    const start = ++tick;
    const v = K.parseValue(message.value);
    // An I/O-like wait: most calls a turn of the event loop, one in eight a timer of 1-3 ms.
    if (v !== null && v.id % 8 === 0) await sleep(1 + (v.id % 3));
    else await new Promise((resolve) => setImmediate(resolve));
    const end = ++tick;
    if (v === null) return;
    const offset = Number(message.offset);
    calls.push({ who, key: String(message.key), id: v.id, seq: v.seq, partition, offset, start, end, flagged: info.outOfOrder });
    let marks = handledAt.get(partition);
    if (!marks) handledAt.set(partition, (marks = new Uint8Array(4 * PER_PRODUCER)));
    marks[offset] = 1;
  };
  const onCommitted = (offsets) => {
    for (const { partition, offset } of offsets) {
      commits++;
      const marks = handledAt.get(partition) ?? new Uint8Array(0);
      let low = lowest.get(partition) ?? 0;
      while (low < marks.length && marks[low] === 1) low++;
      lowest.set(partition, low);
      if (offset > low) commitPastUnhandled++;
    }
  };
  return { calls, handler, onCommitted, stats: () => ({ commitPastUnhandled, commits }) };
}

/** Two producers at once (each its own keys and hot key); resolves with their runs and each partition's log end from the deliveries. */
async function produce(topic, onProgress) {
  const ends = new Array(PARTITIONS).fill(0);
  const onDelivery = (_v, report) => {
    if (report.offset + 1 > ends[report.partition]) ends[report.partition] = report.offset + 1;
  };
  const runs = await Promise.all([0, 1].map((i) => H.produceHot(topic, PER_PRODUCER, {
    hotShare: 0.4, ratePerSec: RATE, seed: 0x4b4a + i, keys: 2000, onDelivery, onProgress: i === 0 ? onProgress : undefined,
    // KafkaJS reads no LZ4 without a codec plugged in.
    globalConfig: { 'compression.codec': 'gzip' },
  })));
  return { runs, ends };
}

/** Checks the calls against the deliveries: lost, unexplained order violations, re-deliveries. */
function check(t, runs, calls) {
  const producerOf = new Map(); // key -> producer index
  runs.forEach((run, i) => run.keys.forEach((key) => producerOf.set(key, i)));
  // First call of each message, per producer.
  const first = runs.map(() => new Map()); // id -> call
  let again = 0;
  for (const c of calls) {
    const p = producerOf.get(c.key);
    if (p === undefined) continue;
    if (first[p].has(c.id)) again++;
    else first[p].set(c.id, c);
  }
  let lost = 0;
  let delivered = 0;
  let violations = 0;
  let flagged = 0;
  let hotSpread = 0;
  runs.forEach((run, p) => {
    // Per key: the ids in send order (seq), from what was delivered.
    const byKey = new Map();
    for (let id = 0; id < PER_PRODUCER; id++) {
      if (run.partitionOf[id] < 0) continue; // not delivered
      delivered++;
      if (!first[p].has(id)) lost++;
      const k = run.keyOf[id];
      let list = byKey.get(k);
      if (!list) byKey.set(k, (list = []));
      list.push(id);
    }
    const hotParts = new Set((byKey.get(run.hotId) ?? []).map((id) => run.partitionOf[id]));
    hotSpread = Math.max(hotSpread, hotParts.size);
    for (const list of byKey.values()) {
      for (let i = 1; i < list.length; i++) {
        const c = first[p].get(list[i]);
        const before = first[p].get(list[i - 1]);
        if (!c || !before) continue;
        if (c.start < before.end) {
          if (c.flagged) flagged++;
          else violations++;
        }
      }
    }
  });
  t.ok(delivered > 0 && delivered === runs.reduce((n, r) => n + r.deliveries, 0), `${delivered} messages delivered`);
  t.ok(hotSpread > 1, `the hot keys were spread (over up to ${hotSpread} partitions)`);
  t.equal(lost, 0, 'no delivered message lost');
  t.equal(violations, 0, `no unexplained order violation (${flagged} flagged outOfOrder)`);
  return { again, flagged };
}

/** Records seen in the group's commits (their metadata), and any metadata that is not one. */
const metadataSeen = { records: 0, other: [] };

async function committedOf(admin, group, topic) {
  const [read] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  const out = new Array(PARTITIONS).fill(-1);
  for (const { partition, offset, metadata } of read.partitions) {
    out[partition] = Number(offset);
    if (metadata === null || metadata === '') continue;
    // A handled record, with the NUL the librdkafka-based clients write after it.
    if (metadata.startsWith('kdp2:') && metadata.endsWith('\0')) metadataSeen.records++;
    else metadataSeen.other.push(metadata);
  }
  return out;
}

function wrapped(client, admin, group, r, who, errors) {
  const raw = client.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500, rebalanceTimeout: 10000, maxWaitTimeInMs: 100 });
  const c = wrapKafkaJsConsumer(raw, { admin, commitIntervalMs: 200, resequencer: { maxWaitMs: 10000 } });
  c.on('committed', r.onCommitted);
  c.on('error', (err) => errors.push(`${who}: ${err.message}`));
  c.on('handlerError', (err) => errors.push(`${who} handler: ${err.message}`));
  return c;
}

/** A scenario's topic (made here), its group's name, a KafkaJS client and a connected admin, the recorder and the errors list. */
async function scenario(t, name) {
  const total = K.lap();
  const topic = K.topicName(name);
  await K.createTopic(topic, PARTITIONS, Math.min(3, K.brokers().split(',').length));
  const client = kafka();
  const admin = client.admin();
  await admin.connect();
  t.teardown(() => admin.disconnect());
  return { total, topic, group: `${topic}-group`, client, admin, r: recorder(), errors: [] };
}

async function start(c, topic, handler) {
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  const assigned = new Promise((resolve) => c.once('assigned', resolve));
  await c.run({ eachMessage: handler, partitionsConsumedConcurrently: 16 });
  await H.within(assigned, 20000);
}

t.test('KafkaJS 2.2.4, one consumer: two producers spreading hot keys, nothing lost, in order', { ...K.needsCluster(), timeout: 60000 }, async (t) => {
  const { total, topic, group, client, admin, r, errors } = await scenario(t, 'kafkajs-one');
  const c = wrapped(client, admin, group, r, 'A', errors);
  await start(c, topic, r.handler('A'));
  const { runs, ends } = await produce(topic);
  const expected = runs.reduce((n, run) => n + run.deliveries, 0);
  const handledIds = () => new Set(r.calls.map((x) => `${x.key}:${x.id}`)).size;
  t.ok(await H.until(() => handledIds() >= expected, 30000), 'every delivered message handled within 30 s');
  await c.disconnect();
  const { again, flagged } = check(t, runs, r.calls);
  const { commitPastUnhandled, commits } = r.stats();
  t.equal(commitPastUnhandled, 0, `no commit passed a message not handled (${commits} partition commits)`);
  t.same(await committedOf(admin, group, topic), ends, "the group's committed offsets are the log end");
  t.same(errors, [], 'no error');
  t.comment(`${r.calls.length} calls, ${again} again, ${flagged} flagged; ${total()} ms`);
});

t.test('KafkaJS 2.2.4, a group of two: B joins mid-run and leaves, nothing lost, in order', { ...K.needsCluster(), timeout: 60000 }, async (t) => {
  const { total, topic, group, client, admin, r, errors } = await scenario(t, 'kafkajs-group');
  const A = wrapped(client, admin, group, r, 'A', errors);
  const B = wrapped(client, admin, group, r, 'B', errors);
  const revoked = { A: 0, B: 0 };
  A.on('revoked', (list) => { revoked.A += list.length; });
  B.on('revoked', (list) => { revoked.B += list.length; });
  await start(A, topic, r.handler('A'));
  let bJoined = null;
  let bLeft = null;
  const { runs, ends } = await produce(topic, async (sent) => {
    if (sent === Math.floor(PER_PRODUCER / 4 / 1000) * 1000) bJoined = start(B, topic, r.handler('B'));
    if (sent === Math.floor((PER_PRODUCER * 3) / 4 / 1000) * 1000) {
      await bJoined;
      bLeft = B.disconnect();
    }
  });
  await bLeft;
  const expected = runs.reduce((n, run) => n + run.deliveries, 0);
  const handledIds = () => new Set(r.calls.map((x) => `${x.key}:${x.id}`)).size;
  t.ok(await H.until(() => handledIds() >= expected, 30000), 'every delivered message handled within 30 s');
  const metrics = A.metrics();
  await A.disconnect();
  const byB = r.calls.filter((x) => x.who === 'B').length;
  t.ok(byB > 0, `B handled messages (${byB})`);
  t.ok(metrics.rejoins.rebalancing >= 1 && revoked.A > 0, `A met the rebalance (${metrics.rejoins.rebalancing} REBALANCING, ${revoked.A} partitions revoked)`);
  const { again, flagged } = check(t, runs, r.calls);
  const { commitPastUnhandled, commits } = r.stats();
  t.equal(commitPastUnhandled, 0, `no commit passed a message not handled (${commits} partition commits)`);
  t.same(await committedOf(admin, group, topic), ends, "the group's committed offsets are the log end");
  t.same(errors, [], 'no error');
  const j = metrics.rejoins;
  t.comment(`A's rejoins: ${j.rebalancing} REBALANCING, ${j.joins} joins (last ${j.lastJoinMs} ms after REBALANCING); commits on them ${j.committed} landed, ` +
    `${j.refused} refused (last answer ${j.lastCommitMs} ms after); ${j.belowCommitted} messages below the committed offset skipped`);
  t.comment(`${r.calls.length} calls, ${again} again (re-deliveries), ${flagged} flagged; B handled ${byB}; ${total()} ms`);
});

t.test('KafkaJS 2.2.4, a long wait for the application: eachBatch heartbeats, the membership is kept', { ...K.needsCluster(), timeout: 60000 }, async (t) => {
  const { total, topic, group, client, admin, r, errors } = await scenario(t, 'kafkajs-wait');
  // A session of 6 s; the first call takes 8 s, while the queue is full (maxPending 50): eachBatch
  // waits that long, and only its heartbeats keep the member in the group.
  const raw = client.consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 500, rebalanceTimeout: 10000, maxWaitTimeInMs: 100 });
  const c = wrapKafkaJsConsumer(raw, { admin, commitIntervalMs: 200, maxPending: 50 });
  c.on('committed', r.onCommitted);
  c.on('error', (err) => errors.push(err.message));
  let first = true;
  const handle = r.handler('A');
  await start(c, topic, async (payload, info) => {
    if (first) {
      first = false;
      await sleep(8000);
    }
    await handle(payload, info);
  });
  const { runs, ends } = await produce(topic);
  const expected = runs.reduce((n, run) => n + run.deliveries, 0);
  const handledIds = () => new Set(r.calls.map((x) => `${x.key}:${x.id}`)).size;
  t.ok(await H.until(() => handledIds() >= expected, 30000), 'every delivered message handled within 30 s');
  const { rejoins } = c.metrics();
  await c.disconnect();
  t.match(rejoins, { rebalancing: 0, joins: 1 }, 'no rebalance: the member stayed in the group through the wait');
  const { again } = check(t, runs, r.calls);
  t.equal(again, 0, 'nothing handled twice');
  t.equal(r.stats().commitPastUnhandled, 0, 'no commit passed a message not handled');
  t.same(await committedOf(admin, group, topic), ends, "the group's committed offsets are the log end");
  t.same(errors, [], 'no error');
  t.comment(`${r.calls.length} calls; ${total()} ms`);
});

t.test('the commits carried handled records, as the librdkafka-based clients write them', { ...K.needsCluster() }, async (t) => {
  t.same(metadataSeen.other, [], 'no other metadata');
  t.comment(`${metadataSeen.records} records read back at the ends of the runs above`);
});
