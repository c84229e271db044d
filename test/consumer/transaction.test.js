'use strict';
// DynamicConsumer's `transaction` option on librdkafka's mock cluster (on the engine KDP_ENGINE picks):
// consume-transform-produce whose offsets commit in the producer's transactions, a handler failure that aborts a transaction and reads every partition again from
// its committed offset (what was handled since is handled again), and bad options refused at construction
// or at run(). The mock cluster writes no transaction markers and keeps no offsets sent to a transaction (a
// rewind there goes back to the first offset read): what read_committed readers see, the group's committed
// offsets and fencing are tested on a real cluster (test/kafka/transactions.test.js).
const t = require('tap');
const { DynamicProducer, DynamicConsumer, InvalidOptionError } = require('../..');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function mockCluster(t) {
  const seed = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 2 }, {}, {});
  t.teardown(() => seed.disconnect().catch(() => undefined));
  await seed.connect();
  const brokers = await new Promise((resolve, reject) => seed.client.getMetadata({ timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m.brokers.map((b) => `${b.host}:${b.port}`).join(',')))));
  return { seed, brokers };
}

async function fill(seed, topic, count) {
  const sent = [];
  for (let i = 0; i < count; i++) sent.push(seed.send(topic, Buffer.from(String(i)), `k${i % 13}`));
  await Promise.all(sent);
}

function transactional(brokers, id) {
  return new DynamicProducer({ 'bootstrap.servers': brokers, 'transactional.id': id, log_level: 2 }, {}, {});
}

t.test('options: the producer must be a transactional DynamicProducer of this consumer\'s engine, taken by one consumer at a time', async (t) => {
  const { seed, brokers } = await mockCluster(t);
  const config = { 'bootstrap.servers': brokers, 'group.id': 'g-options', log_level: 2 };
  t.throws(() => new DynamicConsumer(config, {}, { transaction: { producer: {} } }), InvalidOptionError, 'not a DynamicProducer');
  t.throws(() => new DynamicConsumer(config, {}, { transaction: {} }), InvalidOptionError, 'no producer');
  const plain = new DynamicProducer({ 'bootstrap.servers': brokers, log_level: 2 }, {}, {});
  t.teardown(() => plain.disconnect().catch(() => undefined));
  t.throws(() => new DynamicConsumer(config, {}, { transaction: { producer: plain } }), { code: 'KDP_INVALID_OPTION', message: /transactional\.id/ }, 'without transactional.id');
  const p = transactional(brokers, 'options');
  t.teardown(() => p.disconnect().catch(() => undefined));
  t.throws(() => new DynamicConsumer(config, {}, { transaction: { producer: p, intervalMs: 0 } }), InvalidOptionError, 'intervalMs 0');
  const other = p.engine === 'native' ? 'client' : 'native';
  t.throws(() => new DynamicConsumer(config, {}, { engine: other, transaction: { producer: p } }), { code: 'KDP_INVALID_OPTION', message: /same engine/ }, 'another engine');
  await p.connect();
  await fill(seed, 'opts', 1);
  const first = new DynamicConsumer(config, {}, { transaction: { producer: p } });
  const second = new DynamicConsumer({ ...config, 'group.id': 'g-options-2' }, {}, { transaction: { producer: p } });
  for (const c of [first, second]) c.on('error', () => {});
  await first.connect();
  await second.connect();
  const run = first.run(['opts'], () => {});
  await sleep(200);
  await t.rejects(second.run(['opts'], () => {}), { code: 'KDP_STATE', message: /another consumer/ }, 'a producer shared by two consumers');
  await first.stop();
  await run;
  const again = second.run(['opts'], () => {});
  await sleep(200);
  await second.stop();
  await again;
  t.pass('once the first stopped, the second may take the producer');
});

t.test('consume-transform-produce: the offsets commit in the transactions, every input handled once', async (t) => {
  const { seed, brokers } = await mockCluster(t);
  const N = 2000;
  await fill(seed, 'ctp-in', N);
  const p = transactional(brokers, 'ctp');
  t.teardown(() => p.disconnect().catch(() => undefined));
  await p.connect();
  const c = new DynamicConsumer({ 'bootstrap.servers': brokers, 'group.id': 'g-ctp', 'auto.offset.reset': 'earliest', log_level: 2 }, {}, {
    concurrency: 8, transaction: { producer: p, intervalMs: 50 },
  });
  const seen = new Uint8Array(N);
  let committedEvents = 0;
  c.on('committed', () => committedEvents++);
  const handlerErrors = [];
  c.on('handlerError', (e) => handlerErrors.push(e));
  await c.connect();
  const run = c.run(['ctp-in'], async (m) => {
    seen[Number(m.value.toString())]++;
    p.produce('ctp-out', Buffer.from(`t${m.value}`), m.key);
  });
  const deadline = Date.now() + 30_000;
  while (seen.some((n) => n === 0) && Date.now() < deadline) await sleep(20);
  await c.stop();
  await run;
  t.equal(seen.filter((n) => n === 1).length, N, 'every input handled once');
  const { transactions } = c.metrics();
  t.same(handlerErrors.map(String), [], 'no handler call failed (a message produced while a transaction commits waits for the next)');
  t.ok(transactions.committed >= 1, `transactions committed (${transactions.committed})`);
  t.equal(transactions.aborted, 0, 'none aborted');
  t.equal(committedEvents, transactions.committed, "a 'committed' event per transaction committed: the consumer commits nothing outside them")
  t.throws(() => p.produce('ctp-out', Buffer.from('x'), 'k'), { code: 'KDP_STATE' }, 'after the run the producer is outside a transaction (the last one committed, none begun)');
});

t.test('a handler call that failed aborts its transaction: every partition is read again from its committed offset', async (t) => {
  const { seed, brokers } = await mockCluster(t);
  const N = 600;
  await fill(seed, 'abort-in', N);
  const p = transactional(brokers, 'abort');
  t.teardown(() => p.disconnect().catch(() => undefined));
  await p.connect();
  const c = new DynamicConsumer({ 'bootstrap.servers': brokers, 'group.id': 'g-abort', 'auto.offset.reset': 'earliest', log_level: 2 }, {}, {
    concurrency: 4, handlerRetries: 2, retryBackoffMs: 0, transaction: { producer: p, intervalMs: 50 },
  });
  const handled = new Uint8Array(N);
  let failed = false;
  const errors = [];
  c.on('handlerError', (e) => errors.push(e));
  await c.connect();
  const run = c.run(['abort-in'], async (m) => {
    const i = Number(m.value.toString());
    p.produce('abort-out', Buffer.from(`t${i}`), m.key);
    if (i === 400 && !failed) {
      failed = true;
      throw new Error('once');
    }
    handled[i]++;
  });
  // Until the abort, then until what it read again is handled (the sum stands still for a while).
  const deadline = Date.now() + 30_000;
  const sum = () => handled.reduce((a, n) => a + n, 0);
  while ((handled.some((n) => n === 0) || c.metrics().transactions.aborted === 0) && Date.now() < deadline) await sleep(20);
  for (let last = -1; sum() !== last && Date.now() < deadline; await sleep(500)) last = sum();
  await c.stop();
  await run;
  t.equal(errors.length, 1, 'the handler failed once');
  t.ok(handled.every((n) => n >= 1), 'every input handled');
  const { transactions } = c.metrics();
  t.equal(transactions.abortedForHandlers, 1, 'the transaction of the failed call aborted');
  t.ok(handled.filter((n) => n === 2).length > 0, 'what was handled in it was handled again (read again from the committed offset)');
  t.ok(handled.every((n) => n <= 2), 'nothing more than once again');
  t.ok(transactions.committed >= 1, 'later transactions committed');
});
