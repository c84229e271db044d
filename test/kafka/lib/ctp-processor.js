'use strict';
// One processor process of the consume-transform-produce broker test (test/kafka/transactions.test.js),
// forked: a DynamicConsumer (native engine, `concurrency`, a handler that awaits 1-3 ms) of `group` reading
// `input`, each message written transformed to `output` through a transactional DynamicProducer (its
// `transactionalId`) that spreads the hot key again, in the consumer's transactions (its `transaction`
// option; without a transactionalId, at least once: the same pipeline without transactions). The transformed value: the input's 16 bytes, then its id XOR 0xffffffff (4 bytes).
// Protocol over the IPC channel:
//   parent → { type: 'start', bootstrap, group, input, output, transactionalId, concurrency, groupProtocol }
//   worker → { type: 'ready' }                          (running)
//   worker → { type: 'progress', handled, metrics }     every 250 ms (metrics.flagged: calls on a message flagged out of order)
//   parent → { type: 'stop' } → worker → { type: 'done', handled, metrics } after a clean stop
// A SIGKILL may come at any time (mid-transaction).
//
// Run directly (tap does when named), this file has no tests: it waits for a parent.

const { DynamicProducer, DynamicConsumer } = require('../../..');
const { serveWorker } = require('./worker');

async function run(o) {
  const producer = new DynamicProducer({
    'bootstrap.servers': o.bootstrap,
    ...(o.transactionalId ? { 'transactional.id': o.transactionalId } : { 'enable.idempotence': true }),
    'linger.ms': 5,
    'log_level': 2,
  }, { acks: 'all' }, { metadataRefreshMs: 5000, horizon: { messages: 1000 } });
  producer.on('error', () => {});
  await producer.connect(30000, { topics: [o.output] });
  const consumer = new DynamicConsumer({
    'bootstrap.servers': o.bootstrap,
    'group.id': o.group,
    'auto.offset.reset': 'earliest',
    'fetch.wait.max.ms': 50,
    // KIP-848's session timeout is the brokers' (scripts/kafka.sh): librdkafka refuses one set here.
    ...(o.groupProtocol === 'consumer' ? { 'group.protocol': 'consumer' } : { 'session.timeout.ms': 6000 }),
    'log_level': 2,
  }, {}, { concurrency: o.concurrency, resequencer: { maxWaitMs: 10000 }, ...(o.transactionalId ? { transaction: { producer } } : {}) });
  const warnings = [];
  consumer.on('warning', (e) => warnings.length < 20 && warnings.push(String(e.message)));
  consumer.on('error', (e) => warnings.length < 20 && warnings.push(`error: ${e.message}`));
  await consumer.connect();
  let handled = 0;
  let flagged = 0;
  /** The inputs this process handled, by partition and offset: one handled again followed an aborted transaction's rewind. */
  const seen = new Set();
  const done = consumer.run([o.input], async (m, info) => {
    if (info.outOfOrder) flagged++;
    const where = `${m.partition}@${m.offset}`;
    const again = seen.has(where);
    seen.add(where);
    await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 2));
    const value = Buffer.allocUnsafe(21);
    m.value.copy(value, 0, 0, 16);
    value.writeUInt32BE((m.value.readUInt32BE(0) ^ 0xffffffff) >>> 0, 16);
    value[20] = (info.outOfOrder ? 1 : 0) | (again ? 2 : 0);
    await producer.send(o.output, value, m.key);
    handled++;
  });
  process.send({ type: 'ready' });
  const metrics = () => ({ consumer: consumer.metrics(), warnings, flagged });
  const timer = setInterval(() => process.send({ type: 'progress', handled, metrics: metrics() }), 250);
  const stopped = new Promise((resolve) => process.on('message', (m) => m.type === 'stop' && resolve()));
  await Promise.race([stopped, done]);
  clearInterval(timer);
  await consumer.stop();
  await done;
  await producer.disconnect();
  process.send({ type: 'done', handled, metrics: metrics() });
}

serveWorker(module, run, (stack) => ({ type: 'failed', stack }));
