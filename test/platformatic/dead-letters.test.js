'use strict';
// wrapPlatformaticConsumer's failure options over a fake @platformatic/kafka Consumer and MessagesStream (lib/fakes.js,
// as consumer.test.js's) and a fake @platformatic/kafka Producer that records what it is sent: a message the handler keeps
// failing on is sent to the dead-letter topic with its key, value, headers (a Map) and origin, its key's next message
// handed out only once that send resolved, the commit passing it, a 'deadLettered' event with the stream's message;
// onFailure's message, attempts and verdicts; a send that keeps rejecting parks the key (warnings, other keys go on) until
// maxParkMs stops the run with a DeadLetterError, nothing committed past it; bad options refused with typed errors.
// Several calls at once (concurrency 4): with one, a key waiting on its dead letter holds the only call, and every key waits.

const t = require('tap');
const { wrapPlatformaticConsumer, DEAD_LETTER_HEADERS, DeadLetterError, HandlerError, encodeOrderHeader, ORDER_ANCHOR } = require('../..');
const { TOPIC, FakeConsumer, streamMessage } = require('./lib/fakes');

const DLQ = 't-dlq';
const PRODUCER_ID = '0123456789abcdef';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fake @platformatic/kafka Producer: records each send(); `mode` 'ok' resolves it, 'hold' keeps it open (holds), 'reject' rejects it. */
function fakeProducer() {
  const p = {
    sent: [],
    mode: 'ok',
    holds: [],
    async metadata() {},
    async close() {},
    send(options) {
      p.sent.push(options);
      if (p.mode === 'reject') return Promise.reject(new Error('broker down'));
      if (p.mode === 'hold') return new Promise((resolve) => p.holds.push(resolve));
      return Promise.resolve({ offsets: [] });
    },
  };
  return p;
}

/** A stream message of partition 0; `headers`: [name, value] pairs of text. */
function message(offset, key, headers = []) {
  const headerEntries = headers.map(([name, value]) => [Buffer.from(name), Buffer.from(value)]);
  return streamMessage(0, offset, key, `${key}@${offset}`, headerEntries);
}

async function until(condition, ms = 2000) {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await sleep(2);
  return condition();
}

/**
 * A wrapper running over a fake consumer, dead letters to a fake producer (`park`: more of deadLetter); `handler(message)`
 * per call, each call and 'deadLettered' event logged in `log`.
 */
async function started(options, handler = () => {}, park = {}) {
  const consumer = new FakeConsumer([0]);
  const producer = fakeProducer();
  const log = [];
  const dc = wrapPlatformaticConsumer(consumer, { commitIntervalMs: 10, retryBackoffMs: 1, deadLetter: { topic: DLQ, producer, ...park }, ...options });
  dc.on('deadLettered', (m, err) => log.push({ deadLettered: m, err }));
  await dc.run({
    topics: [TOPIC],
    concurrency: 4,
    handler: async (m) => {
      log.push(Number(m.offset));
      await handler(m);
    },
  });
  const feed = (list) => {
    for (const m of list) consumer.stream.emit('data', m);
  };
  return { consumer, producer, dc, log, feed };
}

/** A kdp-order header's value (the first message of its chain). */
const ORDER = encodeOrderHeader(ORDER_ANCHOR, PRODUCER_ID, 1, 0, 1, 1, 0);

const poison = () => Object.assign(new RangeError('cannot parse'), { code: 'E_PARSE' });

/** A Map of headers as an object of text names and values. */
const text = (map) => Object.fromEntries([...map].map(([name, value]) => [String(name), String(value)]));

t.test('a message the handler keeps failing on is sent to the dead-letter topic; its key goes on once the send resolved', async (t) => {
  const { consumer, producer, dc, log, feed } = await started({ handlerRetries: 2 }, (m) => {
    if (m.offset === 1n) throw poison();
  });
  producer.mode = 'hold';
  const fed = [message(0, 'a'), message(1, 'a', [['origin', 'h1'], ['kdp-order', ORDER]]), message(2, 'b'), message(3, 'a'), message(4, 'b')];
  feed(fed);
  t.ok(await until(() => producer.sent.length === 1), 'sent once its retries were used up');
  await sleep(40);
  const calls = log.filter((e) => typeof e === 'number');
  t.equal(calls.filter((o) => o === 1).length, 3, 'one call and two retries');
  t.ok(calls.includes(2) && calls.includes(4), "another key's messages handled while the send is open");
  t.notOk(calls.includes(3), "... the key's next one not");
  t.equal(consumer.committed(0), 1, 'committed below the message while its send is open');
  log.push('send resolved');
  for (const release of producer.holds) release({ offsets: [] });
  t.ok(await until(() => log.includes(3)), "then the key's next message");
  const deadLettered = log.findIndex((e) => e.deadLettered !== undefined);
  t.ok(log.indexOf('send resolved') < deadLettered && deadLettered < log.indexOf(3), "'deadLettered' after the send resolved, before the key's next message");
  t.ok(await until(() => consumer.committed(0) === 5), 'the commit passes the dead-lettered offset');

  const [{ messages }] = producer.sent;
  t.equal(messages.length, 1);
  const [letter] = messages;
  t.equal(letter.topic, DLQ, 'to the dead-letter topic');
  t.same(letter.key, Buffer.from('a'), 'its key');
  t.same(letter.value, Buffer.from('a@1'), 'its value');
  t.ok(letter.headers instanceof Map, 'headers in a Map');
  t.same(text(letter.headers), {
    origin: 'h1',
    [DEAD_LETTER_HEADERS.order]: ORDER,
    [DEAD_LETTER_HEADERS.topic]: TOPIC,
    [DEAD_LETTER_HEADERS.partition]: '0',
    [DEAD_LETTER_HEADERS.offset]: '1',
    [DEAD_LETTER_HEADERS.errorClass]: 'RangeError',
    [DEAD_LETTER_HEADERS.errorMessage]: 'cannot parse',
    [DEAD_LETTER_HEADERS.errorCode]: 'E_PARSE',
    [DEAD_LETTER_HEADERS.attempts]: '3',
  }, 'its own headers (kdp-order renamed) and its origin');

  const event = log.find((e) => e.deadLettered !== undefined);
  t.equal(event.deadLettered, fed[1], "'deadLettered' with the stream's message");
  t.ok(event.err instanceof HandlerError, '... and the HandlerError');
  t.equal(event.err.attempts, 3);
  t.same(dc.metrics().failures, { retries: 2, deadLettered: 1, skipped: 0, deadLetterFailures: 0, parked: 0 });
  await dc.stop();
});

t.test("onFailure: the stream's message and the attempts; 'skip' commits past without a send; a bad answer stops the run", async (t) => {
  const asked = [];
  const onFailure = (m, error, attempts) => {
    asked.push({ m, error, attempts });
    return attempts < 2 ? 'retry' : 'skip';
  };
  const { consumer, producer, dc, log, feed } = await started({ onFailure }, (m) => {
    if (m.offset === 1n) throw poison();
  });
  const fed = [message(0, 'a'), message(1, 'a'), message(2, 'a')];
  feed(fed);
  t.ok(await until(() => consumer.committed(0) === 3), 'committed past the skipped message');
  t.same(log, [0, 1, 1, 2], 'retried once, then skipped, then the next');
  t.same(asked.map((a) => a.attempts), [1, 2], 'attempts count the failed calls');
  t.equal(asked[0].m, fed[1], "onFailure gets the stream's message");
  t.match(asked[1].error, { code: 'KDP_HANDLER_ERROR', offset: 1, attempts: 2 });
  t.equal(producer.sent.length, 0, 'nothing sent');
  t.match(dc.metrics().failures, { retries: 1, skipped: 1, deadLettered: 0 });
  await dc.stop();

  const bad = await started({ onFailure: () => 'nope' }, () => {
    throw poison();
  });
  const stopped = new Promise((resolve) => bad.dc.once('stopped', resolve));
  bad.feed([message(0, 'a'), message(1, 'b')]);
  const error = await stopped;
  t.match(error, { code: 'KDP_INVALID_VALUE', name: 'InvalidValueError' }, "'stopped' carries an InvalidValueError");
  t.equal(bad.producer.sent.length, 0, 'nothing sent');
  t.ok(bad.consumer.committed(0) <= 0, 'nothing committed past the message');
});

t.test('a send that keeps rejecting parks the key (warnings), other keys go on, then maxParkMs stops the run, nothing committed past it', async (t) => {
  const { consumer, producer, dc, log, feed } = await started({ handlerRetries: 0, retryBackoffMs: 20 }, (m) => {
    if (m.offset === 1n) throw poison();
  }, { maxParkMs: 200 });
  producer.mode = 'reject';
  const warnings = [];
  dc.on('warning', (w) => warnings.push(w));
  const stopped = new Promise((resolve) => dc.once('stopped', resolve));
  feed([message(0, 'a'), message(1, 'a'), message(2, 'b'), message(3, 'a')]);
  t.ok(await until(() => warnings.length >= 1 && log.includes(2)), 'a warning, and the other key handled meanwhile');
  feed([message(4, 'c'), message(5, 'b')]);
  t.ok(await until(() => log.includes(4) && log.includes(5)), 'other keys go on while it is parked');
  t.equal(dc.metrics().failures.parked, 1, 'one message parked');
  const error = await stopped;
  t.ok(error instanceof DeadLetterError, `'stopped' carries a DeadLetterError (${error?.message})`);
  t.match(error, { code: 'KDP_DEAD_LETTER', deadLetterTopic: DLQ, topic: TOPIC, partition: 0, offset: 1 });
  t.ok(error.parkedMs >= 200, `parked ${error.parkedMs} ms`);
  t.ok(warnings.length >= 2 && warnings.every((w) => w instanceof DeadLetterError && w.code === 'KDP_DEAD_LETTER'), `a DeadLetterError warning per failed send (${warnings.length})`);
  t.equal(producer.sent.length, warnings.length, 'written again after each');
  t.equal(dc.metrics().failures.deadLetterFailures, warnings.length);
  t.notOk(log.includes(3), "the parked key's next message never handed out");
  t.equal(consumer.committed(0), 1, 'committed up to the parked message, not past it');
  t.ok(consumer.stream.closed, 'the stream closed');
});

t.test('bad options: typed errors', async (t) => {
  const wrap = (options) => () => wrapPlatformaticConsumer(new FakeConsumer([0]), options);
  t.throws(wrap({ deadLetter: { topic: DLQ } }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.producer', message: /required/ }, 'deadLetter without a producer');
  const kafkaJsProducer = { send: async () => {}, connect: async () => {}, disconnect: async () => {} };
  t.throws(wrap({ deadLetter: { topic: DLQ, producer: kafkaJsProducer } }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.producer' },
    "a KafkaJS producer is not @platformatic/kafka's");
  t.throws(wrap({ deadLetter: { topic: DLQ, producer: 'p' } }), { code: 'KDP_INVALID_OPTION' }, 'not an object');
  t.throws(wrap({ deadLetter: { producer: fakeProducer() } }), { code: 'KDP_INVALID_OPTION', message: /deadLetter\.topic/ }, 'no topic');
  t.throws(wrap({ deadLetter: { topic: DLQ, producer: fakeProducer(), maxParkMs: -1 } }), { code: 'KDP_INVALID_OPTION', message: /maxParkMs/ }, 'a negative park bound');
  t.throws(wrap({ retryBackoffMs: 500, retryBackoffMaxMs: 100 }), { code: 'KDP_INVALID_OPTION', message: /retryBackoffMaxMs/ }, 'a cap below the base');
  t.throws(wrap({ onFailure: 'skip' }), { code: 'KDP_INVALID_OPTION', message: /onFailure/ }, 'onFailure not a function');
  const dynamicLike = { transactionsOf: undefined, sendBatch: async () => {} };
  t.doesNotThrow(wrap({ deadLetter: { topic: DLQ, producer: dynamicLike } }), 'a DynamicProducer is taken');
  const dc = wrapPlatformaticConsumer(new FakeConsumer([0]), { deadLetter: { topic: DLQ, producer: fakeProducer() } });
  await t.rejects(dc.run({ topics: [DLQ], handler: () => {} }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.topic' }, 'running on the dead-letter topic');
  await t.rejects(dc.run({ topics: [TOPIC, DLQ], handler: () => {} }), { code: 'KDP_INVALID_OPTION', path: 'options.deadLetter.topic' }, '... among others');
  await dc.run({ topics: [TOPIC], handler: () => {} });
  await dc.stop();
});
