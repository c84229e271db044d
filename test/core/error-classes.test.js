'use strict';
// README "Errors": every error class the package exports is a KdpError with a stable, distinct
// `code`; the argument and option errors are also TypeErrors / RangeErrors. Then paths where a
// plain Error from node-rdkafka / librdkafka used to come through, or bad input was taken.
const t = require('tap');
const kdp = require('../..');

const { KdpError, LagMonitor, DynamicConsumer, Resequencer, encodeOrderHeader, ORDER_SPREAD } = kdp;

// One way to build each exported error class, and the code and built-in parent it documents.
const ROWS = {
  InvalidArgTypeError: [['key', 'a string', 42], 'KDP_INVALID_ARG_TYPE', TypeError],
  OutOfRangeError: [['numPartitions', 'an integer >= 1', 0], 'KDP_OUT_OF_RANGE', RangeError],
  InvalidValueError: [['partitioner', ['murmur2'], 'x'], 'KDP_INVALID_VALUE', RangeError],
  InvalidOptionError: [['options.x', 'a number', 'y'], 'KDP_INVALID_OPTION', TypeError],
  KafkaError: [['produce: Broker: Message size too large', 10, new Error('raw')], 'KDP_KAFKA_ERROR', Error],
  StateError: [['connect() first'], 'KDP_STATE', Error],
  UndeliveredError: [['flush timed out', 3], 'KDP_UNDELIVERED', Error],
  BatchError: [[[{ topic: 't', partition: 0, offset: 7 }, new Error('too large')], 1], 'KDP_BATCH_FAILED', Error],
  HandlerError: [['t', 0, 5, 1, new Error('boom')], 'KDP_HANDLER_ERROR', Error],
  CallbackError: [['options.spreadable', new Error('boom')], 'KDP_CALLBACK_ERROR', Error],
  TopicCapacityError: [['orders', 64], 'KDP_TOPIC_CAPACITY', Error],
  TransactionError: [['commitTransaction(): fenced', 'fatal', -144, new Error('raw')], 'KDP_TRANSACTION', Error],
  DeadLetterError: [['dlq', 't', 0, 5, 60_000, new (require('../..').HandlerError)('t', 0, 5, 3, new Error('boom')), new Error('unknown topic')], 'KDP_DEAD_LETTER', Error],
  InternalError: [['WebAssembly core aborted'], 'KDP_INTERNAL', Error],
};

const exported = Object.entries(kdp)
  .filter(([name, value]) => typeof value === 'function' && value.prototype instanceof Error && name !== 'KdpError')
  .map(([name]) => name)
  .sort();

t.test('the table covers every exported error class', async (t) => {
  t.same(exported, Object.keys(ROWS).sort());
});

t.test('every exported error class is a KdpError with its own non-empty code', async (t) => {
  const codes = new Set();
  for (const name of exported) {
    const [args, code, parent] = ROWS[name];
    const err = new kdp[name](...args);
    t.ok(err instanceof KdpError, `${name} instanceof KdpError`);
    t.ok(err instanceof parent, `${name} instanceof ${parent.name}`);
    t.ok(err instanceof kdp[name], `${name} instanceof itself`);
    t.equal(err.name, name, `${name}.name`);
    t.equal(err.code, code, `${name}.code`);
    t.match(err.code, /^KDP_[A-Z_]+$/, `${name}: a KDP_ code`);
    t.ok(err.message.length > 0, `${name}: a message`);
    codes.add(err.code);
  }
  t.equal(codes.size, exported.length, 'no two classes share a code');
});

t.test('instanceof KdpError is false for what is not ours', async (t) => {
  for (const [what, value] of [
    ['Error', new Error('x')], ['TypeError', new TypeError('x')], ['RangeError', new RangeError('x')],
    ['a look-alike object', { code: 'KDP_STATE', name: 'StateError', message: 'x' }], ['null', null], ['a string', 'KDP_STATE'],
  ]) {
    t.notOk(value instanceof KdpError, what);
  }
  t.notOk(new kdp.StateError('x') instanceof kdp.KafkaError, 'one class is not another (subclasses test the prototype chain)');
  t.notOk(new kdp.InvalidOptionError('p', 'e', 1) instanceof RangeError, 'InvalidOptionError is a TypeError, not a RangeError');
});

t.test('wrapped errors keep what was thrown as `cause`', async (t) => {
  const raw = new Error('Local: Broker transport failure');
  t.equal(new kdp.KafkaError('connect: x', -195, raw).cause, raw, 'KafkaError');
  t.equal(new kdp.InvalidOptionError('p', 'e', 1, 'm', raw).cause, raw, 'InvalidOptionError');
  t.equal(new kdp.InvalidOptionError('p', 'e', 1).cause, undefined, 'none when there was none');
});

const config = { 'metadata.broker.list': 'localhost:1', log_level: 0 };

t.test('a configuration librdkafka refuses, in the consumers: an InvalidOptionError with the librdkafka error as cause', async (t) => {
  // These threw node-rdkafka's plain Error ('No such configuration property: ...').
  const consumer = t.throws(() => new DynamicConsumer({ ...config, 'group.id': 'g', 'no.such.property': 1 }));
  t.match(consumer, { name: 'InvalidOptionError', code: 'KDP_INVALID_OPTION', path: "globalConfig['no.such.property']" });
  t.ok(consumer.cause instanceof Error && /no\.such\.property/.test(consumer.cause.message), 'cause: the error of node-rdkafka');
  const monitor = t.throws(() => new LagMonitor({ ...config, 'no.such.property': 1 }, { groupId: 'g', topics: ['t'] }));
  t.match(monitor, { name: 'InvalidOptionError', code: 'KDP_INVALID_OPTION', path: "globalConfig['no.such.property']" });
  t.throws(() => new DynamicConsumer({ ...config, 'group.id': 'g' }, 'x'), { code: 'KDP_INVALID_ARG_TYPE', argument: 'topicConfig' });
});

t.test("LagMonitor.read() rejects with a KafkaError, not node-rdkafka's plain Error", async (t) => {
  const monitor = new LagMonitor(config, { groupId: 'g', topics: ['t'] });
  // Never connected: node-rdkafka answers 'Client is disconnected'.
  const err = await monitor.read().then(() => null, (e) => e);
  t.ok(err instanceof kdp.KafkaError, `a KafkaError (got ${err && err.name})`);
  t.equal(err && err.code, 'KDP_KAFKA_ERROR');
  t.ok(err && err.cause instanceof Error, 'the original as cause');
  t.match(err && err.message, /^metadata: /, 'saying what failed');
});

t.test('encodeOrderHeader refuses what would write a header no consumer reads', async (t) => {
  const id = '0123456789abcdef';
  t.throws(() => encodeOrderHeader(99, id, 1, 0, 2, 4, 0), { code: 'KDP_OUT_OF_RANGE', argument: 'kind' }, 'an unknown kind (wrote "undefined")');
  t.throws(() => encodeOrderHeader(ORDER_SPREAD, 7, 1, 0, 2, 4, 0), { code: 'KDP_INVALID_ARG_TYPE', argument: 'producerId' }, 'a number id (threw a plain RangeError)');
  t.throws(() => encodeOrderHeader(ORDER_SPREAD, 'xyz', 1, 0, 2, 4, 0), { code: 'KDP_INVALID_ARG_TYPE', argument: 'producerId' });
  t.throws(() => encodeOrderHeader(ORDER_SPREAD, id, 1.5, 0, 2, 4, 0), { code: 'KDP_OUT_OF_RANGE', argument: 'sequence' });
  t.throws(() => encodeOrderHeader(ORDER_SPREAD, id, 2, '1', 2, 4, 0), { code: 'KDP_INVALID_ARG_TYPE', argument: 'previous' });
  t.throws(() => encodeOrderHeader(ORDER_SPREAD, id, 2, 1, 0, 4, 0), { code: 'KDP_OUT_OF_RANGE', argument: 'width' });
  // The documented example (README "Order headers").
  t.equal(encodeOrderHeader(ORDER_SPREAD, Buffer.from(id, 'hex'), 42, 41, 3, 12, 0, 7), `2;s;${id};42;41;3;12;0;7`);
});

t.test('the Resequencer takes no inherited name for an option', async (t) => {
  // `name in defaults` took toString for an option, and kept it.
  t.throws(() => new Resequencer({ toString: 1 }), { code: 'KDP_INVALID_OPTION', path: 'options.toString' });
  t.throws(() => new Resequencer({ hasOwnProperty: 1 }), { code: 'KDP_INVALID_OPTION', path: 'options.hasOwnProperty' });
});

t.test("prom-client's own refusal of a gauge is an InvalidOptionError, with prom-client's error as cause", async (t) => {
  let promClient = null;
  try {
    promClient = require('prom-client');
  } catch {
    // not installed: the optional peer dependency is missing
  }
  if (promClient === null) return t.skip('prom-client is not installed');
  const refusal = new Error('this Registry takes no gauges');
  // A Registry that refuses every metric (prom-client's Gauge constructor registers itself: registerMetric).
  class Refusing extends promClient.Registry {
    registerMetric() {
      throw refusal;
    }
  }
  const registry = new Refusing();
  const err = error(() => new kdp.DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { prometheus: registry }));
  t.match(err, { name: 'InvalidOptionError', code: 'KDP_INVALID_OPTION', path: 'options.prometheus' });
  t.equal(err && err.cause, refusal, 'cause: what prom-client threw');
  t.same(await registry.getMetricsAsJSON(), [], 'nothing of ours left in it');
});

function error(fn) {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return null;
}
