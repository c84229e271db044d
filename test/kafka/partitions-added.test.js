'use strict';
// Partitions added while producing: Zipf-keyed messages through DynamicProducer
// (metadataRefreshMs 2000) to a 6-partition topic; once a fifth is sent, node-rdkafka's
// AdminClient raises the count to 12. The producer must use the new count within its refresh
// interval (plus the time a metadata request takes), cold keys must then land on their hash
// over 12 partitions (before: over 6), and nothing may be lost or duplicated.
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const t = require('tap');
const K = require('./lib/kafka');
const { produceZipf, checkTopic, assertNothingLost } = require('./lib/zipf-run');

const MESSAGES = Number(process.env.KDP_KAFKA_RESIZE_MESSAGES || 200_000);
const RATE = 8000;
const BEFORE = 6;
const AFTER = 12;
const REFRESH_MS = 2000;
const SLACK_MS = 3000; // a metadata round trip on a busy 2-core machine

t.test(`partitions added while producing (${BEFORE} -> ${AFTER}): the new count used within the refresh interval, nothing lost`, { ...K.needsCluster(), timeout: 600000 }, async (t) => {
  const total = K.lap();
  const topic = K.topicName('resize');
  const replication = Math.min(3, K.brokers().split(',').length);
  await K.createTopic(topic, BEFORE, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
  t.comment(`topic ${topic}: ${BEFORE} partitions, replication ${replication}`);

  let producer = null;
  let addedId = -1; // messages from this id on may use either count
  let addedAt = 0;
  let switchId = -1; // messages from this id on use the new count
  let switchAt = 0;
  const run = await produceZipf(topic, MESSAGES, {
    seed: 0x12e5,
    ratePerSec: RATE,
    producerOptions: { metadataRefreshMs: REFRESH_MS },
    onConnect: (p) => { producer = p; },
    onProgress: async (sent) => {
      if (addedId < 0 && sent === Math.floor(MESSAGES / 5 / 1000) * 1000) {
        addedId = sent;
        const lap = K.lap();
        await K.createPartitions(topic, AFTER);
        addedAt = Date.now();
        t.comment(`${sent} sent: createPartitions(${topic}, ${AFTER}) answered in ${lap()} ms`);
      }
      if (addedId >= 0 && switchId < 0 && producer.metrics().topics[topic].partitions === AFTER) {
        switchId = sent;
        switchAt = Date.now();
        t.comment(`${sent} sent: the producer uses ${AFTER} partitions, ${switchAt - addedAt} ms after they were added`);
      }
    },
  });
  t.comment(`produced ${MESSAGES} in ${run.producedMs} ms, all delivered in ${run.ms} ms`);
  t.ok(switchId > 0, `the producer took up the new partition count (at message ${switchId})`);
  t.ok(switchAt - addedAt <= REFRESH_MS + SLACK_MS, `within the refresh interval: ${switchAt - addedAt} ms <= ${REFRESH_MS} + ${SLACK_MS} ms`);

  // Messages produced before the partitions were added hash over BEFORE, after the switch over
  // AFTER; in between, either.
  const countsAt = (id) => (id < addedId ? [BEFORE] : id >= switchId ? [AFTER] : [BEFORE, AFTER]);
  const check = await checkTopic(topic, run, { countsAt: (id) => (switchId < 0 ? [BEFORE, AFTER] : countsAt(id)) });
  t.comment(`read back ${check.read.read} messages in ${check.read.ms} ms from ${check.read.partitions} partitions`);
  const problems = (kind) => check.problems[kind] ?? [];
  const onNew = check.read.high.slice(BEFORE).reduce((a, b) => a + b, 0);

  t.equal(check.read.partitions, AFTER, `the topic has ${AFTER} partitions`);
  t.ok(onNew > 0, `messages landed on the new partitions (${onNew})`);
  t.test('nothing lost, nothing duplicated', async (t) => {
    assertNothingLost(t, run, check, MESSAGES);
  });
  t.test('placement follows the partition count', async (t) => {
    t.same(problems('cold'), [], `messages without order header on their key's hash over ${BEFORE} partitions before, ${AFTER} after the switch`);
    t.same(problems('handed'), [], 'each message on the partition the producer chose');
    t.same(problems('spread'), [], 'spread messages within allowedPartitions(key, n, width) for the n of their header');
    t.same(problems('anchor'), [], 'anchors and returns on the hashed partition');
    t.same(problems('moved'), [], 'relocated keys\' messages moved whole (width 1)');
    t.same(problems('after'), [], 'each marked message names its predecessor\'s partition, and its offset where a handoff waited for it');
    t.same(problems('order'), [], 'on each partition, each key\'s messages in produced order');
  });
  t.comment(`partitions-added: ${total()} ms`);
});
