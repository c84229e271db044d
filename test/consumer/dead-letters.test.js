'use strict';
// DynamicConsumer's dead letters on librdkafka's mock cluster (on the engine KDP_ENGINE picks): a message the handler keeps
// failing on goes to the dead-letter topic with its key, value and headers and its origin (checked against the broker's
// delivery reports), the run goes on, the key's next message is handled after it, the offset committed past it; a producer
// the consumer makes, or one given; a dead-letter topic that cannot be written parks the key, the others go on, and the run
// stops with a DeadLetterError after maxParkMs, nothing committed past it; bad options refused with typed errors.
const t = require('tap');
const Kafka = require('node-rdkafka');
const { Registry } = require('prom-client');
const { DynamicProducer, DynamicConsumer, InvalidOptionError, DeadLetterError, DEAD_LETTER_HEADERS } = require('../..');
const { committedOffsets } = require('../lib/mock-cluster');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let seed;
let brokers;

t.before(async () => {
  seed = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 2 }, {}, {});
  await seed.connect();
  brokers = await new Promise((resolve, reject) => seed.client.getMetadata({ timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m.brokers.map((b) => `${b.host}:${b.port}`).join(',')))));
});
t.teardown(() => seed.disconnect().catch(() => undefined));

function consumer(group, options) {
  const c = new DynamicConsumer({ 'bootstrap.servers': brokers, 'group.id': group, 'auto.offset.reset': 'earliest', log_level: 2 }, {},
    { commitIntervalMs: 50, retryBackoffMs: 5, concurrency: 4, ...options });
  c.on('error', () => {});
  return c;
}

/** Sends `values` to `topic` with `keyOf(i)` and a header, in order; the delivery reports (the broker's offsets). */
async function fill(topic, values, keyOf) {
  const reports = [];
  for (let i = 0; i < values.length; i++) reports.push(await seed.send(topic, Buffer.from(values[i]), keyOf(i), [{ origin: Buffer.from(`h${i}`) }]));
  return reports;
}

/** Every record of `topic`, read from the start by a plain client, with its headers. */
async function readAll(topic, expected, timeoutMs = 15_000) {
  const reader = new Kafka.KafkaConsumer({ 'bootstrap.servers': brokers, 'group.id': `reader-${topic}-${Date.now()}`, 'auto.offset.reset': 'earliest', 'enable.auto.commit': false, log_level: 2 }, {});
  await new Promise((resolve, reject) => reader.connect({}, (err) => (err ? reject(err) : resolve())));
  // Assigned, not subscribed: no group to join (the mock cluster's join is slow), every partition from its start.
  const md = await new Promise((resolve, reject) => reader.getMetadata({ topic, timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m))));
  const partitions = md.topics.find((x) => x.name === topic).partitions.map((p) => ({ topic, partition: p.id, offset: 0 }));
  reader.assign(partitions);
  const out = [];
  const deadline = Date.now() + timeoutMs;
  try {
    while (out.length < expected && Date.now() < deadline) {
      const got = await new Promise((resolve, reject) => reader.consume(100, (err, m) => (err ? reject(err) : resolve(m))));
      out.push(...got);
    }
  } finally {
    await new Promise((resolve) => reader.disconnect(resolve));
  }
  return out;
}

/** A record's headers as name → [text values]. */
function headersOf(record) {
  const out = {};
  for (const h of record.headers ?? []) for (const [name, value] of Object.entries(h)) (out[name] ??= []).push(Buffer.from(value).toString());
  return out;
}

/** The offsets `group` has committed for `partitions` of `topic`, read by a client outside the group. */
const committed = (group, topic, partitions) => committedOffsets(brokers, group, topic, partitions, 2);

for (const given of [false, true]) {
  t.test(`a message the handler keeps failing on goes to the dead-letter topic (${given ? 'a DynamicProducer given' : 'a producer the consumer makes'}); its key goes on after it`, async (t) => {
    const topic = `dl-in-${given}`;
    const dlq = `dl-out-${given}`;
    const values = Array.from({ length: 12 }, (_, i) => `v${i}`);
    // Keys a and b alternate; v4 (key a) always fails.
    const reports = await fill(topic, values, (i) => (i % 2 === 0 ? 'a' : 'b'));
    let producer;
    if (given) {
      producer = new DynamicProducer({ 'bootstrap.servers': brokers, log_level: 2 }, {}, {});
      t.teardown(() => producer.disconnect().catch(() => undefined));
      await producer.connect();
    }
    const group = `dl-group-${given}`;
    const registry = new Registry();
    const c = consumer(group, { handlerRetries: 2, deadLetter: { topic: dlq, ...(given ? { producer } : {}) }, prometheus: registry });
    const events = [];
    c.on('deadLettered', (m, err) => events.push({ what: 'deadLettered', value: m.value.toString(), err }));
    await c.connect();
    let calls = 0;
    const run = c.run([topic], async (m) => {
      calls++;
      const v = m.value.toString();
      if (v === 'v4') throw Object.assign(new RangeError('cannot parse v4'), { code: 'E_PARSE' });
      events.push({ what: 'handled', value: v, key: m.key.toString() });
    });
    const deadline = Date.now() + 20_000;
    while (events.length < values.length && Date.now() < deadline) await sleep(20);
    await c.stop();
    await run;
    t.equal(events.length, values.length, 'every message handled or dead-lettered, the run went on');
    t.equal(calls, values.length - 1 + 3, 'v4: one call and two retries');
    const keyA = events.filter((e) => e.key === 'a' || e.what === 'deadLettered').map((e) => e.value);
    t.same(keyA, ['v0', 'v2', 'v4', 'v6', 'v8', 'v10'], "key a's messages in order, v4 dead-lettered before v6 was handled");
    t.equal(events.find((e) => e.what === 'deadLettered').err.attempts, 3);
    t.same(c.metrics().failures, { retries: 2, deadLettered: 1, skipped: 0, deadLetterFailures: 0, parked: 0 });
    const text = await registry.metrics();
    t.match(text, /^kdp_consumer_dead_lettered 1$/m, 'Prometheus: kdp_consumer_dead_lettered');
    t.match(text, /^kdp_consumer_retries 2$/m, 'Prometheus: kdp_consumer_retries');
    t.match(text, /^kdp_consumer_parked 0$/m, 'Prometheus: kdp_consumer_parked');
    t.throws(() => consumer(`${group}-2`, { prometheus: registry }), { code: 'KDP_INVALID_OPTION', message: /already has a metric named kdp_consumer_/ }, 'one Registry per consumer');

    const [letter, ...more] = await readAll(dlq, 1);
    t.equal(more.length, 0, 'one dead letter');
    t.equal(letter.key.toString(), 'a', 'its key');
    t.equal(letter.value.toString(), 'v4', 'its value');
    const h = headersOf(letter);
    t.same(h.origin, ['h4'], 'its own headers');
    const report = reports[4];
    t.same(h[DEAD_LETTER_HEADERS.topic], [topic]);
    t.same(h[DEAD_LETTER_HEADERS.partition], [String(report.partition)], 'its partition, as the broker reported it');
    t.same(h[DEAD_LETTER_HEADERS.offset], [String(report.offset)], 'its offset, as the broker reported it');
    t.same(h[DEAD_LETTER_HEADERS.errorClass], ['RangeError']);
    t.same(h[DEAD_LETTER_HEADERS.errorMessage], ['cannot parse v4']);
    t.same(h[DEAD_LETTER_HEADERS.errorCode], ['E_PARSE']);
    t.same(h[DEAD_LETTER_HEADERS.attempts], ['3']);
    // Committed past it: every partition of the input at its end (from the delivery reports).
    const ends = new Map();
    for (const r of reports) ends.set(r.partition, Math.max(ends.get(r.partition) ?? 0, r.offset + 1));
    const parts = [...ends.keys()];
    t.same(await committed(group, topic, parts), parts.map((p) => ends.get(p)), 'the committed offsets pass the dead-lettered message');
  });
}

t.test('a dead-letter topic that cannot be written: the key parks (warnings), the others go on, the run stops with a DeadLetterError after maxParkMs, nothing committed past it', async (t) => {
  const topic = 'dl-park-in';
  const values = Array.from({ length: 10 }, (_, i) => `p${i}`);
  // One partition's worth per key is not needed: keys a, b, c by i % 3; p3 (key a) fails.
  const reports = await fill(topic, values, (i) => ['a', 'b', 'c'][i % 3]);
  const closed = new DynamicProducer({ 'bootstrap.servers': brokers, log_level: 2 }, {}, {});
  await closed.disconnect(); // refuses every send: a dead-letter topic that cannot be written
  const group = 'dl-park';
  const c = consumer(group, { handlerRetries: 0, deadLetter: { topic: 'dl-park-out', producer: closed, maxParkMs: 600 } });
  const warnings = [];
  c.on('warning', (w) => warnings.push(w));
  await c.connect();
  const handled = [];
  const err = await c.run([topic], (m) => {
    const v = m.value.toString();
    if (v === 'p3') throw new Error('poison');
    handled.push(v);
  }).then(() => null, (e) => e);
  t.ok(err instanceof DeadLetterError, `run() rejects with a DeadLetterError (${err && err.message})`);
  t.equal(err.code, 'KDP_DEAD_LETTER');
  t.equal(err.offset, reports[3].offset);
  t.equal(err.deadLetterTopic, 'dl-park-out');
  t.ok(err.parkedMs >= 600);
  t.ok(warnings.filter((w) => w instanceof DeadLetterError).length >= 2, 'a warning per failed write');
  t.same(handled.filter((v) => ['p0', 'p6', 'p9'].includes(v)), ['p0'], "key a went no further than its parked message");
  t.ok(['p1', 'p2', 'p4', 'p5', 'p7', 'p8'].every((v) => handled.includes(v)), 'the other keys were all handled');
  const [offset] = await committed(group, topic, [reports[3].partition]);
  t.equal(offset, reports[3].offset, 'committed up to the parked message, not past it');
});

t.test('bad options: typed errors at construction, or at run() for a dead-letter topic it reads', async (t) => {
  const config = { 'bootstrap.servers': brokers, 'group.id': 'dl-options', log_level: 2 };
  t.throws(() => new DynamicConsumer(config, {}, { deadLetter: {} }), { code: 'KDP_INVALID_OPTION', message: /deadLetter\.topic/ }, 'no topic');
  t.throws(() => new DynamicConsumer(config, {}, { deadLetter: { topic: '' } }), InvalidOptionError, 'an empty topic');
  t.throws(() => new DynamicConsumer(config, {}, { deadLetter: { topic: 'x', producer: {} } }), { code: 'KDP_INVALID_OPTION', message: /DynamicProducer/ }, 'not a DynamicProducer');
  t.throws(() => new DynamicConsumer(config, {}, { deadLetter: { topic: 'x', maxParkMs: -1 } }), InvalidOptionError, 'a negative park bound');
  t.throws(() => new DynamicConsumer(config, {}, { deadLetter: { topic: 'x', other: 1 } }), InvalidOptionError, 'an unknown field');
  t.throws(() => new DynamicConsumer(config, {}, { retryBackoffMs: -1 }), InvalidOptionError, 'a backoff below 0');
  t.throws(() => new DynamicConsumer(config, {}, { retryBackoffMs: 500, retryBackoffMaxMs: 100 }), { code: 'KDP_INVALID_OPTION', message: /retryBackoffMaxMs/ }, 'a cap below the base');
  t.throws(() => new DynamicConsumer(config, {}, { onFailure: 'deadLetter' }), InvalidOptionError, 'onFailure not a function');
  t.throws(() => new DynamicConsumer(config, {}, { prometheus: {} }), { code: 'KDP_INVALID_OPTION', message: /prom-client Registry/ }, 'prometheus not a Registry');
  const c = consumer('dl-options-run', { deadLetter: { topic: 'dl-same' } });
  await c.connect();
  t.throws(() => c.run(['dl-other', 'dl-same'], () => {}), { code: 'KDP_INVALID_OPTION', message: /is a topic this consumer reads/ }, 'the dead-letter topic among those read');
  await c.stop();
});
