'use strict';
// The clients over SASL_SSL against the secure cluster of scripts/kafka.sh (start --secure):
// SCRAM-SHA-512 logins, TLS from the cluster's own CA, and the StandardAuthorizer's ACLs (user
// `app` may write and read topics allowed-* and use groups app-*, nothing else).
//   - DynamicProducer, DynamicConsumer and LagMonitor work as `app` (the producer also presents
//     the client certificate, whose key is encrypted: ssl.key.password);
//   - a wrong password fails connect() / start() with a KafkaError of librdkafka's
//     authentication code, not a timeout;
//   - every message to a topic `app` may not write is rejected with Kafka's topic authorization
//     code, none hangs, nothing stays in flight;
//   - a group `app` may not use is an 'error' event (DynamicConsumer) or a rejection (LagMonitor)
//     with Kafka's group authorization code;
//   - no password appears in anything the clients produced: error messages, stacks and causes,
//     metrics(), Prometheus text, 'stats' events, librdkafka's logs (debug on), the objects
//     inspected or serialised, and this process's stdout and stderr.
//
// Needs KAFKA_SECURE_BROKERS and KAFKA_SECURE_CONFIG (npm run test:kafka sets both).

const t = require('tap');
const util = require('node:util');
const { once } = require('node:events');
const Kafka = require('node-rdkafka');
const { DynamicProducer, DynamicConsumer, LagMonitor, KafkaError } = require('../..');
const S = require('./lib/secure');

const c = S.secureCluster();
const E = Kafka.CODES.ERRORS;
const WRONG = `wrong-${Math.random().toString(36).slice(2)}-password`;

// Everything the clients said, as text.
const captured = [];
const keep = (what, value) => {
  captured.push(`${what}: ${typeof value === 'string' ? value : util.inspect(value, { depth: Infinity, showHidden: true })}`);
  if (typeof value === 'object' && value !== null) {
    try {
      captured.push(`${what} (JSON): ${JSON.stringify(value)}`);
    } catch {
      // circular: util.inspect above has it
    }
  }
};
if (c) {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write;
    stream.write = function capture(chunk, ...rest) {
      captured.push(String(chunk));
      return write.call(this, chunk, ...rest);
    };
  }
}

/** Rejects with a clear error when `promise` has not settled within `ms` (a hang, not a slow machine). */
function within(promise, ms, what) {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  })]).finally(() => clearTimeout(timer));
}

/** Resolves when `check()` holds, polling; rejects after `ms`. */
async function until(check, ms, what) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

t.test('the clients over SASL_SSL with ACLs', { ...S.needsSecureCluster(), timeout: 300000 }, async (t) => {
  const topic = S.unique('allowed-kdp-');
  const denied = S.unique('denied-kdp-');
  const group = S.unique('app-kdp-');
  const PARTITIONS = 3;
  const N = 300;
  await S.createTopics(c, [topic, denied], PARTITIONS);
  const perPartition = new Array(PARTITIONS).fill(0);
  const sent = new Set();

  await t.test('DynamicProducer delivers every message (client certificate with an encrypted key)', async (t) => {
    const registry = new (require('prom-client').Registry)();
    const p = new DynamicProducer({
      ...S.clientConfig(c, 'app', { certificate: true }),
      'statistics.interval.ms': 500,
      debug: 'security,broker,conf',
    }, {}, { prometheus: registry });
    const logs = [];
    p.client.on('event.log', (entry) => logs.push(entry));
    p.on('error', (err) => keep('producer error event', err));
    const stats = [];
    p.on('stats', (s) => stats.push(s));
    await p.connect(30000, { topics: [topic] });
    const reports = await Promise.all(Array.from({ length: N }, (_, i) => {
      sent.add(`v${i}`);
      return p.send(topic, `v${i}`, `k${i % 30}`);
    }));
    for (const r of reports) perPartition[r.partition]++;
    t.equal(reports.length, N, 'every send() resolved');
    t.ok(reports.every((r) => r.offset >= 0 && r.partition >= 0 && r.partition < PARTITIONS), 'each with an offset on one of the topic\'s partitions');
    await until(() => stats.length > 0, 20000, "a 'stats' event");
    const m = p.metrics();
    t.equal(m.topics[topic].delivered, N, 'metrics() counts them delivered');
    t.equal(m.topics[topic].failed, 0, 'and none failed');
    keep('metrics', m);
    keep('prometheus', await registry.metrics());
    for (const s of stats) keep('stats', s);
    keep('producer', p);
    keep('producer.client', p.client);
    await p.disconnect(20000);
    for (const entry of logs) keep('librdkafka log', entry);
    t.ok(logs.some((entry) => /SASL|SCRAM/.test(entry.message)), 'librdkafka logged the login (debug on): its logs are among what is checked for secrets');
  });

  await t.test('LagMonitor reads the lag of a group with nothing committed: each partition\'s whole log', async (t) => {
    const m = new LagMonitor(S.clientConfig(c, 'app'), { groupId: S.unique('app-kdp-lag-'), topics: [topic], intervalMs: 60000 });
    m.on('error', (err) => keep('lag error event', err));
    t.teardown(() => m.stop());
    await m.start(30000);
    t.same(m.current()[topic], perPartition, 'lag = the messages the delivery reports put on each partition');
    keep('lag monitor', m);
    await m.stop();
  });

  await t.test('DynamicConsumer reads them all, and LagMonitor then sees no lag', async (t) => {
    const consumer = new DynamicConsumer({ ...S.clientConfig(c, 'app', { certificate: true }), 'group.id': group }, { 'auto.offset.reset': 'earliest' });
    consumer.on('error', (err) => keep('consumer error event', err));
    const seen = new Set();
    await consumer.connect(30000);
    const run = consumer.run([topic], (message) => {
      seen.add(message.value.toString());
    });
    await until(() => seen.size >= N, 120000, `${N} messages handled`);
    await consumer.stop(20000);
    await run;
    t.same([...seen].sort(), [...sent].sort(), 'every message sent, each once');
    keep('consumer', consumer);
    const m = new LagMonitor(S.clientConfig(c, 'app'), { groupId: group, topics: [topic], intervalMs: 60000 });
    t.teardown(() => m.stop());
    await m.start(30000);
    t.same(m.current()[topic], new Array(PARTITIONS).fill(0), 'the group committed everything it handled');
    await m.stop();
  });

  await t.test('every message to a topic the user may not write is rejected with a topic authorization error', async (t) => {
    const p = new DynamicProducer(S.clientConfig(c, 'app'));
    p.on('error', (err) => keep('denied producer error event', err));
    await p.connect(30000);
    const COUNT = 25;
    const results = await within(Promise.allSettled(Array.from({ length: COUNT }, (_, i) => p.send(denied, `d${i}`, `k${i}`))), 120000, 'send() to a denied topic');
    t.equal(results.filter((r) => r.status === 'rejected').length, COUNT, 'every send() rejected');
    for (const r of results) keep('denied send', r.reason ?? r.value);
    t.ok(results.every((r) => r.reason instanceof KafkaError && r.reason.code === 'KDP_KAFKA_ERROR'), 'each with a KafkaError');
    t.same([...new Set(results.map((r) => r.reason?.librdkafkaCode))], [E.ERR_TOPIC_AUTHORIZATION_FAILED],
      `each with Kafka's TOPIC_AUTHORIZATION_FAILED (${E.ERR_TOPIC_AUTHORIZATION_FAILED})`);
    const m = p.metrics();
    t.equal(m.topics[denied].failed, COUNT, 'metrics() counts them failed');
    t.equal(m.inflight, 0, 'nothing left in flight (no retry goes on)');
    t.equal(m.held, 0, 'nothing held');
    keep('denied metrics', m);
    await p.disconnect(20000);
  });

  await t.test('a group the user may not use: an error event from DynamicConsumer, a rejection from LagMonitor', async (t) => {
    const other = S.unique('other-kdp-');
    const consumer = new DynamicConsumer({ ...S.clientConfig(c, 'app'), 'group.id': other }, { 'auto.offset.reset': 'earliest' });
    let handled = 0;
    await consumer.connect(30000);
    const failed = within(once(consumer, 'error'), 60000, "DynamicConsumer 'error'");
    const run = consumer.run([topic], () => {
      handled++;
    });
    const [err] = await failed;
    keep('denied group error event', err);
    t.ok(err instanceof KafkaError && err.code === 'KDP_KAFKA_ERROR', "the 'error' event is a KafkaError");
    t.equal(err.librdkafkaCode, E.ERR_GROUP_AUTHORIZATION_FAILED, `with Kafka's GROUP_AUTHORIZATION_FAILED (${E.ERR_GROUP_AUTHORIZATION_FAILED}): ${err.message}`);
    consumer.on('error', (e) => keep('denied group error event', e));
    await consumer.stop(20000);
    await run;
    t.equal(handled, 0, 'no message was handed out');
    const m = new LagMonitor(S.clientConfig(c, 'app'), { groupId: other, topics: [topic] });
    const rejected = await within(m.start(30000), 60000, 'LagMonitor start()').then(() => null, (e) => e);
    keep('denied group lag rejection', rejected);
    t.ok(rejected instanceof KafkaError, 'LagMonitor.start() rejects with a KafkaError');
    t.equal(rejected?.librdkafkaCode, E.ERR_GROUP_AUTHORIZATION_FAILED, `with GROUP_AUTHORIZATION_FAILED, not a timeout: ${rejected?.message}`);
    await m.stop();
  });

  await t.test('a wrong password fails connect() with an authentication KafkaError, not a timeout', async (t) => {
    const wrong = S.clientConfig(c, 'app', { password: WRONG });
    const check = (err, what) => {
      keep(`${what} rejection`, err);
      t.ok(err instanceof KafkaError, `${what}: a KafkaError`);
      t.equal(err.code, 'KDP_KAFKA_ERROR', `${what}: code KDP_KAFKA_ERROR`);
      t.equal(err.librdkafkaCode, E.ERR__AUTHENTICATION, `${what}: librdkafka's authentication failure (${E.ERR__AUTHENTICATION}), got ${err.librdkafkaCode}: ${err.message}`);
    };
    const p = new DynamicProducer(wrong);
    p.on('error', (err) => keep('wrong-password producer error event', err));
    // The tap timeout bounds the wait; the code says it was not the connect timeout that ended it.
    check(await within(p.connect(60000), 90000, 'producer connect()').then(() => null, (err) => err), 'DynamicProducer.connect');
    await p.disconnect(5000);
    const consumer = new DynamicConsumer({ ...wrong, 'group.id': S.unique('app-kdp-') });
    consumer.on('error', (err) => keep('wrong-password consumer error event', err));
    check(await within(consumer.connect(60000), 90000, 'consumer connect()').then(() => null, (err) => err), 'DynamicConsumer.connect');
    const m = new LagMonitor(wrong, { groupId: S.unique('app-kdp-'), topics: [topic] });
    check(await within(m.start(60000), 90000, 'LagMonitor start()').then(() => null, (err) => err), 'LagMonitor.start');
    keep('wrong-password producer', p);
  });

  await t.test('no secret in anything the clients produced', async (t) => {
    const text = captured.join('\n');
    t.ok(captured.length > 50 && text.includes('authentication failed') && text.includes('"delivered"'),
      `the capture holds errors, metrics and logs (${captured.length} entries, ${text.length} characters)`);
    const secrets = {
      "app's sasl.password": c.users.app.password,
      'the wrong sasl.password': WRONG,
      'ssl.key.password': c.keyPassword,
      "admin's sasl.password": c.users.admin.password,
    };
    for (const [name, secret] of Object.entries(secrets)) {
      t.ok(secret.length >= 16, `${name} is a real secret (${secret.length} characters)`);
      t.notOk(text.includes(secret), `${name} appears nowhere`);
    }
  });
});
