'use strict';
// Every message is delivered exactly once, against librdkafka's mock cluster: 50,000
// Zipf-keyed messages through send() and 100,000 through produce(). Counted twice,
// independently: the producer's delivery reports per key, and the topic read back with a
// plain node-rdkafka KafkaConsumer (every value id once, the log holding nothing more, keys
// and order headers intact).
//
// Placement: a key never reported hot goes where Kafka's partitioner puts it
// (partitionForKey, checked against librdkafka itself in test/mock/); so does every message
// that carries no order header and every anchor / return. Hot keys must actually spread.
// The client library is test/lib/clients.js's (test/kafkajs/confluent/matrix.test.js runs this file
// with Confluent's).
const t = require('tap');
const { clientOptions } = require('../lib/clients');
const { DynamicProducer, partitionForKey, decodeOrderHeader } = require('../..');
const { zipf, sleep, brokersOf, consumeAll, headerOf, trackHot, wireBytes } = require('./lib/helpers');

const N = 4; // partitions of an auto-created topic in the mock cluster
const BASE = 'consistent_random'; // librdkafka's default: no partitioner configured

// Keys node-rdkafka would damage if handed over as they are (see README): they must arrive intact.
const SPECIAL = [Buffer.alloc(0), 'a\u0000b', '', new Uint8Array([0, 255, 7]), Buffer.from('ff00ee', 'hex'), 'ünï-çødé'];

function keyStream(seed, count) {
  const next = zipf(3000, 1.1, seed);
  const keys = new Array(count);
  for (let i = 0; i < count; i++) keys[i] = i % 997 === 0 ? SPECIAL[(i / 997) % SPECIAL.length] : `user-${next()}`;
  return keys;
}

const hex = (key) => (key === null || key === undefined ? 'null' : wireBytes(key).toString('hex'));

function countBy(keys) {
  const m = new Map();
  for (const k of keys) m.set(hex(k), (m.get(hex(k)) ?? 0) + 1);
  return m;
}

/** Checks the read-back topic against what was sent; `reports` (optional) maps id → delivery report. */
function checkReadBack(t, keys, read, hot, reports) {
  t.equal(read.total, keys.length, 'the log holds exactly as many messages as were sent (high - low watermarks)');
  t.equal(read.messages.length, keys.length, 'as many messages read back as were sent');
  const seen = new Uint8Array(keys.length);
  let badId = 0;
  let badKey = 0;
  let badPlace = 0;
  let headerOfCold = 0;
  let badReport = 0;
  let marked = 0;
  let undecodable = 0;
  for (const m of read.messages) {
    const id = Number(m.value.toString());
    if (!Number.isInteger(id) || id < 0 || id >= keys.length || seen[id]++) {
      if (badId++ < 3) t.fail(`message ${m.value} read twice or unknown`);
      continue;
    }
    const key = keys[id];
    if (!(Buffer.isBuffer(m.key) && m.key.equals(wireBytes(key)))) {
      if (badKey++ < 3) t.fail(`message ${id}: key ${hex(key)} arrived as ${m.key === null ? 'null' : m.key.toString('hex')}`);
    }
    const raw = headerOf(m);
    const order = raw === undefined ? null : decodeOrderHeader(raw);
    if (raw !== undefined) {
      marked++;
      if (order === null && undecodable++ < 3) t.fail(`message ${id}: kdp-order header arrived as ${raw.toString('hex')} (${raw.length} bytes)`);
      if (!hot.wasHot(key) && headerOfCold++ < 3) t.fail(`message ${id}: key ${hex(key)} was never hot but carries kdp-order`);
    }
    const want = partitionForKey(key, N, BASE);
    // (A header that arrived damaged is counted above; where its message belongs is unknown.)
    const mustBeHome = raw === undefined || (order !== null && order.kind !== 'spread');
    if (want !== -1 && mustBeHome && m.partition !== want && badPlace++ < 3) {
      t.fail(`message ${id} (key ${hex(key)}, ${order ? order.kind : 'no header'}) on partition ${m.partition}, Kafka's is ${want}`);
    }
    if (reports) {
      const r = reports[id];
      if (!(r && r.partition === m.partition && r.offset === m.offset) && badReport++ < 3) {
        t.fail(`message ${id}: report says ${r && r.partition}/${r && r.offset}, the log ${m.partition}/${m.offset}`);
      }
    }
  }
  t.equal(badId, 0, 'no message read twice, none unknown');
  t.equal(seen.indexOf(0), -1, 'every message read back');
  t.equal(badKey, 0, 'every key arrived intact (empty Buffer, U+0000, Uint8Array included)');
  t.equal(badPlace, 0, "every message without a header, and every anchor / return, on Kafka's partition");
  t.equal(headerOfCold, 0, 'no kdp-order header on keys never hot');
  t.ok(marked > 0, `${marked} messages carry a kdp-order header`);
  t.equal(undecodable, 0, 'every kdp-order header arrived intact (31 bytes, decodable)');
  if (reports) t.equal(badReport, 0, 'each delivery report names the partition and offset the message has in the log');
}

/** Checks cold keys' reported partitions and that hot keys used more than one partition. */
function checkPlacement(t, keys, partitionOf, hot) {
  let badCold = 0;
  let coldKeys = 0;
  const spreadTo = new Map();
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const p = partitionOf(i);
    if (hot.wasHot(key)) {
      const h = hex(key);
      if (!spreadTo.has(h)) spreadTo.set(h, new Set());
      spreadTo.get(h).add(p);
      continue;
    }
    const want = partitionForKey(key, N, BASE);
    if (want === -1) continue;
    if (p !== want && badCold++ < 3) t.fail(`cold key ${hex(key)} on ${p}, Kafka's partition ${want}`);
  }
  for (const k of countBy(keys).keys()) if (!hot.ever.has(k)) coldKeys++;
  t.equal(badCold, 0, `every message of the ${coldKeys} keys never hot on partitionForKey(key, ${N}, '${BASE}')`);
  t.ok(hot.ever.size >= 3, `${hot.ever.size} keys turned hot`);
  const narrow = [...spreadTo].filter(([, ps]) => ps.size < 2).map(([k]) => k);
  t.same(narrow, [], 'every key that turned hot was spread over more than one partition');
  // How wide each key went depends on the cold keys' load (widths grow only while balance
  // needs them to); at least two partitions each is the guarantee, checked above.
  t.comment(`partitions per hot key: ${[...spreadTo.values()].map((ps) => ps.size).join(' ')}`);
}

/**
 * A connected DynamicProducer on a fresh mock cluster, with its 'error' events, its hot keys,
 * and its 'delivery' events counted: in all, as errors, per key (hex of the key's bytes) and
 * the partitions each key's reports name.
 */
async function deliveringProducer(t) {
  // Split keys (relocate: false) in runs of hotRun messages (splitRunMs: 0; a producer's runs are
  // timed from its start, and this test is shorter than one): checkPlacement wants every hot key
  // on several partitions.
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, {}, { relocate: false, splitRunMs: 0, ...clientOptions() });
  t.teardown(() => p.disconnect().catch(() => {}));
  const errors = [];
  p.on('error', (e) => errors.push(e));
  const hot = trackHot(p);
  const delivered = { events: 0, errors: 0, perKey: new Map(), partitionsPerKey: new Map() };
  p.on('delivery', (err, report) => {
    delivered.events++;
    if (err) delivered.errors++;
    const k = report.key === null || report.key === undefined ? 'null' : Buffer.from(report.key).toString('hex');
    delivered.perKey.set(k, (delivered.perKey.get(k) ?? 0) + 1);
    if (!delivered.partitionsPerKey.has(k)) delivered.partitionsPerKey.set(k, new Set());
    delivered.partitionsPerKey.get(k).add(report.partition);
  });
  await p.connect();
  return { p, errors, hot, delivered };
}

t.test('50,000 Zipf-keyed messages through send(): each delivered exactly once', async (t) => {
  const keys = keyStream(0x5e4d, 50_000);
  const topic = 'exact-send';
  const { p, errors, hot, delivered } = await deliveringProducer(t);
  const reports = new Array(keys.length);
  let rejected = 0;
  let badReportKey = 0;
  // In chunks: the first goes before the partition count is known (librdkafka places it),
  // the rest are placed here.
  for (let start = 0; start < keys.length; start += 2500) {
    const chunk = [];
    for (let i = start; i < Math.min(start + 2500, keys.length); i++) {
      chunk.push(p.send(topic, String(i), keys[i]).then((r) => {
        reports[i] = r;
        // The key as the caller gave it: the same string, Buffer or Uint8Array.
        if (r.key !== keys[i] && badReportKey++ < 3) {
          t.fail(`report of message ${i}: key ${hex(keys[i])} reported as ${r.key}`);
        }
      }, () => { rejected++; }));
    }
    await Promise.all(chunk);
  }
  await p.flush(10000);
  await sleep(200); // a duplicate report would show up now
  t.equal(rejected, 0, 'no send() rejected');
  t.equal(badReportKey, 0, 'every delivery report carries the key intact');
  t.equal(delivered.events, keys.length, "exactly one 'delivery' event per message");
  t.equal(delivered.errors, 0, 'none of them an error');
  t.same(delivered.perKey, countBy(keys), 'delivery reports per key = messages sent per key');
  const m = p.metrics().topics[topic];
  t.match(m, { produced: keys.length, delivered: keys.length, failed: 0 }, 'metrics count every message once');
  checkPlacement(t, keys, (i) => reports[i].partition, hot);
  t.ok(reports.every((r) => r.topic === topic && r.partition >= 0 && r.partition < N), 'every report names the topic and a partition');

  const read = await consumeAll(await brokersOf(p.client), topic, keys.length);
  checkReadBack(t, keys, read, hot, reports);
  t.same(errors, [], "no 'error' events");
});

t.test('100,000 Zipf-keyed messages through produce(): each delivered exactly once', async (t) => {
  const keys = keyStream(0x7a11, 100_000);
  const topic = 'exact-produce';
  const { p, errors, hot, delivered } = await deliveringProducer(t);
  let held = 0;
  for (let start = 0; start < keys.length; start += 5000) {
    for (let i = start; i < Math.min(start + 5000, keys.length); i++) if (!p.produce(topic, String(i), keys[i])) held++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await p.flush(20000);
  await sleep(200);
  t.equal(delivered.events, keys.length, `exactly one 'delivery' event per message (${held} were held for a while)`);
  t.equal(delivered.errors, 0, 'none of them an error');
  t.same(delivered.perKey, countBy(keys), 'delivery reports per key = messages produced per key');
  t.match(p.metrics().topics[topic], { produced: keys.length, delivered: keys.length, failed: 0 }, 'metrics count every message once');

  const read = await consumeAll(await brokersOf(p.client), topic, keys.length);
  checkReadBack(t, keys, read, hot);
  const partitionOf = new Int32Array(keys.length).fill(-1);
  for (const m of read.messages) partitionOf[Number(m.value.toString())] = m.partition;
  checkPlacement(t, keys, (i) => partitionOf[i], hot);
  // The reports' partitions per key agree with the log's.
  const logPartitions = new Map();
  for (const m of read.messages) {
    const k = m.key.toString('hex');
    if (!logPartitions.has(k)) logPartitions.set(k, new Set());
    logPartitions.get(k).add(m.partition);
  }
  t.same(delivered.partitionsPerKey, logPartitions, 'the partitions the reports name per key are those of the log');
  t.same(errors, [], "no 'error' events");
});
