'use strict';
// Fire and forget on the native engine (dr_cb off: librdkafka reports only failures, and a
// message takes no slot in the producer, which no report would free): a message the broker
// refuses is still told as a 'delivery' error, with its topic, key and size, read from what
// librdkafka kept of it. The broker refuses them here because the topic's max.message.bytes is
// smaller than the messages (MESSAGE_TOO_LARGE, Kafka's code 10), which librdkafka does not
// check before sending. Delivered messages leave nothing behind in the producer.
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const t = require('tap');
const K = require('./lib/kafka');
const { DynamicProducer } = require('../..');

t.test('dr_cb off: a message the broker refuses is told, with its topic, key and size; none takes a slot', { ...K.needsCluster(), timeout: 120000 }, async (t) => {
  const small = K.topicName('small');
  const fine = K.topicName('fine');
  const replication = Math.min(3, K.brokers().split(',').length);
  await K.createTopic(small, 2, replication, { 'max.message.bytes': '60' });
  await K.createTopic(fine, 2, replication);
  const p = new DynamicProducer({ 'metadata.broker.list': K.brokers(), dr_cb: false, 'message.timeout.ms': 20000 }, { acks: 'all' }, { engine: 'native' });
  t.teardown(() => p.disconnect());
  const told = [];
  p.on('delivery', (err, report) => told.push({ code: err?.librdkafkaCode, topic: report?.topic, key: report?.key, size: report?.size }));
  await p.connect(30000, { topics: [small, fine] });
  for (let i = 0; i < 2000; i++) p.produce(fine, Buffer.alloc(200), `k${i}`);
  for (let i = 0; i < 10; i++) p.produce(small, Buffer.alloc(200), `k${i}`);
  await p.flush(30000);
  for (let i = 0; i < 50 && told.length < 10; i++) await K.sleep(100);
  t.equal(told.length, 10, 'each refused message told once, none of the delivered ones');
  t.ok(told.every((r) => r.code === 10 && r.topic === small && r.size === 200), 'as MESSAGE_TOO_LARGE (10), with its topic and size');
  t.same(told.map((r) => String(r.key)).sort(), Array.from({ length: 10 }, (_, i) => `k${i}`).sort(), 'with its key (the bytes librdkafka kept)');
  const engine = p.adapter.native;
  t.equal(engine.slots.count, 0, 'no message took a slot');
});
