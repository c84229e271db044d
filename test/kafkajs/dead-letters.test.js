'use strict';
// wrapKafkaJsConsumer's failure options over a stand-in of KafkaJS 2.x's consumer and admin client (lib/fake-kafkajs.js, as
// consumer-kafkajs.test.js's) and a stand-in of a KafkaJS producer that records what it is sent: a message the handler keeps
// failing on is sent to the dead-letter topic with its key, value, headers and origin, its key's next message handed out
// only once that send resolved, the commit passing it, a 'deadLettered' event with eachMessage's payload; onFailure's
// payload, attempts and verdicts; a send that keeps rejecting parks the key (warnings, other keys go on) until maxParkMs
// stops the run with a DeadLetterError, nothing committed past it; bad options refused with typed errors.
// Several calls at once (partitionsConsumedConcurrently 4): with one, a key waiting on its dead letter holds the only call,
// and every key waits.

const t = require('tap');
const { wrapKafkaJsConsumer, DEAD_LETTER_HEADERS, DeadLetterError, HandlerError, encodeOrderHeader, ORDER_ANCHOR } = require('../..');
const { fakeKafkaJs } = require('./lib/fake-kafkajs');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const TOPIC = 'kjs-dl-in';
const DLQ = 'kjs-dl-out';
const PRODUCER_ID = '0123456789abcdef';

/** A stand-in of KafkaJS 2.x's consumer and of an admin client reading what it committed (lib/fake-kafkajs.js). */
const fake = (partitions = 1) => fakeKafkaJs({ topic: TOPIC, partitions });

/** A stand-in of a KafkaJS producer: records each send(); `mode` 'ok' resolves it, 'hold' keeps it open (release()), 'reject' rejects it. */
function fakeProducer() {
  const p = {
    sent: [],
    mode: 'ok',
    holds: [],
    async connect() {},
    async disconnect() {},
    send(record) {
      p.sent.push(record);
      if (p.mode === 'reject') return Promise.reject(new Error('broker down'));
      if (p.mode === 'hold') return new Promise((resolve) => p.holds.push(resolve));
      return Promise.resolve([{ topicName: record.topic, partition: 0, errorCode: 0 }]);
    },
  };
  return p;
}

/** A KafkaJS message as its batches carry it. */
const msg = (offset, key, headers = {}) => ({ key: Buffer.from(key), value: Buffer.from(`${key}@${offset}`), offset: String(offset), headers, size: 0 });

/** Hands `messages` of `partition` to the wrapper's eachBatch. */
function feed(consumer, partition, messages) {
  return consumer.eachBatch({ batch: { topic: TOPIC, partition, messages }, resolveOffset: () => {}, heartbeat: async () => {} });
}

async function until(condition, ms = 2000) {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await sleep(2);
  return condition();
}

/**
 * A wrapper connected, subscribed and running over a fake, partition 0 assigned, dead letters to a fake producer (`park`: more
 * of deadLetter); `handler(payload)` per call, each call and 'deadLettered' event logged in `log`.
 */
async function started(options, handler = () => {}, park = {}) {
  const f = fake();
  const producer = fakeProducer();
  const log = [];
  const c = wrapKafkaJsConsumer(f.consumer, { admin: f.admin, commitIntervalMs: 10, retryBackoffMs: 1, deadLetter: { topic: DLQ, producer, ...park }, ...options });
  c.on('deadLettered', (payload, err) => log.push({ deadLettered: payload, err }));
  await c.connect();
  await c.subscribe({ topic: TOPIC });
  await c.run({
    partitionsConsumedConcurrently: 4,
    eachMessage: async (payload) => {
      log.push(`${payload.partition}:${payload.message.offset}`);
      await handler(payload);
    },
  });
  f.consumer.join([0]);
  return { f, c, producer, log };
}

/** A kdp-order header's value (the first message of its chain). */
const ORDER = encodeOrderHeader(ORDER_ANCHOR, PRODUCER_ID, 1, 0, 1, 1, 0);

const poison = () => Object.assign(new RangeError('cannot parse'), { code: 'E_PARSE' });

t.test('a message the handler keeps failing on is sent to the dead-letter topic; its key goes on once the send resolved', async (t) => {
  const failing = (p) => {
    if (p.message.offset === '1') throw poison();
  };
  const { f, c, producer, log } = await started({ handlerRetries: 2 }, failing);
  producer.mode = 'hold';
  const fed = [msg(0, 'a'), msg(1, 'a', { origin: Buffer.from('h1'), tag: ['x', 'y'], 'kdp-order': ORDER }), msg(2, 'b'), msg(3, 'a'), msg(4, 'b')];
  await feed(f.consumer, 0, fed);
  t.ok(await until(() => producer.sent.length === 1), 'sent once its retries were used up');
  await sleep(40);
  const calls = log.filter((e) => typeof e === 'string');
  t.same(calls.filter((e) => e === '0:1').length, 3, 'one call and two retries');
  t.ok(calls.includes('0:2') && calls.includes('0:4'), "another key's messages handled while the send is open");
  t.notOk(calls.includes('0:3'), "... the key's next one not");
  t.equal(f.committed.get(0)?.offset, '1', 'committed below the message while its send is open');
  log.push('send resolved');
  for (const release of producer.holds) release([]);
  t.ok(await until(() => log.includes('0:3')), "then the key's next message");
  const deadLettered = log.findIndex((e) => e.deadLettered !== undefined);
  t.ok(log.indexOf('send resolved') < deadLettered && deadLettered < log.indexOf('0:3'), "'deadLettered' after the send resolved, before the key's next message");
  t.ok(await until(() => f.committed.get(0)?.offset === '5'), 'the commit passes the dead-lettered offset');

  const [record] = producer.sent;
  t.equal(record.topic, DLQ, 'to the dead-letter topic');
  t.equal(record.messages.length, 1);
  const [letter] = record.messages;
  t.same(letter.key, Buffer.from('a'), 'its key');
  t.same(letter.value, Buffer.from('a@1'), 'its value');
  const h = letter.headers;
  t.same(h.origin, Buffer.from('h1'), 'its own headers');
  t.same(h.tag, ['x', 'y'], 'a repeated header as an array');
  t.notOk('kdp-order' in h, 'no order header of its own');
  t.equal(String(h[DEAD_LETTER_HEADERS.order]), ORDER, 'renamed kdp-dlt-original-order');
  t.equal(h[DEAD_LETTER_HEADERS.topic], TOPIC);
  t.equal(h[DEAD_LETTER_HEADERS.partition], '0');
  t.equal(h[DEAD_LETTER_HEADERS.offset], '1');
  t.equal(h[DEAD_LETTER_HEADERS.errorClass], 'RangeError');
  t.equal(h[DEAD_LETTER_HEADERS.errorMessage], 'cannot parse');
  t.equal(h[DEAD_LETTER_HEADERS.errorCode], 'E_PARSE');
  t.equal(h[DEAD_LETTER_HEADERS.attempts], '3', 'one call and two retries');

  const event = log.find((e) => e.deadLettered !== undefined);
  t.match(event.deadLettered, { topic: TOPIC, partition: 0, heartbeat: Function }, "'deadLettered' with eachMessage's payload");
  t.equal(event.deadLettered.message, fed[1], '... its message the one the batch carried');
  t.ok(event.err instanceof HandlerError, '... and the HandlerError');
  t.equal(event.err.attempts, 3);
  t.same(c.metrics().failures, { retries: 2, deadLettered: 1, skipped: 0, deadLetterFailures: 0, parked: 0 });
  await c.disconnect();
});

t.test("onFailure: eachMessage's payload and the attempts; 'skip' commits past without a send; a bad answer stops the run", async (t) => {
  const asked = [];
  const onFailure = (payload, error, attempts) => {
    asked.push({ payload, error, attempts });
    return attempts < 2 ? 'retry' : 'skip';
  };
  const { f, c, producer, log } = await started({ onFailure }, (p) => {
    if (p.message.offset === '1') throw poison();
  });
  const fed = [msg(0, 'a'), msg(1, 'a'), msg(2, 'a')];
  await feed(f.consumer, 0, fed);
  t.ok(await until(() => f.committed.get(0)?.offset === '3'), 'committed past the skipped message');
  t.same(log, ['0:0', '0:1', '0:1', '0:2'], 'retried once, then skipped, then the next');
  t.same(asked.map((a) => a.attempts), [1, 2], 'attempts count the failed calls');
  t.match(asked[0].payload, { topic: TOPIC, partition: 0, heartbeat: Function });
  t.equal(asked[0].payload.message, fed[1], "the payload's message is the batch's");
  t.match(asked[1].error, { code: 'KDP_HANDLER_ERROR', offset: 1, attempts: 2 });
  t.equal(producer.sent.length, 0, 'nothing sent');
  t.match(c.metrics().failures, { retries: 1, skipped: 1, deadLettered: 0 });
  await c.disconnect();

  const bad = await started({ onFailure: () => 'nope' }, () => {
    throw poison();
  });
  const stopped = new Promise((resolve) => bad.c.once('stopped', resolve));
  await feed(bad.f.consumer, 0, [msg(0, 'a'), msg(1, 'b')]);
  const error = await stopped;
  t.match(error, { code: 'KDP_INVALID_VALUE', name: 'InvalidValueError' }, "'stopped' carries an InvalidValueError");
  t.equal(bad.producer.sent.length, 0, 'nothing sent');
  t.notOk(Number(bad.f.committed.get(0)?.offset ?? 0) > 0, 'nothing committed past the message');
  await bad.c.disconnect();
});

t.test('a send that keeps rejecting parks the key (warnings), other keys go on, then maxParkMs stops the run, nothing committed past it', async (t) => {
  const { f, c, producer: dlq, log } = await started({ handlerRetries: 0, retryBackoffMs: 20 }, (p) => {
    if (p.message.offset === '1') throw poison();
  }, { maxParkMs: 200 });
  const warnings = [];
  c.on('warning', (w) => warnings.push(w));
  const stopped = new Promise((resolve) => c.once('stopped', resolve));
  dlq.mode = 'reject';
  await feed(f.consumer, 0, [msg(0, 'a'), msg(1, 'a'), msg(2, 'b'), msg(3, 'a')]);
  t.ok(await until(() => warnings.length >= 1 && log.includes('0:2')), 'a warning, and the other key handled meanwhile');
  await feed(f.consumer, 0, [msg(4, 'c'), msg(5, 'b')]);
  t.ok(await until(() => log.includes('0:4') && log.includes('0:5')), 'other keys go on while it is parked');
  t.equal(c.metrics().failures.parked, 1, 'one message parked');
  const error = await stopped;
  t.ok(error instanceof DeadLetterError, `'stopped' carries a DeadLetterError (${error?.message})`);
  t.match(error, { code: 'KDP_DEAD_LETTER', deadLetterTopic: DLQ, topic: TOPIC, partition: 0, offset: 1 });
  t.ok(error.parkedMs >= 200, `parked ${error.parkedMs} ms`);
  t.ok(warnings.length >= 2 && warnings.every((w) => w instanceof DeadLetterError && w.code === 'KDP_DEAD_LETTER'), `a DeadLetterError warning per failed send (${warnings.length})`);
  t.equal(dlq.sent.length, warnings.length, 'written again after each');
  t.equal(c.metrics().failures.deadLetterFailures, warnings.length);
  t.notOk(log.includes('0:3'), "the parked key's next message never handed out");
  t.equal(f.committed.get(0)?.offset, '1', 'committed up to the parked message, not past it');
  await c.disconnect();
});

t.test('bad options: typed errors', async (t) => {
  const { consumer, admin } = fake();
  const wrap = (options) => () => wrapKafkaJsConsumer(consumer, { admin, ...options });
  t.throws(wrap({ deadLetter: { topic: DLQ } }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.producer', message: /required/ }, 'deadLetter without a producer');
  const platformaticProducer = { send: async () => {}, metadata: async () => {}, close: async () => {} };
  t.throws(wrap({ deadLetter: { topic: DLQ, producer: platformaticProducer } }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.producer' },
    "an @platformatic/kafka Producer is not KafkaJS's");
  t.throws(wrap({ deadLetter: { topic: DLQ, producer: 'p' } }), { code: 'KDP_INVALID_OPTION' }, 'not an object');
  t.throws(wrap({ deadLetter: { producer: fakeProducer() } }), { code: 'KDP_INVALID_OPTION', message: /deadLetter\.topic/ }, 'no topic');
  t.throws(wrap({ retryBackoffMs: 500, retryBackoffMaxMs: 100 }), { code: 'KDP_INVALID_OPTION', message: /retryBackoffMaxMs/ }, 'a cap below the base');
  t.throws(wrap({ onFailure: 'skip' }), { code: 'KDP_INVALID_OPTION', message: /onFailure/ }, 'onFailure not a function');
  const dynamicLike = { transactionsOf: undefined, sendBatch: async () => {} };
  t.doesNotThrow(wrap({ deadLetter: { topic: DLQ, producer: dynamicLike } }), 'a DynamicProducer is taken');
  const c = wrapKafkaJsConsumer(consumer, { admin, deadLetter: { topic: DLQ, producer: fakeProducer() } });
  await c.connect();
  await t.rejects(c.subscribe({ topic: DLQ }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.topic' }, 'subscribing to the dead-letter topic');
  await t.rejects(c.subscribe({ topics: [TOPIC, DLQ] }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.topic' }, '... among others');
  await t.rejects(c.subscribe({ topics: [/^kjs-dl-/] }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.topic' }, '... or a RegExp matching it');
  await c.subscribe({ topic: TOPIC });
  await c.disconnect();
});

