'use strict';
// A million Zipf(1.0)-keyed messages (100,000 keys) through DynamicProducer into a real
// 3-node cluster (acks=all, enable.idempotence=true, 12 partitions, replication 3,
// min.insync.replicas 2), then the topic read back with a plain consumer of the same client
// library (node-rdkafka, or Confluent's client with KDP_TEST_CLIENT=confluent:
// test/kafka/confluent.test.js):
//   - nothing lost, nothing duplicated: every message once, the log holding nothing more,
//     each key's count as produced;
//   - cold keys (never reported 'hot') all on their hashed partition (partitionForKey,
//     'murmur2_random'), without order headers;
//   - hot keys spread as their order headers say: each spread message within
//     allowedPartitions(key, n, width), anchors / returns on the hashed partition, and every
//     key too big to fit whole on any partition on more than one;
//   - per-key order: on each partition a key's messages in the order they were produced
//     (offsets increase with the value's per-key sequence number); for cold keys that is
//     their whole history.
//
// Needs KAFKA_BROKERS (npm run test:kafka). KDP_KAFKA_MESSAGES changes the count.

const t = require('tap');
const K = require('./lib/kafka');
const { produceZipf, checkTopic, assertNothingLost } = require('./lib/zipf-run');

const MESSAGES = Number(process.env.KDP_KAFKA_MESSAGES || 1_000_000);
const PARTITIONS = 12;

t.test(`${MESSAGES} Zipf-keyed messages: exactly once, cold keys hashed, hot keys spread, per-key order`, { ...K.needsCluster(), timeout: 900000 }, async (t) => {
  const total = K.lap();
  const topic = K.topicName('exactly-once');
  const replication = Math.min(3, K.brokers().split(',').length);
  await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
  t.comment(`topic ${topic}: ${PARTITIONS} partitions, replication ${replication}`);

  const run = await produceZipf(topic, MESSAGES, { seed: 0x1e6 });
  t.comment(`produced ${MESSAGES} in ${run.producedMs} ms, all delivered in ${run.ms} ms (${Math.round(MESSAGES / (run.ms / 1000))} msg/s); longest pause between delivery reports ${run.longestGap} ms`);
  t.comment(`${run.hot.ever.size} keys reported hot (${run.hot.events.length} hot/cooled events)`);
  const check = await checkTopic(topic, run);
  t.comment(`read back ${check.read.read} messages in ${check.read.ms} ms (${Math.round(check.read.read / (check.read.ms / 1000))} msg/s)`);
  t.comment(`hottest keys (messages, partitions used, widest spread): ${check.hotKeys.slice(0, 10).map((h) => `${h.key} ${h.messages}/${h.partitions}/${h.maxWidth}`).join(', ')}`);
  const problems = (kind) => check.problems[kind] ?? [];
  const howMany = (kind) => (check.problems[kind] ? check.problems[kind].count ?? check.problems[kind].length : 0);

  t.test('nothing lost, nothing duplicated', async (t) => {
    assertNothingLost(t, run, check, MESSAGES);
    t.same(run.producerErrors.map(String), [], 'no producer errors');
    t.same(problems('unknown'), [], 'no message that was not produced');
    t.same([...problems('key'), ...problems('value')], [], 'keys and values intact');
  });

  t.test('cold keys on their hashed partition', async (t) => {
    t.same(problems('cold'), [], 'every message without order header on its key\'s hashed partition');
    t.same(problems('cold-split'), [], 'each never-hot key on one partition');
    t.same(problems('header-on-cold'), [], 'no order header on a never-hot key');
  });

  t.test('hot keys spread as reported', async (t) => {
    t.ok(check.hotKeys.length > 0, `keys were reported hot (${check.hotKeys.length})`);
    t.ok(check.spread > 0, `messages were spread (${check.spread} spread, ${check.marked} with order headers)`);
    t.same(problems('spread'), [], 'each spread message within allowedPartitions(key, n, width) of its header');
    t.same(problems('anchor'), [], 'anchors and returns on the hashed partition');
    t.same(problems('moved'), [], 'relocated keys\' messages moved whole (width 1)');
    t.same(problems('after'), [], 'each marked message names its predecessor\'s partition, and its offset where a handoff waited for it');
    t.ok(check.moved > 0 && check.handoffs > 0, `keys were relocated (${check.moved} moved messages, ${check.handoffs} ordered handoffs)`);
    t.same(problems('header'), [], 'order headers readable, for the topic\'s partition count');
    t.same(problems('handed'), [], 'each message on the partition the producer chose');
    t.same(problems('header-lost'), [], 'a kdp-order header read back on exactly the messages given one');
    t.same(problems('header-damaged'), [], `every kdp-order header read back byte for byte as handed to ${K.clientName()} (${howMany('header-damaged')} of ${check.marked} damaged)`);
    // A hot key is split only where balance needs it: it must be, when even the partition with
    // the least never-hot traffic could not take it whole within 5% of the mean (the balance
    // the policy must hold at Zipf 1.0). The key's rank alone proves nothing: the third hottest
    // here is a third of a fair share, and stays home whenever its partition has room.
    const mean = MESSAGES / check.partitions;
    const room = Math.min(...check.neverHotOn);
    const mustSplit = check.hotKeys.filter((h) => h.messages + room > 1.05 * mean);
    t.ok(mustSplit.length > 0, `keys that fit on no partition whole (${mustSplit.map((h) => h.key).join(', ')}; least never-hot traffic on a partition ${room}, mean ${Math.round(mean)})`);
    for (const h of mustSplit) t.ok(h.partitions > 1, `hot key ${h.key} (${h.messages} messages) on more than one partition (${h.partitions})`);
  });

  t.test('per-key order', async (t) => {
    t.same(problems('order'), [], 'on each partition, each key\'s messages in produced order (offsets increase with sequence)');
    t.same(problems('cold-order'), [], `each cold key's messages in produced order end to end (${check.coldOrderChecked} messages)`);
  });
  t.comment(`exactly-once: ${total()} ms`);
});
