'use strict';
// wrapKafkaJsConsumer() against librdkafka's mock cluster (run by ../kafkajs-consumer.test.js in
// a process that cannot load node-rdkafka). Every message's value is `producer|key|sequence`,
// numbered by the sending code: order, losses and duplicates are counted from the values alone,
// never from the order headers; offsets and commits from what the cluster handed out.
const t = require('tap');
const { KafkaJS } = require('@confluentinc/kafka-javascript');
const { wrapKafkaJsProducer, wrapKafkaJsConsumer } = require('../../../..');
const { prng } = require('../../../lib/random-keys');
const { brokersOf, sleep } = require('../../../producer/lib/helpers');

const QUIET = KafkaJS.logLevel.NOTHING;
// The root's 30 s default is too short for the group case when run on its own (node test/confluent/cases/...).
t.setTimeout(300_000);

/** A producer wrapped with wrapKafkaJsProducer; the first one starts a mock cluster, the others join it. */
async function producer(id, brokers, options = {}) {
  const kafka = brokers === undefined
    ? new KafkaJS.Kafka({ kafkaJS: { brokers: ['unused:9092'], logLevel: QUIET }, 'test.mock.num.brokers': 1 })
    : new KafkaJS.Kafka({ kafkaJS: { brokers: [brokers], logLevel: QUIET } });
  const raw = kafka.producer();
  const p = wrapKafkaJsProducer(raw, { producerId: Buffer.from(`0000000${id}`.slice(-8).padStart(16, '0'), 'hex'), ...options });
  await p.connect();
  return { p, raw };
}

/** A topic created on the mock cluster (its first message, to partition 0) whose count the producers know. */
async function createTopic(producers, topic) {
  await producers[0].p.send({ topic, messages: [{ key: 'warm-up', value: 'warm-up', partition: 0 }] });
  for (const { p } of producers) await p.connect([topic]);
}

function consumerOf(brokers, groupId, extra = {}) {
  const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: [brokers], logLevel: QUIET } });
  return kafka.consumer({
    kafkaJS: {
      groupId, fromBeginning: true, autoCommit: false, partitionAssigners: [KafkaJS.PartitionAssigners.cooperativeSticky],
      // A member that leaves is noticed sooner than the default 30 s would.
      sessionTimeout: 6000, heartbeatInterval: 500, ...extra,
    },
  });
}

/**
 * Sends `count` messages from producer `index`: about 40% of them of the key HOT, the rest of
 * 300 cold keys; each value numbers its key's messages from this producer (`next` carries on
 * from an earlier call). Resolves with the values sent.
 */
async function sendMany({ p }, index, topic, count, seed, next) {
  const rand = prng(seed);
  const sent = [];
  for (let i = 0; i < count; i += 100) {
    const messages = [];
    for (let j = 0; j < 100 && i + j < count; j++) {
      const key = rand() < 0.4 ? 'HOT' : `cold-${Math.floor(rand() * 300)}`;
      const s = (next.get(key) ?? 0) + 1;
      next.set(key, s);
      const value = `${index}|${key}|${s}`;
      messages.push({ key, value });
      sent.push(value);
    }
    await p.send({ topic, messages });
  }
  return sent;
}

/**
 * What the application's eachMessage saw, across every consumer of a group (one process, one
 * handling order): per (producer, key) order violations, each checked against the flags
 * handed out (README, bench:e2e: a violation is explained when a message of its (producer, key)
 * between it and the one that overtook it went with ordered false), duplicates checked against
 * the commits made before them, and every commit checked against what was handled below it.
 */
function recorder({ slow = false } = {}) {
  const r = {
    handled: 0, firstTime: new Set(), firstBy: new Map(), duplicates: 0, duplicatesOfCommitted: 0, committedReadByNextOwner: 0, violations: 0, unexplained: 0,
    flagged: 0, reasons: {}, marked: 0, commitsPastUnhandled: 0, committed: new Map(),
    done: new Map(), maxOffset: new Map(), hotPartitions: new Set(), byConsumer: {},
  };
  const highest = new Map();
  const flaggedSeqs = new Map();
  r.eachMessage = (name) => async ({ partition, message }, info) => {
    const value = String(message.value);
    const offset = Number(message.offset);
    r.handled++;
    r.byConsumer[name] = (r.byConsumer[name] ?? 0) + 1;
    if (r.firstTime.has(value)) {
      r.duplicates++;
      // Committed already: by the member that handled it first, re-read by the partition's next
      // owner (that owner's start offset was read before the revoke commit landed: docs/consumer.md),
      // or by the same member (which nothing explains).
      if (offset < (r.committed.get(partition) ?? 0)) {
        if (r.firstBy.get(value) === name) r.duplicatesOfCommitted++;
        else r.committedReadByNextOwner++;
      }
    } else if (value !== 'warm-up') {
      r.firstTime.add(value);
      r.firstBy.set(value, name);
      const [p, key, seq] = value.split('|');
      const s = Number(seq);
      const pk = `${p}|${key}`;
      if (key === 'HOT') r.hotPartitions.add(partition);
      if (info.order) r.marked++;
      if (!info.ordered) {
        r.flagged++;
        r.reasons[info.reason] = (r.reasons[info.reason] ?? 0) + 1;
        let list = flaggedSeqs.get(pk);
        if (!list) flaggedSeqs.set(pk, (list = []));
        list.push(s);
      }
      const top = highest.get(pk) ?? 0;
      if (s < top) {
        r.violations++;
        if (!(flaggedSeqs.get(pk) ?? []).some((f) => f > s && f <= top)) r.unexplained++;
      } else {
        highest.set(pk, s);
      }
    } else {
      r.firstTime.add(value);
    }
    let done = r.done.get(partition);
    if (!done) r.done.set(partition, (done = new Set()));
    done.add(offset);
    if (offset > (r.maxOffset.get(partition) ?? -1)) r.maxOffset.set(partition, offset);
    // An application that takes its time: the group is still working when it changes.
    if (slow && r.handled % 4 === 0) await sleep(2);
  };
  /** A 'committed' event: every offset below each committed one was handled (by a consumer of the group). */
  r.onCommitted = (offsets) => {
    for (const { partition, offset } of offsets) {
      const done = r.done.get(partition) ?? new Set();
      for (let o = 0; o < offset; o++) {
        if (!done.has(o)) {
          r.commitsPastUnhandled++;
          break;
        }
      }
      if (offset > (r.committed.get(partition) ?? 0)) r.committed.set(partition, offset);
    }
  };
  return r;
}

/** Wraps `raw`, records what it hands out, and starts it on `topic`. */
async function start(raw, topic, r, name, events, options = { commitIntervalMs: 100 }) {
  const c = wrapKafkaJsConsumer(raw, options);
  c.on('committed', r.onCommitted);
  for (const e of ['error', 'handlerError']) c.on(e, (err) => events.push(`${name} ${e}: ${err.message}`));
  c.on('revoked', () => events.push(`${name} revoked`));
  c.on('assigned', () => events.push(`${name} assigned`));
  await c.connect();
  await c.subscribe({ topics: [topic] });
  await c.run({ eachMessage: r.eachMessage(name) });
  return c;
}

async function until(condition, ms, what) {
  const describe = typeof what === 'function' ? what : () => what;
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${describe()}`);
    await sleep(50);
  }
}

t.test('one consumer, two producers spreading the hot key: every message once, each (producer, key) in send order, none flagged', async (t) => {
  const producers = [await producer(1)];
  const brokers = await brokersOf(producers[0].raw._getInternalClient());
  producers.push(await producer(2, brokers));
  t.teardown(() => Promise.all(producers.map(({ p }) => p.disconnect())));
  const topic = 'kjs-consume-one';
  await createTopic(producers, topic);
  const sent = (await Promise.all(producers.map((p, i) => sendMany(p, i + 1, topic, 5000, 0x5eed + i, new Map())))).flat();

  // What the consumer's own eachBatch was given, in that order: the order without the Resequencer.
  const raw = consumerOf(brokers, 'kjs-one');
  const arrival = [];
  const run = raw.run.bind(raw);
  raw.run = (config) => run({ ...config, eachBatch: (payload) => {
    for (const m of payload.batch.messages) arrival.push(String(m.value));
    return config.eachBatch(payload);
  } });
  const r = recorder();
  const events = [];
  const c = await start(raw, topic, r, 'one', events);
  await until(() => r.firstTime.size === sent.length + 1, 60_000, 'every message handled');
  await until(() => [...r.maxOffset].every(([p, o]) => r.committed.get(p) === o + 1), 10_000, 'the ends committed');
  await c.stop();

  t.equal(r.handled, sent.length + 1, 'every message handled once (and the warm-up)');
  t.ok(r.hotPartitions.size > 1, `the hot key came from ${r.hotPartitions.size} partitions`);
  t.ok(r.marked > 1000, `${r.marked} messages carried an order header`);
  t.equal(r.violations, 0, 'each (producer, key) handled in send order');
  t.equal(r.flagged, 0, 'none handed out ordered: false');
  const rawOrder = recorder();
  arrival.forEach((value, i) => rawOrder.eachMessage('raw')({ partition: 0, message: { value, offset: i } }, { ordered: true }));
  t.ok(rawOrder.violations > 0, `in the order the consumer fetched them, ${rawOrder.violations} messages came after a later one of their producer and key`);
  t.equal(r.commitsPastUnhandled, 0, 'no commit passed a message not handled');
  t.same(events, ['one assigned'], 'no error or handlerError');
});

t.test('partitionsConsumedConcurrently 16: calls at once, never two of one key, each (producer, key) in send order, nothing lost', async (t) => {
  const producers = [await producer(1)];
  const brokers = await brokersOf(producers[0].raw._getInternalClient());
  producers.push(await producer(2, brokers));
  t.teardown(() => Promise.all(producers.map(({ p }) => p.disconnect())));
  const topic = 'kjs-consume-concurrent';
  await createTopic(producers, topic);
  const sent = (await Promise.all(producers.map((p, i) => sendMany(p, i + 1, topic, 3000, 0xc0c0 + i, new Map())))).flat();
  const r = recorder();
  const record = r.eachMessage('concurrent');
  const underway = new Map();
  let overlaps = 0;
  let now = 0;
  let most = 0;
  const eachMessage = async (payload, info) => {
    const key = String(payload.message.value).split('|')[1] ?? 'warm-up';
    if (underway.get(key)) overlaps++;
    underway.set(key, true);
    most = Math.max(most, ++now);
    await record(payload, info);
    await sleep(Math.floor(Math.random() * 3));
    underway.set(key, false);
    now--;
  };
  const c = wrapKafkaJsConsumer(consumerOf(brokers, 'kjs-concurrent'), { commitIntervalMs: 100 });
  c.on('committed', r.onCommitted);
  const events = [];
  for (const e of ['error', 'handlerError']) c.on(e, (err) => events.push(`${e}: ${err.message}`));
  await c.connect();
  await c.subscribe({ topics: [topic] });
  await c.run({ eachMessage, partitionsConsumedConcurrently: 16 });
  await until(() => r.firstTime.size === sent.length + 1, 90_000, 'every message handled');
  await until(() => [...r.maxOffset].every(([p, o]) => r.committed.get(p) === o + 1), 10_000, 'the ends committed');
  await c.stop();
  t.equal(overlaps, 0, 'never two calls of one key at once');
  t.ok(most > 4, `calls at once: up to ${most} of 16`);
  t.equal(r.handled, sent.length + 1, 'every message handled once (and the warm-up)');
  t.equal(r.violations, 0, 'each (producer, key) handled in send order');
  t.equal(r.commitsPastUnhandled, 0, 'no commit passed a message not handled');
  t.same(events, [], 'no error or handlerError');
});

t.test('a group of two, one restarted part-way while two producers send: nothing lost, no member re-handles what it committed, every violation flagged', async (t) => {
  const producers = [await producer(3)];
  const brokers = await brokersOf(producers[0].raw._getInternalClient());
  producers.push(await producer(4, brokers));
  t.teardown(() => Promise.all(producers.map(({ p }) => p.disconnect())));
  const topic = 'kjs-consume-group';
  await createTopic(producers, topic);
  const next = [new Map(), new Map()];
  const sent = (await Promise.all(producers.map((p, i) => sendMany(p, i + 3, topic, 3000, 0xfeed + i, next[i])))).flat();

  const r = recorder({ slow: true });
  const events = [];
  const group = 'kjs-group';
  // a alone first (every partition), then b joins: a gives some up (a revocation under way).
  const a = await start(consumerOf(brokers, group), topic, r, 'a', events);
  await until(() => (r.byConsumer.a ?? 0) > 500, 30_000, 'a handling');
  const t0 = Date.now();
  const progress = () => `${JSON.stringify(r.byConsumer)}; ${events.join(', ')}; at ${Date.now() - t0} ms`;
  // More is sent while the group consumes, rebalances and restarts (until the restarted member handles some).
  let sending = true;
  const sender = Promise.all(producers.map(async (p, i) => {
    for (let round = 0; sending || round < 10; round++) {
      sent.push(...(await sendMany(p, i + 3, topic, 100, 0xbead + 1000 * i + round, next[i])));
      await sleep(200);
    }
  }));
  const b = await start(consumerOf(brokers, group), topic, r, 'b', events);
  // Stopped however the test ends (a failed check would leave them running: the process would not end).
  const members = [a, b];
  t.teardown(() => Promise.all(members.map((c) => c.stop().catch(() => {}))));
  const handledBy = (name) => r.byConsumer[name] ?? 0;
  await until(() => events.includes('b assigned') && handledBy('b') > 200, 90_000, () => `b handling: ${progress()}`);
  // Stopped without waiting for what was released (timeout 0): that is not committed, and is read again.
  await a.stop(0);
  const a2 = await start(consumerOf(brokers, group), topic, r, 'a2', events);
  members.push(a2);
  await until(() => events.includes('a2 assigned') && handledBy('a2') > 200, 90_000, () => `a2 handling: ${progress()}`);
  t.comment(`the restarted member handled ${handledBy('a2')} messages ${Date.now() - t0} ms after b started: ${progress()}`);
  sending = false;
  await sender;
  const total = sent.length + 1;
  await until(() => r.firstTime.size === total, 90_000, `every message handled (${r.firstTime.size} of ${total})`);
  // A liveness bound (nothing timed is asserted): a rebalance on the mock cluster can hold commits for seconds.
  const behind = () => [...r.maxOffset].filter(([p, o]) => r.committed.get(p) !== o + 1).map(([p, o]) => `${p}: committed ${r.committed.get(p)}, last ${o}`);
  await until(() => behind().length === 0, 45_000, () => `the ends committed (${behind().join('; ')}; ${progress()})`);
  await Promise.all([b.stop(), a2.stop()]);

  t.equal(r.firstTime.size, total, `nothing lost: all ${total} messages handled`);
  t.ok(r.byConsumer.a > 0 && r.byConsumer.b > 0 && r.byConsumer.a2 > 0, `every member handled some (${JSON.stringify(r.byConsumer)})`);
  t.ok(events.includes('a revoked') && events.includes('b assigned') && events.includes('a2 assigned'), `partitions moved between members: ${events.join(', ')}`);
  t.comment(`duplicates ${r.duplicates}, of which ${r.committedReadByNextOwner} committed by the member that handled them first and read again by the partition's next owner`);
  t.equal(r.duplicatesOfCommitted, 0, `no member handled again a message it had handled and committed (${r.duplicates} duplicates in all)`);
  t.equal(r.commitsPastUnhandled, 0, 'no commit passed a message not handled');
  t.ok(r.hotPartitions.size > 1, `the hot key came from ${r.hotPartitions.size} partitions`);
  t.equal(r.unexplained, 0, `every order violation (${r.violations}) has a message flagged ordered: false before it (reasons ${JSON.stringify(r.reasons)})`);
  t.same(events.filter((e) => !e.endsWith('revoked') && !e.endsWith('assigned')), [], 'no error or handlerError');
});

t.test("groupOrder 'wait' (the default), a group of two: the hot key's order holds across members through their handled records, none flagged", async (t) => {
  // Runs of 100 ms (splitRunMs) and sends paced over about 6 s: the hot key's chain goes from one
  // member's partition to the other's many times while both read.
  const producers = [await producer(5, undefined, { splitRunMs: 100 })];
  const brokers = await brokersOf(producers[0].raw._getInternalClient());
  producers.push(await producer(6, brokers, { splitRunMs: 100 }));
  t.teardown(() => Promise.all(producers.map(({ p }) => p.disconnect())));
  const topic = 'kjs-consume-records';
  await createTopic(producers, topic);
  const r = recorder();
  const events = [];
  const group = 'kjs-records';
  const owned = { a: new Set(), b: new Set() };
  const members = [];
  t.teardown(() => Promise.all(members.map((c) => c.stop().catch(() => {}))));
  for (const name of ['a', 'b']) {
    const c = wrapKafkaJsConsumer(consumerOf(brokers, group), { commitIntervalMs: 100 });
    t.equal(c.groupOrder, 'wait', "groupOrder 'auto' is 'wait' here");
    c.on('committed', r.onCommitted);
    for (const e of ['error', 'handlerError']) c.on(e, (err) => events.push(`${name} ${e}: ${err.message}`));
    c.on('assigned', (list) => list.forEach(({ partition }) => owned[name].add(partition)));
    c.on('revoked', (list) => list.forEach(({ partition }) => owned[name].delete(partition)));
    await c.connect();
    await c.subscribe({ topics: [topic] });
    await c.run({ eachMessage: r.eachMessage(name) });
    members.push(c);
  }
  await until(() => owned.a.size > 0 && owned.b.size > 0, 60_000, () => `both members own partitions: ${JSON.stringify([...owned.a])} ${JSON.stringify([...owned.b])}`);
  const ownerAtStart = new Map([...[...owned.a].map((p) => [p, 'a']), ...[...owned.b].map((p) => [p, 'b'])]);
  const next = [new Map(), new Map()];
  const sent = [];
  for (let round = 0; round < 30; round++) {
    await Promise.all(producers.map(async (p, i) => {
      const values = await sendMany(p, i + 5, topic, 100, 0x4ec0 + 100 * i + round, next[i]);
      sent.push(...values);
    }));
    await sleep(200);
  }
  const total = sent.length + 1;
  await until(() => r.firstTime.size === total, 90_000, () => `every message handled (${r.firstTime.size} of ${total}; ${events.join(', ')})`);
  const metrics = members.map((c) => c.metrics());
  await Promise.all(members.map((c) => c.stop()));

  const records = metrics.map((m) => m.records);
  t.comment(`owners ${JSON.stringify([...ownerAtStart])}, handled ${JSON.stringify(r.byConsumer)}, hot key on ${r.hotPartitions.size} partitions, ` +
    `marked ${r.marked}, flagged ${r.flagged} ${JSON.stringify(r.reasons)}, violations ${r.violations}, duplicates ${r.duplicates}`);
  t.comment(`records: ${records.map((x) => `committed ${x.committed}, reads ${x.reads}, read ${x.recordsRead}, commit ${Math.round(x.commitMs / Math.max(1, x.commits))} ms each, foreign ${x.foreign}`).join('; ')}`);
  const hotOwners = new Set([...r.hotPartitions].map((p) => ownerAtStart.get(p)));
  t.equal(hotOwners.size, 2, `the hot key's partitions belong to both members (${[...r.hotPartitions]})`);
  t.ok(r.byConsumer.a > 0 && r.byConsumer.b > 0, 'both members handled messages');
  t.equal(r.firstTime.size, total, `nothing lost: all ${total} handled`);
  t.equal(r.violations, 0, 'each (producer, key) handled in send order, across the members');
  t.equal(r.flagged, 0, 'none handed out ordered: false');
  t.ok(records.every((x) => x.committed > 0), 'each member committed handled records');
  t.ok(records.some((x) => x.recordsRead > 0), "a member read the other's records");
  t.equal(records.reduce((n, x) => n + x.foreign, 0), 0, "every record read was one of ours (Confluent's NUL taken off)");
  t.equal(r.commitsPastUnhandled, 0, 'no commit passed a message not handled');
  t.same(events, [], 'no error or handlerError');
});

t.test('an eachMessage that keeps failing: retried in place, then the consumer stops, committed at the failed message', async (t) => {
  const producers = [await producer(5)];
  t.teardown(() => producers[0].p.disconnect());
  const brokers = await brokersOf(producers[0].raw._getInternalClient());
  const topic = 'kjs-consume-fail';
  await producers[0].p.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: String(i), partition: 1 })) });
  const c = wrapKafkaJsConsumer(consumerOf(brokers, 'kjs-fail'), { handlerRetries: 2, retryBackoffMs: 10, commitIntervalMs: 50 });
  const failures = [];
  c.on('handlerError', (err, payload) => failures.push([err.attempts, payload.message.offset]));
  const stopped = new Promise((resolve) => c.on('stopped', resolve));
  const seen = [];
  await c.connect();
  await c.subscribe({ topic });
  await c.run({ eachMessage: async ({ message }) => {
    seen.push(String(message.value));
    if (String(message.value) === '6') throw new Error('cannot handle 6');
  } });
  const error = await stopped;
  t.match(error, { name: 'HandlerError', code: 'KDP_HANDLER_ERROR', topic, partition: 1, offset: 6, attempts: 3 }, "'stopped' carries the HandlerError");
  t.equal(error.cause.message, 'cannot handle 6');
  t.same(failures, [[1, '6'], [2, '6'], [3, '6']], 'one handlerError per attempt, on the same message');
  t.same(seen, ['0', '1', '2', '3', '4', '5', '6', '6', '6'], 'nothing after it handled meanwhile');
  const check = consumerOf(brokers, 'kjs-fail');
  await check.connect();
  const [committed] = await check.committed([{ topic, partition: 1 }], 5000);
  await check.disconnect();
  t.equal(committed.offset, '6', "the group's committed offset is the failed message's");
});

t.test('bad input and states: typed errors', async (t) => {
  for (const bad of [null, {}, 42, { connect() {}, run() {} }]) {
    t.throws(() => wrapKafkaJsConsumer(bad), { code: 'KDP_INVALID_ARG_TYPE', argument: 'consumer' }, `not a consumer: ${JSON.stringify(bad)}`);
  }
  const producers = [await producer(6)];
  t.teardown(() => producers[0].p.disconnect());
  const brokers = await brokersOf(producers[0].raw._getInternalClient());
  t.throws(() => wrapKafkaJsConsumer(consumerOf(brokers, 'x'), { nope: 1 }), { code: 'KDP_INVALID_OPTION', path: 'options.nope' }, 'an unknown option');
  t.throws(() => wrapKafkaJsConsumer(consumerOf(brokers, 'x'), { groupOrder: 'always' }), { code: 'KDP_INVALID_OPTION', path: 'options.groupOrder' }, 'an unknown groupOrder');
  t.equal(wrapKafkaJsConsumer(consumerOf(brokers, 'x'), { groupOrder: 'flag' }).groupOrder, 'flag', "groupOrder 'flag' as given");
  t.throws(() => wrapKafkaJsConsumer(consumerOf(brokers, 'x'), { batchSize: 10 }), { code: 'KDP_INVALID_OPTION', path: 'options.batchSize' }, "DynamicConsumer's fetching options are not this one's");
  t.throws(() => wrapKafkaJsConsumer(consumerOf(brokers, 'x'), { resequencer: { maxWaitMs: -1 } }), { code: 'KDP_INVALID_OPTION', path: 'options.resequencer.maxWaitMs' });

  const c = wrapKafkaJsConsumer(consumerOf(brokers, 'x'));
  await t.rejects(c.run({ eachMessage: async () => {} }), { code: 'KDP_STATE' }, 'run() before connect()');
  await t.rejects(c.subscribe({ topic: 't' }), { code: 'KDP_STATE' }, 'subscribe() before connect()');
  await c.connect();
  await t.rejects(c.connect(), { code: 'KDP_STATE' }, 'connect() twice');
  await t.rejects(c.subscribe({}), { code: 'KDP_INVALID_ARG_TYPE', argument: 'subscription.topic' }, 'no topic');
  await t.rejects(c.subscribe({ topics: ['ok', ''] }), { code: 'KDP_INVALID_ARG_TYPE', argument: 'subscription.topics' }, 'an empty name');
  await t.rejects(c.subscribe('t'), { code: 'KDP_INVALID_ARG_TYPE', argument: 'subscription' });
  await t.rejects(c.run({}), { code: 'KDP_INVALID_ARG_TYPE', argument: 'config.eachMessage' }, 'no eachMessage');
  await t.rejects(c.run({ eachBatch: async () => {} }), { code: 'KDP_INVALID_OPTION', path: 'config.eachBatch' }, 'eachBatch refused, saying why');
  for (const bad of [0, 1.5, '2', 65537]) {
    await t.rejects(c.run({ eachMessage: async () => {}, partitionsConsumedConcurrently: bad }), { code: 'KDP_INVALID_OPTION', path: 'config.partitionsConsumedConcurrently' },
      `partitionsConsumedConcurrently ${JSON.stringify(bad)} refused`);
  }
  await t.rejects(c.run({ eachMessage: async () => {}, autoCommit: true }), { code: 'KDP_INVALID_OPTION', path: 'config.autoCommit' }, 'an unknown run() option');
  await t.rejects(c.stop(-1), { code: 'KDP_OUT_OF_RANGE', argument: 'timeoutMs' }, 'stop(-1): out of range');
  await t.rejects(c.stop('1'), { code: 'KDP_INVALID_ARG_TYPE', argument: 'timeoutMs' }, "stop('1'): not a number");
  await c.subscribe({ topic: 'kjs-bad-input' });
  await c.run({ eachMessage: async () => {} });
  await t.rejects(c.run({ eachMessage: async () => {} }), { code: 'KDP_STATE' }, 'run() twice');
  await c.stop();
  await t.rejects(c.connect(), { code: 'KDP_STATE' }, 'connect() after stop(): the consumer connects once');

  // A consumer that would commit by itself (autoCommit absent: true) is refused at connect().
  const auto = wrapKafkaJsConsumer(new KafkaJS.Kafka({ kafkaJS: { brokers: [brokers], logLevel: QUIET } }).consumer({ kafkaJS: { groupId: 'auto' } }));
  await t.rejects(auto.connect(), { code: 'KDP_INVALID_OPTION', path: "the consumer's kafkaJS.autoCommit" }, 'autoCommit not false: refused');
  await auto.stop();
});
