'use strict';
// DynamicConsumer options, checked at construction (no broker needed), and HandlerError.
const t = require('tap');
const { DynamicConsumer, CONSUMER_DEFAULTS, HandlerError } = require('../..');

const config = { 'group.id': 'options', 'metadata.broker.list': 'localhost:1', log_level: 0 };
const make = (options) => new DynamicConsumer(config, {}, options);

t.test('defaults', async (t) => {
  // The values the README's DynamicConsumer section states.
  t.same({ ...CONSUMER_DEFAULTS }, {
    commitIntervalMs: 250, batchSize: 500, maxPending: 5000, fetchTimeoutMs: 100, handlerRetries: 2, retryBackoffMs: 100,
    concurrency: 1, ordering: 'key', revokeTimeoutMs: 10000, handlerBatchSize: 100, groupOrder: 'auto',
  });
  t.equal(make({ engine: 'native' }).groupOrder, 'wait', "groupOrder 'auto' is 'wait' on the native engine (its commits carry the records)");
  t.equal(make({ engine: 'client' }).groupOrder, 'flag', "and 'flag' on engine 'client' (node-rdkafka commits no metadata)");
  t.equal(make({ engine: 'native', groupOrder: 'flag' }).groupOrder, 'flag', 'as given');
  t.equal(make({ engine: 'native', groupOrder: 'wait' }).groupOrder, 'wait', 'as given');
});

t.test('fetchTimeoutMs is handed to the client as the consume timeout', async (t) => {
  // node-rdkafka 3.6.1 lib/kafka-consumer.js: setDefaultConsumeTimeout() stores _consumeTimeout,
  // which consume(n, cb) passes to the native call (1000 when never set); the native engine's
  // consumer keeps it as consumeTimeout.
  const timeout = (c) => (c.engine === 'native' ? c.client.consumeTimeout : c.client._consumeTimeout);
  t.equal(timeout(make()), 100, 'the default');
  t.equal(timeout(make({ fetchTimeoutMs: 250 })), 250);
  t.equal(timeout(make({ fetchTimeoutMs: undefined })), 100, 'undefined = absent');
});

t.test('bad values name the option', async (t) => {
  const rows = [
    // [option, value]: each outside its range [min, 2^31 - 1] or not an integer
    ['fetchTimeoutMs', 0],
    ['fetchTimeoutMs', -1],
    ['fetchTimeoutMs', 1.5],
    ['fetchTimeoutMs', '100'],
    ['fetchTimeoutMs', NaN],
    ['fetchTimeoutMs', Infinity],
    ['fetchTimeoutMs', 2 ** 31], // setTimeout fires at once past 2^31 - 1
    ['fetchTimeoutMs', null],
    ['handlerRetries', -1],
    ['handlerRetries', 0.5],
    ['handlerRetries', '2'],
    ['retryBackoffMs', -1],
    ['retryBackoffMs', 2 ** 31],
    ['commitIntervalMs', 0],
    ['batchSize', 0],
    ['maxPending', 2.5],
    ['concurrency', 0],
    ['concurrency', 1.5],
    ['concurrency', 65537],
    ['concurrency', '8'],
    ['ordering', 'keys'],
    ['ordering', null],
    ['revokeTimeoutMs', -1],
    ['handlerBatchSize', 0],
  ];
  for (const [name, value] of rows) {
    t.throws(() => make({ [name]: value }), { code: 'KDP_INVALID_OPTION', name: 'InvalidOptionError', path: `options.${name}` }, `${name}: ${String(value)}`);
  }
});

t.test('the edges of each range are accepted', async (t) => {
  t.doesNotThrow(() => make({ handlerRetries: 0, retryBackoffMs: 0, fetchTimeoutMs: 1 }), 'retries off, no backoff, 1 ms');
  t.doesNotThrow(() => make({ fetchTimeoutMs: 2 ** 31 - 1, retryBackoffMs: 2 ** 31 - 1, handlerRetries: 2 ** 31 - 1 }));
  for (const ordering of ['key', 'partition', 'none']) t.doesNotThrow(() => make({ concurrency: 65536, ordering, revokeTimeoutMs: 0 }), `concurrency 65536, ordering '${ordering}'`);
});

t.test('unknown options are named, nested ones with their full path', async (t) => {
  t.throws(() => make({ fetchTimeout: 100 }), { code: 'KDP_INVALID_OPTION', path: 'options.fetchTimeout' });
  t.throws(() => make({ toString: 5 }), { code: 'KDP_INVALID_OPTION', path: 'options.toString' }, 'an inherited name is no option');
  t.throws(() => make({ constructor: 1 }), { code: 'KDP_INVALID_OPTION', path: 'options.constructor' });
  t.throws(() => make({ retries: 2 }), { code: 'KDP_INVALID_OPTION', path: 'options.retries', message: /handlerRetries/ });
  t.throws(() => make({ resequencer: { maxWait: 1 } }), { code: 'KDP_INVALID_OPTION', path: 'options.resequencer.maxWait', message: /^options\.resequencer\.maxWait / });
  t.throws(() => make({ resequencer: { maxWaitMs: -1 } }), { code: 'KDP_INVALID_OPTION', path: 'options.resequencer.maxWaitMs' });
  t.throws(() => make(null), { code: 'KDP_INVALID_OPTION' });
});

t.test('stop() and connect() refuse a timeout that is not a number >= 0 (connect(): finite), whatever the state', async (t) => {
  const c = make({});
  for (const bad of ['100', null]) {
    await t.rejects(c.stop(bad), { code: 'KDP_INVALID_ARG_TYPE', name: 'InvalidArgTypeError', argument: 'timeoutMs' }, `stop(${String(bad)}): not a number`);
    await t.rejects(c.connect(bad), { code: 'KDP_INVALID_ARG_TYPE', argument: 'timeoutMs' }, `connect(${String(bad)}): not a number`);
  }
  for (const bad of [-1, Number.NaN]) {
    await t.rejects(c.stop(bad), { code: 'KDP_OUT_OF_RANGE', name: 'OutOfRangeError', argument: 'timeoutMs' }, `stop(${String(bad)}): out of range`);
    await t.rejects(c.connect(bad), { code: 'KDP_OUT_OF_RANGE', argument: 'timeoutMs' }, `connect(${String(bad)}): out of range`);
  }
  await t.rejects(c.connect(Infinity), { code: 'KDP_OUT_OF_RANGE', argument: 'timeoutMs' }, 'connect(Infinity): a connect must end');
  await t.resolves(c.stop(0), 'stop(0) of a consumer never connected');
  await t.resolves(c.stop(Infinity), 'stop(Infinity): no limit');
  await t.resolves(c.stop(), 'stop() with the default timeout');
});

t.test('auto commit is refused', async (t) => {
  t.throws(() => new DynamicConsumer({ ...config, 'enable.auto.commit': true }), { code: 'KDP_INVALID_OPTION', path: "globalConfig['enable.auto.commit']" });
});

t.test('HandlerError carries the failed message\'s place and the cause', async (t) => {
  const cause = new Error('boom');
  const e = new HandlerError('orders', 3, 42, 2, cause);
  t.ok(e instanceof Error);
  t.equal(e.code, 'KDP_HANDLER_ERROR');
  t.equal(e.name, 'HandlerError');
  t.equal(e.cause, cause);
  t.same([e.topic, e.partition, e.offset, e.attempts], ['orders', 3, 42, 2]);
  t.match(e.message, /orders \[3\] offset 42 .*boom/);
  t.match(new HandlerError('t', 0, 0, 1, 'text').message, /"text"/, 'a thrown non-Error is described');
});
