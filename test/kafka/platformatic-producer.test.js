'use strict';
// @platformatic/kafka's producer with our partitioning on the real cluster (3 nodes): the
// Producer runs under Node 22 (test/platformatic/fixtures/produce.js through
// test/lib/platformatic.js) and sends a skewed workload to a topic of 12 partitions: a quarter
// of the messages of one key (HOT), the rest of 2,000 keys, in batches of 200.
//   - wrapPlatformaticProducer (its send(), order headers as strings): a DynamicConsumer
//     (Node 20) reads the topic while it is produced; each key's messages must be handled in the
//     order sent (the value is the message's number): a message handled before an earlier one
//     of its key is a violation, explained only when handed out flagged outOfOrder; none may be
//     unexplained, none missing (against what was sent and the topic's watermarks);
//   - createPlatformaticPartitioner (the producer's partitioner option, from its first send: no
//     count known yet): no order headers.
// Both: every key but HOT on Kafka's partition (KafkaJS's DefaultPartitioner, Java's rule), and
// the hottest partition within 1.1x the mean (Kafka's own placement: 3.75x).
//
// Needs KAFKA_BROKERS (npm run test:kafka) and Node 22 with @platformatic/kafka (bench/node22.js).

const path = require('node:path');
const t = require('tap');
const { Partitioners } = require('kafkajs');
const K = require('./lib/kafka');
const H = require('./lib/hot-key');
const { platformaticSkip, runPlatformatic } = require('../lib/platformatic');

const PARTITIONS = 12;
const MESSAGES = Number(process.env.KDP_KAFKA_PLATFORMATIC_MESSAGES || 40_000);
const MAX_OVER_MEAN = 1.1;
const FIXTURE = path.join(__dirname, '..', 'platformatic', 'fixtures', 'produce.js');

const kafkajs = Partitioners.DefaultPartitioner();
const metadata = Array.from({ length: PARTITIONS }, (_, partitionId) => ({ partitionId, leader: 0 }));
const kafkaPartition = (key) => kafkajs({ topic: 't', partitionMetadata: metadata, message: { key } });

/** The topic read back: messages per partition, cold keys off Kafka's partition, marked messages per key kind. */
async function readBack(topic) {
  const perPartition = new Array(PARTITIONS).fill(0);
  const out = { perPartition, wrongCold: 0, markedCold: 0, markedHot: 0, hotPartitions: new Set(), values: new Set() };
  const { total, high } = await K.consumeAll(topic, (m) => {
    perPartition[m.partition]++;
    const key = m.key.toString();
    if (key === 'warm-up') return;
    out.values.add(Number(m.value.toString()));
    const marked = K.headerOf(m) !== undefined;
    if (key === 'HOT') {
      out.hotPartitions.add(m.partition);
      if (marked) out.markedHot++;
    } else {
      if (m.partition !== kafkaPartition(m.key)) out.wrongCold++;
      if (marked) out.markedCold++;
    }
  });
  out.total = total;
  out.high = high;
  return out;
}

function checkPlacement(t, label, r, expected) {
  t.equal(r.total, expected, `${label}: the topic's watermarks hold every message sent (${expected}), none lost, none twice`);
  t.equal(r.values.size, MESSAGES, `${label}: every message read back once`);
  t.equal(r.wrongCold, 0, `${label}: every key but HOT on Kafka's partition`);
  t.equal(r.markedCold, 0, `${label}: none of them marked`);
  const ratio = Math.max(...r.perPartition) / (r.total / PARTITIONS);
  t.comment(`${label}: messages per partition ${r.perPartition.join(' ')}; hottest / mean ${ratio.toFixed(3)}; HOT on ${r.hotPartitions.size} partitions`);
  t.ok(r.hotPartitions.size > 1, `${label}: HOT spread over ${r.hotPartitions.size} partitions`);
  t.ok(ratio <= MAX_OVER_MEAN, `${label}: hottest partition / mean ${ratio.toFixed(3)} <= ${MAX_OVER_MEAN}`);
}

t.test(`wrapPlatformaticProducer: placement, balance and order restored by DynamicConsumer (${MESSAGES} messages)`, { ...K.needsCluster(), skip: K.needsCluster().skip || platformaticSkip(), timeout: 120000 }, async (t) => {
  const lap = K.lap();
  const topic = K.topicName('pl-producer');
  await K.createTopic(topic, PARTITIONS, Math.min(3, K.brokers().split(',').length));
  // Each key's last handled number, violations (unflagged ones are unexplained), the numbers handled.
  const last = new Map();
  const handled = new Uint8Array(MESSAGES);
  let distinct = 0;
  let again = 0;
  let flagged = 0;
  const unexplained = [];
  const errors = [];
  const c = H.consumer(`${topic}-group`, { resequencer: { maxWaitMs: 20000, maxBufferedMessages: 200000 } });
  c.on('error', (err) => errors.push(String(err)));
  const { done } = await H.runAssigned(c, topic, (m, info) => {
    const key = m.key.toString();
    const v = Number(m.value.toString());
    if (key === 'warm-up') return;
    if (handled[v]) {
      again++;
      return;
    }
    handled[v] = 1;
    distinct++;
    const before = last.get(key) ?? -1;
    if (v < before) {
      if (info.outOfOrder) flagged++;
      else if (unexplained.length < 10) unexplained.push(`${key}: ${v} (partition ${m.partition}) after ${before}`);
    }
    last.set(key, Math.max(before, v));
  });
  const { result } = await runPlatformatic(FIXTURE, { args: [K.brokers(), topic, 'strings', String(MESSAGES)], timeout: 90000 });
  t.comment(`produced ${result.sent} in ${lap()} ms (topic made, consumer joined); the wrapper's metrics: ${JSON.stringify(result.metrics)}`);
  t.equal(result.sent, MESSAGES, 'every send() resolved');
  t.same(result.hot, ['HOT'], "'hot' for HOT only");
  t.match(result.metrics, { partitions: PARTITIONS, produced: MESSAGES, delivered: MESSAGES, failed: 0 }, 'metrics()');
  const all = await H.until(() => distinct === MESSAGES, 30000);
  await c.stop();
  await done;
  t.ok(all, `the consumer handled every message (${distinct} of ${MESSAGES}; ${again} again)`);
  t.same(errors, [], 'no consumer error');
  t.same(unexplained, [], `no unexplained order violation (${flagged} flagged outOfOrder)`);
  const r = await readBack(topic);
  checkPlacement(t, 'wrapper', r, MESSAGES + 1);
  t.ok(r.markedHot > MESSAGES * 0.2, `HOT's messages carry order headers (${r.markedHot})`);
  t.comment(`wrapper: ${lap()} ms in all`);
});

t.test(`createPlatformaticPartitioner as the producer's partitioner: placement and balance (${MESSAGES} messages)`, { ...K.needsCluster(), skip: K.needsCluster().skip || platformaticSkip(), timeout: 120000 }, async (t) => {
  const lap = K.lap();
  const topic = K.topicName('pl-hook');
  await K.createTopic(topic, PARTITIONS, Math.min(3, K.brokers().split(',').length));
  const { result } = await runPlatformatic(FIXTURE, { args: [K.brokers(), topic, 'hook', String(MESSAGES)], timeout: 90000 });
  t.equal(result.sent, MESSAGES, 'every send() resolved');
  t.same(result.hot, ['HOT'], "'hot' for HOT only");
  const r = await readBack(topic);
  checkPlacement(t, 'hook', r, MESSAGES);
  t.equal(r.markedHot, 0, 'no order headers: the hook cannot write them');
  t.comment(`hook: ${lap()} ms in all`);
});
