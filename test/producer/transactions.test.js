'use strict';
// DynamicProducer's transactions on librdkafka's mock cluster (on the engine KDP_ENGINE picks): node-rdkafka's
// calls under its names; messages taken only inside a transaction; a commit delivers them, an abort fails them
// (their send() promises reject: nothing silently lost); calls out of place, or on a producer without
// transactional.id, refused with a StateError naming the fix; bad offsets refused at the edge. The mock
// cluster fences no producer and writes no transaction markers: fencing and what read_committed readers see
// are tested on a real cluster (test/kafka/transactions.test.js).
const t = require('tap');
const { DynamicProducer, StateError, KafkaError } = require('../..');

const TOPIC = 'txn';

async function producer(t, config = {}) {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, 'transactional.id': `txn-${Math.random()}`, log_level: 2, ...config }, {}, {});
  t.teardown(() => p.disconnect().catch(() => undefined));
  await p.connect();
  return p;
}

t.test('a producer without transactional.id: every transactional call is refused, naming the setting', async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 2 }, {}, {});
  t.teardown(() => p.disconnect().catch(() => undefined));
  await p.connect();
  for (const call of [() => p.initTransactions(), () => p.beginTransaction(), () => p.commitTransaction(), () => p.abortTransaction(), () => p.sendOffsetsToTransaction([], {})]) {
    await t.rejects(call(), { code: 'KDP_STATE', message: /transactional\.id/ });
  }
  await p.send(TOPIC, Buffer.from('x'), 'k');
  t.pass('it produces as before');
});

t.test('calls out of place: before connect, before initTransactions, twice, commit before begin, one at a time', async (t) => {
  const idle = new DynamicProducer({ 'test.mock.num.brokers': 1, 'transactional.id': 'never', log_level: 2 }, {}, {});
  await t.rejects(idle.initTransactions(), StateError, 'before connect()');
  await idle.disconnect();
  const p = await producer(t);
  t.throws(() => p.produce(TOPIC, Buffer.from('x'), 'k'), { code: 'KDP_STATE', message: /initTransactions\(\) and beginTransaction\(\)/ }, 'produce() before initTransactions()');
  await t.rejects(p.send(TOPIC, Buffer.from('x'), 'k'), { code: 'KDP_STATE' }, 'send() too');
  await t.rejects(p.beginTransaction(), { code: 'KDP_STATE', message: /before initTransactions/ });
  await t.rejects(p.initTransactions(-1), { code: 'KDP_OUT_OF_RANGE' }, 'a negative timeout');
  await p.initTransactions(10_000);
  await t.rejects(p.initTransactions(), { code: 'KDP_STATE', message: /called already/ });
  await t.rejects(p.commitTransaction(), { code: 'KDP_STATE', message: /no transaction is open/ });
  await t.rejects(p.abortTransaction(), { code: 'KDP_STATE', message: /no transaction is open/ });
  t.throws(() => p.produce(TOPIC, Buffer.from('x'), 'k'), { code: 'KDP_STATE', message: /beginTransaction\(\)/ }, 'produce() outside a transaction');
  await p.beginTransaction();
  await t.rejects(p.beginTransaction(), { code: 'KDP_STATE', message: /while a transaction is open/ });
  const committing = p.commitTransaction(10_000);
  await t.rejects(p.abortTransaction(), { code: 'KDP_STATE', message: /commitTransaction\(\) is under way/ }, 'one call at a time');
  t.throws(() => p.produce(TOPIC, Buffer.from('x'), 'k'), { code: 'KDP_STATE', message: /being committed/ }, 'produce() while a commit is under way');
  await committing;
});

t.test('a commit delivers what the transaction holds; an abort fails it (send() rejects), nothing is left unsettled', async (t) => {
  const p = await producer(t);
  await p.initTransactions(10_000);
  await p.beginTransaction();
  const sent = [];
  for (let i = 0; i < 200; i++) sent.push(p.send(TOPIC, Buffer.from(`c${i}`), `k${i % 7}`));
  const produced = [];
  p.on('delivery', (err, report) => produced.push(err ? 'failed' : report.partition));
  for (let i = 0; i < 50; i++) t.equal(typeof p.produce(TOPIC, Buffer.from(`p${i}`), `k${i}`), 'boolean');
  await p.commitTransaction(10_000);
  const reports = await Promise.all(sent);
  t.equal(reports.length, 200, 'every send() resolved');
  t.ok(reports.every((r) => r.topic === TOPIC && r.offset >= 0), 'each with its offset');
  await p.beginTransaction();
  const aborted = [];
  for (let i = 0; i < 100; i++) aborted.push(p.send(TOPIC, Buffer.from(`a${i}`), `k${i % 7}`).then(() => 'delivered', (err) => err));
  await p.abortTransaction(10_000);
  const outcomes = await Promise.all(aborted);
  const failed = outcomes.filter((o) => o instanceof KafkaError);
  // Messages librdkafka sent before the abort are delivered (the abort marker hides them from read_committed readers); the rest are purged.
  t.equal(failed.length + outcomes.filter((o) => o === 'delivered').length, 100, 'each send() settled: delivered before the abort, or rejected');
  t.ok(failed.every((e) => e.librdkafkaCode === -152), 'the rejected ones were purged by the abort (ERR__PURGE_QUEUE)');
  t.throws(() => p.produce(TOPIC, Buffer.from('x'), 'k'), { code: 'KDP_STATE' }, 'nothing is taken after the abort until the next begin');
  await p.beginTransaction();
  await p.send(TOPIC, Buffer.from('after'), 'k');
  await p.commitTransaction(10_000);
  t.pass('a transaction after an abort commits');
  await p.beginTransaction();
  await p.disconnect();
  await t.rejects(p.commitTransaction(), { code: 'KDP_STATE', message: /after disconnect/ }, 'a call on a disconnected producer');
});

t.test("a consumer's hold: messages produced while a transaction commits wait for the next, then go in it", async (t) => {
  const p = await producer(t);
  await p.initTransactions(10_000);
  await p.beginTransaction();
  const first = p.send(TOPIC, Buffer.from('before'), 'k');
  p.transactionsOf.holdNew();
  const during = [];
  t.equal(p.produce(TOPIC, Buffer.from('during-1'), 'k'), false, 'produce() during the hold: held (false), a drain follows');
  during.push(p.send(TOPIC, Buffer.from('during-2'), 'k'));
  const drained = new Promise((resolve) => p.once('drain', resolve));
  await p.commitTransaction(10_000);
  t.ok((await first).offset >= 0, 'what was taken before the hold is in the committed transaction');
  await p.beginTransaction();
  p.transactionsOf.releaseHeld();
  await drained;
  t.pass("'drain' once the held messages went");
  await p.commitTransaction(10_000);
  const [report] = await Promise.all(during);
  t.ok(report.offset > 0, 'the held send() went in the next transaction and was delivered');
});

t.test('sendOffsetsToTransaction: offsets checked at the edge; a node-rdkafka-style consumer of a group', async (t) => {
  const p = await producer(t);
  await p.initTransactions(10_000);
  await p.beginTransaction();
  const consumer = { globalConfig: { 'group.id': 'g-txn' }, getClient() { return {}; }, groupHandle: undefined };
  await t.rejects(p.sendOffsetsToTransaction('0', consumer), { code: 'KDP_INVALID_ARG_TYPE', argument: 'offsets' });
  await t.rejects(p.sendOffsetsToTransaction(undefined, consumer), { code: 'KDP_INVALID_ARG_TYPE', message: /only with a DynamicConsumer/ });
  await t.rejects(p.sendOffsetsToTransaction([{ topic: TOPIC, partition: 0, offset: -1 }], consumer), { code: 'KDP_INVALID_ARG_TYPE', argument: 'offsets[0]' });
  await t.rejects(p.sendOffsetsToTransaction([{ topic: TOPIC, partition: 0, offset: 1, metadata: 7 }], consumer), { code: 'KDP_INVALID_ARG_TYPE', argument: 'offsets[0].metadata' });
  await t.rejects(p.sendOffsetsToTransaction([], null), { code: 'KDP_INVALID_ARG_TYPE', argument: 'consumer' });
  await p.abortTransaction(10_000);
});
