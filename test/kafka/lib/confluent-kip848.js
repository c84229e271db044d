'use strict';
// Confluent's KafkaJS-compatible consumer under KIP-848 ('group.protocol': 'consumer' in its own
// configuration), wrapped by wrapKafkaJsConsumer, on the real cluster. Run by
// test/kafka/group-protocol.test.js in a process that cannot load node-rdkafka (one librdkafka:
// Confluent's), with KDP_TEST_CLIENT=confluent. A DynamicProducer (Confluent's client too)
// spreads a hot key while A reads; B joins once a third is produced. Expected, from the
// producer's delivery reports: every message handled, per key in produce order but where a
// message handed out flagged explains it, the group's commits at the log end once both stopped.
// And the wrapper's groupProtocol option checked against the consumer's configuration.
//
// Run directly (tap does when named), this file has no tests unless KAFKA_BROKERS is set.

const t = require('tap');
const { KafkaJS } = require('@confluentinc/kafka-javascript');
const { wrapKafkaJsConsumer } = require('../../..');
const K = require('./kafka');
const H = require('./hot-key');

const PARTITIONS = 6;
const MESSAGES = 15_000;
const RATE = 1500;

function consumerOf(groupId, config = { 'group.protocol': 'consumer' }) {
  const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: K.brokers().split(','), logLevel: KafkaJS.logLevel.NOTHING } });
  return kafka.consumer({ kafkaJS: { groupId, fromBeginning: true, autoCommit: false }, ...config });
}

t.test("Confluent's KafkaJS consumer under KIP-848: a second member joins, every message handled in key order, commits at the log end", { ...K.needsCluster(), timeout: 180000 },
  async (t) => {
    const topic = K.topicName('confluent-kip848');
    const group = `${topic}-group`;
    const replication = Math.min(3, K.brokers().split(',').length);
    await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
    const handled = []; // { at, who, id, keyId, seq, flagged }
    const count = new Uint8Array(MESSAGES);
    const errors = [];
    const events = [];
    const make = (who) => {
      const c = wrapKafkaJsConsumer(consumerOf(group), { groupProtocol: 'consumer', commitIntervalMs: 200, resequencer: { maxWaitMs: 5000 } });
      c.on('error', (err) => errors.push(`${who}: ${err.message}`));
      for (const type of ['assigned', 'revoked']) c.on(type, (a) => events.push(`${who} ${type} ${a.map((tp) => tp.partition)}`));
      const eachMessage = async ({ message }, info) => {
        const v = K.parseValue(message.value);
        if (v === null || v.id >= MESSAGES) return;
        count[v.id]++;
        handled.push({ at: Date.now(), who, ...v, flagged: !info.ordered });
      };
      return { c, eachMessage };
    };
    const A = make('A');
    await A.c.connect();
    await A.c.subscribe({ topics: [topic] });
    await A.c.run({ eachMessage: A.eachMessage, partitionsConsumedConcurrently: 4 });
    let B = null;
    const run = await H.produceHot(topic, MESSAGES, {
      hotShare: 0.4,
      ratePerSec: RATE,
      seed: 0x848,
      onProgress: async (sent) => {
        if (sent !== 5000) return;
        B = make('B');
        await B.c.connect();
        await B.c.subscribe({ topics: [topic] });
        await B.c.run({ eachMessage: B.eachMessage, partitionsConsumedConcurrently: 4 });
      },
    });
    const all = await H.until(() => count.every((n) => n > 0) && A.c.metrics().held === 0 && B.c.metrics().held === 0, 60000);
    await K.sleep(600);
    await A.c.stop();
    await B.c.stop();
    const final = await H.offsetsOf(group, topic, PARTITIONS);
    // Per key in the order the calls started: a message after a later one of its key is explained by a flagged one between.
    const chains = new Map();
    let unexplained = 0;
    for (const h of [...handled].sort((x, y) => x.at - y.at)) {
      const c = chains.get(h.keyId) ?? { max: -1, flags: [] };
      chains.set(h.keyId, c);
      if (h.seq < c.max && !c.flags.some((f) => f > h.seq && f <= c.max)) unexplained++;
      if (h.flagged) c.flags.push(h.seq);
      c.max = Math.max(c.max, h.seq);
    }
    const flagged = handled.filter((h) => h.flagged).length;
    t.comment(events.join('; '));
    t.comment(`handled A ${handled.filter((h) => h.who === 'A').length}, B ${handled.filter((h) => h.who === 'B').length}; flagged ${flagged}; unexplained ${unexplained}; stale-epoch commits made again A ${A.c.metrics().rejoins.staleRetries}, B ${B.c.metrics().rejoins.staleRetries}`);
    t.same(errors, [], 'no consumer errors');
    t.equal(run.deliveries, MESSAGES, 'every message delivered');
    t.ok(all, 'every message handled');
    t.ok(handled.some((h) => h.who === 'B'), 'B handled messages');
    t.ok(events.some((e) => e.startsWith('A revoked')), 'A gave partitions up to B');
    t.equal(unexplained, 0, 'per key in produce order, but where a flagged message explains it');
    t.same(final.committed, final.ends, 'committed = log end');
  });

t.test("the wrapper's groupProtocol is checked against the consumer's configuration at connect()", { ...K.needsCluster(), timeout: 60000 }, async (t) => {
  const c = wrapKafkaJsConsumer(consumerOf(K.topicName('kip848-mismatch')), { groupProtocol: 'classic' });
  await t.rejects(c.connect(), { code: 'KDP_INVALID_OPTION', path: 'options.groupProtocol', message: /joins with 'consumer'/ });
  const d = wrapKafkaJsConsumer(consumerOf(K.topicName('kip848-match')), { groupProtocol: 'consumer' });
  await d.connect();
  await d.stop();
});
