'use strict';
// wrapProducer() on a node-rdkafka HighLevelProducer, whose produce() takes a callback and
// runs key and value serializers: the wrapper applies the serializers itself (so a cold key
// lands on Kafka's partition of the *serialized* key) and gets its delivery reports as for a
// plain Producer. Asynchronous serializers are refused with a StateError, before anything is
// queued. The expected partitions come from partitionForKey, the messages read back from the
// mock cluster.
const t = require('tap');
const Kafka = require('node-rdkafka');
const { wrapProducer, partitionForKey, StateError } = require('../..');
const { disconnect } = require('../lib/mock-cluster');
const { knownPartitions, brokersOf, consumeAll } = require('./lib/helpers');

const N = 4;

function highLevel(topicConfig = { partitioner: 'murmur2_random' }) {
  const p = new Kafka.HighLevelProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, topicConfig);
  return new Promise((resolve, reject) => {
    p.once('ready', () => resolve(p));
    p.once('connection.failure', reject);
    p.connect({ timeout: 10000 });
  });
}

t.test('HighLevelProducer: send() resolves, serializers applied, cold keys on the serialized key\'s partition', async (t) => {
  const app = await highLevel();
  t.teardown(() => disconnect(app));
  app.setKeySerializer((k) => `tenant/${k}`);
  app.setValueSerializer((v) => Buffer.from(JSON.stringify(v)));
  const w = wrapProducer(app);
  const topic = 'hl-serialized';
  await knownPartitions(w, topic);
  const sent = [];
  // 400 keys, one message each: all cold.
  for (let i = 0; i < 400; i++) sent.push(w.send(topic, { n: i }, `k${i}`));
  const reports = await Promise.all(sent);
  t.equal(reports.length, 400, 'every send() resolved with its delivery report');
  const wrong = reports.filter((r) => r.partition !== partitionForKey(String(r.key), N));
  t.same(wrong.map((r) => `${r.key}@${r.partition}`), [], 'each on partitionForKey(serialized key)');
  t.ok(reports.every((r) => String(r.key).startsWith('tenant/')), 'the reported key is the serialized one');
  const read = await consumeAll(await brokersOf(app), topic, 400);
  t.equal(read.messages.length, 400, 'all 400 messages are in the topic');
  const k7 = read.messages.find((m) => m.key.toString() === 'tenant/k7');
  t.same(JSON.parse(k7.value.toString()), { n: 7 }, 'the value went through the value serializer');
  t.equal(k7.partition, partitionForKey('tenant/k7', N), 'read back from its partition');
  await w.disconnect();
  t.ok(app.isConnected(), 'the application\'s producer stays connected');
});

t.test('HighLevelProducer: its own produce() keeps working beside the wrapper', async (t) => {
  const app = await highLevel();
  t.teardown(() => disconnect(app));
  const w = wrapProducer(app);
  const topic = 'hl-beside';
  await knownPartitions(w, topic);
  const own = new Promise((resolve, reject) => app.produce(topic, null, Buffer.from('mine'), 'app-key', null, (err, offset) => (err ? reject(err) : resolve(offset))));
  const ours = w.send(topic, 'wrapped', 'w-key');
  const [offset, report] = await Promise.all([own, ours]);
  t.ok(typeof offset === 'number' && offset >= 0, `the application's callback got offset ${offset}`);
  t.equal(report.partition, partitionForKey('w-key', N), 'the wrapper\'s message on its partition');
  await w.disconnect();
});

t.test('HighLevelProducer: an asynchronous serializer is refused before anything is queued', async (t) => {
  const app = await highLevel();
  t.teardown(() => disconnect(app));
  const w = wrapProducer(app);
  const topic = 'hl-async';
  await knownPartitions(w, topic);
  app.setKeySerializer((k, cb) => setImmediate(() => cb(null, k)));
  await t.rejects(w.send(topic, 'v', 'k'), StateError, 'send() rejects with a StateError');
  t.throws(() => w.produce(topic, 'v', 'k'), StateError, 'produce() throws one');
  app.setKeySerializer((k) => Promise.resolve(k));
  t.throws(() => w.produce(topic, 'v', 'k'), /returned a Promise/, 'a Promise-returning one too');
  t.equal(w.metrics().topics[topic].produced, 0, 'nothing was produced');
  await w.disconnect();
});
