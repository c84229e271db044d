'use strict';
// wrapKafkaJsConsumer() over a stand-in of KafkaJS 2.x's consumer (the surface its source shows:
// run({ autoCommit, eachBatchAutoResolve, eachBatch }), commitOffsets with metadata, the
// instrumentation events REBALANCING / GROUP_JOIN / CRASH through on(), stop(), and an admin
// client's fetchOffsets()): how the adapter meets that client — its options, the run config it
// gives, a rebalance (batches dropped between REBALANCING and GROUP_JOIN, the old assignment
// revoked, kept partitions committed and started anew, what is below their committed offset
// skipped), heartbeats while eachBatch waits for the queue to drain, stop and run again, a crash.
// The real client against the real cluster: test/kafka/kafkajs-consumer.test.js.

const t = require('tap');
const { wrapKafkaJsConsumer } = require('../..');
const { fakeKafkaJs } = require('./lib/fake-kafkajs');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const TOPIC = 'kjs-fake';

/** A stand-in of KafkaJS 2.x's consumer and of an admin client reading what it committed. */
const fake = (partitions = 2) => fakeKafkaJs({ topic: TOPIC, partitions });

function messages(from, count) {
  return Array.from({ length: count }, (_, i) => ({ key: Buffer.from(`k${from + i}`), value: Buffer.from(String(from + i)), offset: String(from + i), headers: {} }));
}

/** Hands a batch to the wrapper's eachBatch; resolves with what it resolved. */
async function batch(consumer, partition, from, count, heartbeat = async () => {}) {
  const resolved = [];
  await consumer.eachBatch({ batch: { topic: TOPIC, partition, messages: messages(from, count) }, resolveOffset: (o) => resolved.push(o), heartbeat });
  return resolved;
}

async function started(options = {}, partitions = 2) {
  const f = fake(partitions);
  const handled = [];
  const c = wrapKafkaJsConsumer(f.consumer, { admin: f.admin, commitIntervalMs: 10, ...options });
  await c.connect();
  await c.subscribe({ topic: TOPIC, fromBeginning: true });
  await c.run({ eachMessage: async ({ partition, message }) => { handled.push(`${partition}:${message.offset}`); } });
  return { f, c, handled };
}

t.test('options and input: typed errors', async (t) => {
  const { consumer, admin } = fake();
  t.throws(() => wrapKafkaJsConsumer(consumer), { code: 'KDP_INVALID_OPTION', path: 'options.admin' }, "KafkaJS's consumer without an admin client");
  t.throws(() => wrapKafkaJsConsumer(consumer, { admin: {} }), { code: 'KDP_INVALID_OPTION', path: 'options.admin' }, 'an admin client without fetchOffsets()');
  t.throws(() => wrapKafkaJsConsumer({ ...consumer, events: {} }, { admin }), { code: 'KDP_INVALID_ARG_TYPE', argument: 'consumer' }, 'a consumer without its instrumentation events');
  t.throws(() => wrapKafkaJsConsumer(consumer, { admin, commitIntervalMs: 0 }), { code: 'KDP_INVALID_OPTION', path: 'options.commitIntervalMs' });
  const c = wrapKafkaJsConsumer(consumer, { admin });
  t.equal(c.groupOrder, 'wait', "groupOrder 'auto' is 'wait': the commits carry the handled records");
  await t.rejects(c.run({ eachMessage: async () => {} }), { code: 'KDP_STATE' }, 'run() before connect()');
  await c.connect();
  await t.rejects(c.subscribe({ topic: TOPIC, fromBeginning: 'yes' }), { code: 'KDP_INVALID_ARG_TYPE', argument: 'subscription.fromBeginning' });
  await t.rejects(c.run({ eachMessage: async () => {}, autoCommit: true }), { code: 'KDP_INVALID_OPTION', path: 'config.autoCommit' }, 'autoCommit is not the application\'s to set');
  await c.disconnect();
});

t.test('run: no auto-commit, batches resolved whole, commits below what was handled', async (t) => {
  const { f, c, handled } = await started();
  t.ok(f.consumer.calls.includes('run autoCommit=false eachBatchAutoResolve=false'), 'run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch })');
  const assigned = [];
  c.on('assigned', (list) => assigned.push(...list.map((tp) => tp.partition)));
  f.consumer.join([0, 1]);
  t.same(assigned, [0, 1], 'GROUP_JOIN assigns');
  t.same(await batch(f.consumer, 0, 0, 5), ['4'], 'the batch resolved whole');
  await batch(f.consumer, 1, 0, 3);
  await sleep(60);
  t.same(handled.sort(), ['0:0', '0:1', '0:2', '0:3', '0:4', '1:0', '1:1', '1:2'], 'every message handled');
  t.same([f.committed.get(0)?.offset, f.committed.get(1)?.offset], ['5', '3'], 'committed past what was handled');
  await c.disconnect();
  t.same(f.consumer.calls.slice(-2), ['stop', 'disconnect'], 'disconnect(): stop(), then disconnect');
  t.equal(f.consumer.listening(f.consumer.events.GROUP_JOIN), 0, 'its listeners removed');
});

t.test('a rebalance: nothing handed out in between, the old assignment revoked, kept partitions start anew', async (t) => {
  const { f, c, handled } = await started({ commitIntervalMs: 100000 });
  const revoked = [];
  c.on('revoked', (list) => revoked.push(...list.map((tp) => tp.partition)));
  f.consumer.join([0, 1]);
  await batch(f.consumer, 0, 0, 4);
  await batch(f.consumer, 1, 0, 4);
  await sleep(20);
  f.consumer.emit(f.consumer.events.REBALANCING, { groupId: 'g' });
  await sleep(20);
  t.same([f.committed.get(0)?.offset, f.committed.get(1)?.offset], ['4', '4'], 'REBALANCING: what is safe of every partition committed');
  const before = handled.length;
  t.same(await batch(f.consumer, 0, 4, 3), ['6'], 'a batch between REBALANCING and GROUP_JOIN is resolved');
  await sleep(20);
  t.equal(handled.length, before, '... and nothing of it handed out (it is fetched again after the join)');
  f.consumer.join([1]);
  t.same(revoked, [0], 'GROUP_JOIN: the partition not kept is revoked');
  // The kept partition is fetched again from its committed offset (4): KafkaJS may have read an
  // older one; what is below the committed offset is skipped.
  await batch(f.consumer, 1, 2, 5);
  await sleep(20);
  t.same(handled.filter((h) => h.startsWith('1:')), ['1:0', '1:1', '1:2', '1:3', '1:4', '1:5', '1:6'], 'the kept partition goes on where it was committed');
  t.equal(c.metrics().rejoins.belowCommitted, 2, 'the 2 messages below its committed offset skipped');
  t.match(c.metrics().rejoins, { rebalancing: 1, joins: 2, committed: 1 }, 'counted');
  await c.stop();
  t.equal(f.committed.get(1)?.offset, '7', "stop(): the last commit made before the client's run stops");
});

t.test('eachBatch heartbeats while the queue drains, and a rejection goes to the client', async (t) => {
  const f = fake();
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const c = wrapKafkaJsConsumer(f.consumer, { admin: f.admin, maxPending: 2 });
  await c.connect();
  await c.subscribe({ topic: TOPIC });
  await c.run({ eachMessage: () => gate });
  f.consumer.join([0]);
  let beats = 0;
  const rebalance = Object.assign(new Error('The group is rebalancing, so a rejoin is needed'), { type: 'REBALANCE_IN_PROGRESS', code: 27 });
  const since = Date.now();
  await t.rejects(batch(f.consumer, 0, 0, 5, async () => {
    beats++;
    if (beats === 2) throw rebalance;
  }), rebalance, "the heartbeat's rejection is eachBatch's");
  t.equal(beats, 2, 'it heartbeat while it waited');
  t.ok(Date.now() - since >= 1500, 'about once a second');
  release();
  await c.stop();
});

t.test('stop() and run again; a crash the client does not restart from stops the run', async (t) => {
  const { f, c, handled } = await started();
  f.consumer.join([0]);
  await batch(f.consumer, 0, 0, 2);
  await sleep(30);
  const stopped = new Promise((resolve) => c.once('stopped', resolve));
  await c.stop();
  await stopped;
  t.notOk(f.consumer.calls.includes('disconnect'), 'stop() leaves the client connected');
  await c.connect();
  await c.run({ eachMessage: async ({ message }) => { handled.push(`again:${message.offset}`); } });
  f.consumer.join([0]);
  await batch(f.consumer, 0, 0, 4);
  await sleep(30);
  t.same(handled, ['0:0', '0:1', 'again:2', 'again:3'], 'run again: it goes on from the committed offset');
  const errors = [];
  c.on('error', (err) => errors.push(err));
  const ended = new Promise((resolve) => c.once('stopped', resolve));
  f.consumer.emit(f.consumer.events.CRASH, { error: new Error('gone'), groupId: 'g', restart: false });
  await ended;
  t.match(errors, [{ code: 'KDP_KAFKA_ERROR', message: /run crashed: gone/ }], "the crash is an 'error', the run stopped");
  await c.disconnect();
});

t.test('a join without REBALANCING, and a crash KafkaJS restarts from', async (t) => {
  const f = fake();
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const handled = [];
  const c = wrapKafkaJsConsumer(f.consumer, { admin: f.admin, commitIntervalMs: 100000 });
  await c.connect();
  await c.subscribe({ topic: TOPIC });
  // One call at a time; the first one waits at the gate, the others of its batch queue behind it.
  await c.run({ eachMessage: async ({ partition, message }) => {
    if (handled.length === 0) await gate;
    handled.push(`${partition}:${message.offset}`);
  } });
  f.consumer.join([0]);
  await batch(f.consumer, 0, 0, 4);
  await sleep(10);
  // Joined again (its member id was unknown): the queue behind the call under way is dropped,
  // the call ends, what it handled is committed, and the partition starts anew from there.
  f.consumer.join([0]);
  release();
  await sleep(30);
  t.same(handled, ['0:0'], 'what waited was dropped');
  t.equal(f.committed.get(0)?.offset, '1', 'the kept partition committed past the call that was under way');
  await batch(f.consumer, 0, 0, 4);
  await sleep(20);
  t.same(handled, ['0:0', '0:1', '0:2', '0:3'], 'fetched again from its committed offset: nothing twice, nothing lost');
  // A crash KafkaJS restarts from: nothing handed out until it has joined again.
  f.consumer.emit(f.consumer.events.CRASH, { error: new Error('connection lost'), groupId: 'g', restart: true });
  await batch(f.consumer, 0, 4, 2);
  await sleep(20);
  t.equal(handled.length, 4, 'a batch before the join is not handed out');
  f.consumer.join([0]);
  await batch(f.consumer, 0, 4, 2);
  await sleep(20);
  t.same(handled.slice(4), ['0:4', '0:5'], 'after it, the partition goes on');
  await c.disconnect();
});
