'use strict';
// wrapKafkaJsConsumer()'s dead letters through KafkaJS 2.2.4's own producer, on the real cluster: a message eachMessage
// always throws on goes, after its retry, to the dead-letter topic with its key, value and origin (the delivery report's
// partition and offset), the error and the attempts, written by kafka.producer(); the run goes on, the key's next
// messages after it, and the group's committed offsets reach the log end. The engine's own tests: test/delivery/
// failures.test.js; DynamicConsumer's on this cluster: dead-letters.test.js.
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const t = require('tap');
const { Kafka, logLevel } = require('kafkajs');
const { wrapKafkaJsConsumer, DEAD_LETTER_HEADERS } = require('../..');
const K = require('./lib/kafka');
const { produceHot, until, offsetsOf } = require('./lib/hot-key');

t.test('KafkaJS 2.2.4: a poisoned message to the dead-letter topic through kafka.producer(); nothing else stops', { ...K.needsCluster(), timeout: 120000 }, async (t) => {
  const topic = K.topicName('kjs-dl-in');
  const dlq = K.topicName('kjs-dl-out');
  const replication = Math.min(3, K.brokers().split(',').length);
  await K.createTopic(topic, 3, replication);
  await K.createTopic(dlq, 3, replication);
  const total = 600;
  const offsets = new Float64Array(total).fill(-1);
  // KafkaJS reads no LZ4 (produceHot's default codec).
  const run = await produceHot(topic, total, { keys: 20, hotShare: 0, seed: 0x3d1, globalConfig: { 'compression.codec': 'none' }, onDelivery: (v, report) => { offsets[v.id] = report.offset; } });
  t.equal(run.deliveries, total);
  const poisoned = 200;

  const kafka = new Kafka({ clientId: 'kdp-kjs-dl', brokers: K.brokers().split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  t.teardown(() => admin.disconnect());
  const producer = kafka.producer();
  await producer.connect();
  const group = `kjs-dl-${topic}`;
  const c = wrapKafkaJsConsumer(kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 }), {
    admin, handlerRetries: 1, retryBackoffMs: 20, deadLetter: { topic: dlq, producer },
  });
  const errors = [];
  c.on('error', (err) => errors.push(err.message));
  const lettered = [];
  c.on('deadLettered', (payload, err) => lettered.push({ id: K.parseValue(payload.message.value).id, attempts: err.attempts }));
  await c.connect();
  await c.subscribe({ topic, fromBeginning: true });
  const handled = new Map();
  const order = [];
  await c.run({
    partitionsConsumedConcurrently: 4,
    eachMessage: async ({ message }) => {
      const v = K.parseValue(message.value);
      if (v.id === poisoned) throw Object.assign(new TypeError(`bad ${v.id}`), { code: 'E_BAD' });
      handled.set(v.id, (handled.get(v.id) ?? 0) + 1);
      order.push(v.id);
    },
  });
  const warnings = [];
  c.on('warning', (w) => warnings.push(w.message));
  const stopped = [];
  c.on('stopped', (e) => stopped.push(e && e.message));
  t.ok(await until(() => handled.size >= total - 1 && lettered.length === 1, 60000),
    `every other message handled, the poisoned one dead-lettered (${handled.size} handled, errors ${JSON.stringify(errors)}, warnings ${JSON.stringify(warnings.slice(0, 3))}, stopped ${JSON.stringify(stopped)})`);
  await c.disconnect();
  await producer.disconnect();
  t.same(lettered, [{ id: poisoned, attempts: 2 }], "one 'deadLettered', after one retry");
  const key = run.keyOf[poisoned];
  const later = order.filter((id) => id > poisoned && run.keyOf[id] === key);
  t.ok(later.length > 0, `its key's later messages handled (${later.length})`);
  t.same(later, [...later].sort((a, b) => a - b), "its key's later messages in order");

  const letters = [];
  await K.consumeAll(dlq, (m) => letters.push(m), 30000);
  t.equal(letters.length, 1, 'one dead letter');
  const [l] = letters;
  const h = {};
  for (const x of l.headers ?? []) for (const [name, value] of Object.entries(x)) h[name] = Buffer.from(value).toString();
  t.equal(K.parseValue(l.value)?.id, poisoned, 'its value');
  t.equal(l.key.toString(), run.keys[key], 'its key');
  t.same([h[DEAD_LETTER_HEADERS.topic], h[DEAD_LETTER_HEADERS.partition], h[DEAD_LETTER_HEADERS.offset], h[DEAD_LETTER_HEADERS.errorClass], h[DEAD_LETTER_HEADERS.errorCode], h[DEAD_LETTER_HEADERS.attempts]],
    [topic, String(run.partitionOf[poisoned]), String(offsets[poisoned]), 'TypeError', 'E_BAD', '2'], 'its origin (from the delivery report), the error, the attempts');
  const { committed, ends } = await offsetsOf(group, topic, 3);
  t.same(committed, ends, "the group's committed offsets at the log end");
  t.same(errors, [], 'no error');
});
