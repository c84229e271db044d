'use strict';
// disconnect() flushes: everything produced before it (held here or queued in librdkafka)
// is delivered before it resolves. The cluster is held by a separate plain node-rdkafka
// producer (a mock cluster lives as long as the client that created it), so that the topic
// can be read back after the DynamicProducer is gone. Using the producer before connect() or
// after disconnect() is a StateError; a disconnect that cannot confirm everything rejects
// with an UndeliveredError counting what is unconfirmed.
const t = require('tap');
const { DynamicProducer, StateError, UndeliveredError } = require('../..');
const { mockProducer, disconnect } = require('../lib/mock-cluster');
const { zipf, brokersOf, consumeAll } = require('./lib/helpers');

async function cluster(t) {
  const holder = await mockProducer({ log_level: 3 });
  t.teardown(() => disconnect(holder));
  return brokersOf(holder);
}

t.test('disconnect() right after producing delivers everything before it resolves', async (t) => {
  const brokers = await cluster(t);
  const topic = 'dc-flush';
  // A small librdkafka queue: most of the messages are still held here when disconnect() starts.
  const p = new DynamicProducer({ 'metadata.broker.list': brokers, 'queue.buffering.max.messages': 1000, log_level: 3 });
  // The topic's count read up front: its first messages do not wait for it (they would be held too).
  await p.connect(30000, { topics: [topic] });
  const next = zipf(300, 1.0, 41);
  const keys = Array.from({ length: 22_000 }, () => `d-${next()}`);
  let delivered = 0;
  let failed = 0;
  p.on('delivery', (err) => (err ? failed++ : delivered++));
  let resolved = 0;
  let rejected = 0;
  let held = 0;
  for (let i = 0; i < 20_000; i++) if (!p.produce(topic, String(i), keys[i])) held++;
  for (let i = 20_000; i < keys.length; i++) p.send(topic, String(i), keys[i]).then(() => resolved++, () => rejected++);
  t.ok(held > 0, `${held} messages held when disconnect() is called`);
  await p.disconnect();
  const atDisconnect = { delivered, failed, resolved, rejected };
  t.same(atDisconnect, { delivered: keys.length, failed: 0, resolved: 2000, rejected: 0 },
    'when disconnect() resolves, every message has its delivery report and every send() resolved');
  const read = await consumeAll(brokers, topic, keys.length);
  t.equal(read.total, keys.length, 'the log holds every message once');
  t.equal(new Set(read.messages.map((m) => m.value.toString())).size, keys.length, 'no message read twice');
});

t.test('produce() / send() before connect() and after disconnect() are StateErrors', async (t) => {
  const brokers = await cluster(t);
  const p = new DynamicProducer({ 'metadata.broker.list': brokers, log_level: 3 });
  let reports = 0;
  p.on('delivery', () => reports++);
  t.throws(() => p.produce('dc-state', 'v', 'k'), { name: 'StateError', code: 'KDP_STATE' }, 'produce() before connect() throws StateError');
  await t.rejects(p.send('dc-state', 'v', 'k'), { name: 'StateError', code: 'KDP_STATE' }, 'send() before connect() rejects with StateError');
  t.same(p.metrics().topics, {}, 'nothing was counted');
  await p.connect();
  await p.send('dc-state', 'v', 'k');
  await p.disconnect();
  t.equal(reports, 1, 'one delivery report: the message sent while connected');
  const e = (() => { try { p.produce('dc-state', 'v', 'k'); } catch (err) { return err; } return null; })();
  t.ok(e instanceof StateError, 'produce() after disconnect() throws a StateError');
  t.equal(e && e.code, 'KDP_STATE', 'with code KDP_STATE');
  await t.rejects(p.send('dc-state', 'v', 'k'), StateError, 'send() after disconnect() rejects with StateError');
  await t.rejects(p.connect(), StateError, 'connect() after disconnect() rejects with StateError');
  await t.resolves(p.disconnect(), 'a second disconnect() resolves');
  t.equal(p.metrics().topics['dc-state'].produced, 1, 'the refused calls counted nothing');
  const read = await consumeAll(brokers, 'dc-state', 1);
  t.equal(read.total, 1, 'the log holds only the one message');
});

// An application may still be producing when it calls disconnect() (a server draining its
// last requests). disconnect() must still complete (here within its 3 s timeout: the cluster
// confirms a message in milliseconds), produce() must start refusing, and every message it
// accepted must be delivered.
t.test('produce() racing disconnect(): disconnect completes, and every accepted message is delivered', async (t) => {
  const brokers = await cluster(t);
  const topic = 'dc-race';
  const p = new DynamicProducer({ 'metadata.broker.list': brokers, log_level: 3 });
  await p.connect();
  for (let i = 0; i < 1000; i++) p.produce(topic, `before-${i}`, `k${i % 10}`);
  const started = Date.now();
  const closing = p.disconnect(3000).then(() => null, (e) => e);
  let accepted = 0;
  let refused = null;
  // Keep producing, once per turn of the event loop, until the producer refuses (at most 15 s).
  while (refused === null && Date.now() - started < 15000) {
    try {
      if (p.produce(topic, `during-${accepted}`, 'late')) accepted++;
    } catch (err) {
      refused = err;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const closeError = await closing;
  t.equal(closeError, null, `disconnect() resolves (${closeError ? `rejected after ${Date.now() - started} ms: ${closeError.message}` : 'ok'})`);
  t.ok(refused instanceof StateError, `produce() then refuses with a StateError (after accepting ${accepted} during disconnect(); got ${refused && refused.name}: ${refused && refused.message})`);
  const read = await consumeAll(brokers, topic, 0, 10000);
  t.equal(read.total, 1000 + accepted, `every one of the ${accepted} messages produce() accepted during disconnect() is in the log`);
});

t.test('a disconnect() that cannot confirm everything rejects with an UndeliveredError counting it', async (t) => {
  // Brokers 800 ms away: nothing produced can be confirmed within disconnect(300).
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, 'test.mock.broker.rtt': 800, log_level: 3 });
  await p.connect();
  const sends = [];
  for (let i = 0; i < 50; i++) sends.push(p.send('dc-slow', String(i), `k${i}`).then(() => null, (e) => e));
  for (let i = 0; i < 50; i++) p.produce('dc-slow', String(i), `k${i}`);
  const error = await p.disconnect(300).then(() => null, (e) => e);
  const outcomes = await Promise.all(sends);
  t.ok(outcomes.every((e) => e instanceof UndeliveredError), 'every unconfirmed send() rejects with UndeliveredError');
  t.ok(error instanceof UndeliveredError, `disconnect() rejects with UndeliveredError (got ${error && error.name}: ${error && error.message})`);
  t.equal(error && error.code, 'KDP_UNDELIVERED', 'code KDP_UNDELIVERED');
  t.equal(error && error.undelivered, 100, 'counting the 100 unconfirmed messages');
});
