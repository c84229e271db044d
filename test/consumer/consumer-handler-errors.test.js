'use strict';
// DynamicConsumer on librdkafka's mock cluster: a failing handler is retried in place, and
// when it keeps failing the consumer stops at that message (committing only below it) and
// run() rejects with a HandlerError; state errors leave the consumer usable.
const t = require('tap');
const { DynamicConsumer, HandlerError } = require('../..');
const { mockProducer, partitionCount, collectReports, bootstrapOf, disconnect, committedOffsets } = require('../lib/mock-cluster');

let producer;
let brokers;

t.before(async () => {
  producer = await mockProducer();
  brokers = await bootstrapOf(producer);
});
t.teardown(() => disconnect(producer));

/** Produces `values` (strings) to `topic`, value i to partition partitionOf(i); resolves with the delivery reports in produce order. */
async function produce(topic, values, partitionOf = () => 0) {
  await partitionCount(producer, topic);
  const reports = collectReports(producer, values.length);
  values.forEach((v, i) => producer.produce(topic, partitionOf(i), Buffer.from(v), 'k', null, i));
  const got = await reports;
  for (const r of got) if (r.error) throw r.error;
  // The opaque is the produce index: reports may come back in any order across partitions.
  return got.sort((a, b) => a.opaque - b.opaque);
}

function consumer(group, options = {}) {
  return new DynamicConsumer(
    // The mock cluster keeps a member that disconnected until its session times out (plain
    // node-rdkafka consumers too), so the next member of its group waits that long to join.
    { 'metadata.broker.list': brokers, 'group.id': group, 'auto.offset.reset': 'earliest', 'session.timeout.ms': 6000, log_level: 3 },
    {},
    { commitIntervalMs: 50, retryBackoffMs: 10, ...options },
  );
}

/** The offsets `group` has committed for `partitions` of `topic`, read by a client outside the group. */
const committed = (group, topic, partitions) => committedOffsets(brokers, group, topic, partitions);

t.test('a handler that keeps failing: retried in place, then run() rejects and the commit stays at the failed message', async (t) => {
  const topic = 'handler-keeps-failing';
  const values = Array.from({ length: 10 }, (_, i) => `v${i}`);
  const reports = await produce(topic, values);
  const failedOffset = reports[6].offset; // from the broker's delivery report, not from the consumer
  const c = consumer('keeps-failing', { handlerRetries: 2 });
  // No 'error' listener: a handler failure must not be emitted as 'error' (that would throw).
  const reported = [];
  c.on('handlerError', (err, message) => reported.push({ err, offset: message.offset }));
  await c.connect();
  const calls = [];
  const err = await c.run([topic], (m) => {
    calls.push(m.value.toString());
    if (m.value.toString() === 'v6') throw new Error('boom');
  }).then(() => null, (e) => e);

  t.ok(err instanceof HandlerError, 'run() rejects with a HandlerError');
  t.match(err, { code: 'KDP_HANDLER_ERROR', topic, partition: 0, offset: failedOffset, attempts: 3 });
  t.equal(err.cause.message, 'boom', 'the cause is the handler\'s error');
  // 1 call + handlerRetries (2) on v6, and nothing behind it.
  t.same(calls, ['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v6', 'v6']);
  t.same(reported.map((r) => [r.err.attempts, r.offset]), [[1, failedOffset], [2, failedOffset], [3, failedOffset]], 'one handlerError per failed attempt');
  t.same(await committed('keeps-failing', topic, [0]), [failedOffset], 'committed offset = the failed message\'s');
});

t.test('handlerRetries 0: the first failure stops the consumer, whatever the handler threw', async (t) => {
  const topic = 'handler-no-retries';
  const reports = await produce(topic, ['x0', 'x1', 'x2', 'x3'], (i) => (i < 2 ? 1 : 2));
  const c = consumer('no-retries', { handlerRetries: 0 });
  const attempts = [];
  c.on('handlerError', (err) => attempts.push(err.attempts));
  await c.connect();
  const calls = [];
  const err = await c.run([topic], async (m) => {
    calls.push(m.value.toString());
    if (m.value.toString() === 'x1') throw 'not an Error';
  }).then(() => null, (e) => e);
  t.match(err, { name: 'HandlerError', code: 'KDP_HANDLER_ERROR', partition: 1, offset: reports[1].offset, attempts: 1, cause: 'not an Error' });
  t.same(attempts, [1], 'one attempt, one event');
  t.equal(calls.filter((v) => v === 'x1').length, 1, 'never called again');
  t.equal((await committed('no-retries', topic, [1]))[0], reports[1].offset, 'committed below x1 on its partition');
});

t.test('a handler that fails once: the message is retried at once, then every message is handled once, in order', async (t) => {
  const topic = 'handler-fails-once';
  const values = Array.from({ length: 80 }, (_, i) => `v${i}`);
  const reports = await produce(topic, values, (i) => i % 4);
  const expected = [[], [], [], []];
  for (const r of [...reports].sort((a, b) => a.offset - b.offset)) expected[r.partition].push(values[r.opaque]);
  const c = consumer('fails-once');
  const failures = [];
  c.on('handlerError', (err) => failures.push(err));
  await c.connect();
  const calls = [];
  const handled = [[], [], [], []];
  let failed = false;
  const done = c.run([topic], (m) => {
    const v = m.value.toString();
    calls.push(v);
    if (v === 'v41' && !failed) {
      failed = true;
      return Promise.reject(new Error('transient'));
    }
    handled[m.partition].push(v);
    if (handled.flat().length === values.length) setImmediate(() => c.stop());
  });
  await done;

  t.same(handled, expected, 'each partition\'s messages handled once, in offset order');
  t.equal(failures.length, 1, 'one handlerError');
  t.match(failures[0], { attempts: 1, partition: reports[41].partition, offset: reports[41].offset });
  const at = calls.indexOf('v41');
  t.same(calls.slice(at, at + 2), ['v41', 'v41'], 'the retry comes before any other message');
  t.equal(calls.length, values.length + 1, 'one extra call: the retry');
  const ends = [0, 0, 0, 0];
  for (const r of reports) ends[r.partition] = Math.max(ends[r.partition], r.offset + 1);
  t.same(await committed('fails-once', topic, [0, 1, 2, 3]), ends, 'everything committed');
});

t.test('state errors: StateError, and the consumer still works', async (t) => {
  const topic = 'state-errors';
  const first = (await produce(topic, ['a0', 'a1', 'a2'])).map((r) => r.offset);
  const c = consumer('state');
  const handler = () => undefined;
  t.throws(() => c.run([topic], handler), { name: 'StateError', code: 'KDP_STATE', message: /before connect/ }, 'run() before connect()');
  const connecting = c.connect();
  t.throws(() => c.run([topic], handler), { code: 'KDP_STATE' }, 'run() while connecting');
  await t.rejects(c.connect(), { code: 'KDP_STATE' }, 'connect() while connecting');
  await connecting;
  await t.rejects(c.connect(), { code: 'KDP_STATE' }, 'connect() while connected');

  const seen = [];
  const done = c.run([topic], (m) => {
    seen.push(m.value.toString());
    if (seen.length === 3) setImmediate(() => c.stop());
  });
  t.throws(() => c.run([topic], handler), { code: 'KDP_STATE', message: /running/ }, 'run() twice');
  await t.rejects(c.connect(), { code: 'KDP_STATE' }, 'connect() while running');
  await done;
  t.same(seen, ['a0', 'a1', 'a2'], 'connect() then run() works after the refused run()');
  t.same(await committed('state', topic, [0]), [first[2] + 1]);

  t.throws(() => c.run([topic], handler), { code: 'KDP_STATE' }, 'run() after stop() without connect()');
  await c.stop(); // nothing to stop: resolves

  // After stop(), connect() and run() start again from the committed offsets.
  const second = await produce(topic, ['b0', 'b1']);
  await c.connect();
  const again = [];
  const done2 = c.run([topic], (m) => {
    again.push(m.value.toString());
    if (again.length === 2) setImmediate(() => c.stop());
  });
  await done2;
  t.same(again, ['b0', 'b1'], 'the second run reads only what came after the committed offset');
  t.same(await committed('state', topic, [0]), [second[1].offset + 1]);
});
