'use strict';
// README "Errors": every error has a stable `code`. These are the producer's paths where a
// plain Error from node-rdkafka, librdkafka or prom-client used to come through instead:
// disconnect() or flush() after a connect() that failed, a configuration librdkafka refuses
// (an unknown property, an SDK option passed in the librdkafka configuration), and a second
// producer registering its metrics in the same prom-client Registry.
const t = require('tap');
const { DynamicProducer, KafkaError, InvalidOptionError } = require('../..');

t.test('disconnect() and flush() after a failed connect() settle without a code-less error', async (t) => {
  // Nothing listens on port 1: connect() times out.
  const p = new DynamicProducer({ 'metadata.broker.list': '127.0.0.1:1', log_level: 0 });
  const failed = await p.connect(500).then(() => null, (e) => e);
  t.ok(failed instanceof KafkaError && failed.code === 'KDP_KAFKA_ERROR', `connect() rejects with a KafkaError (got ${failed && failed.name} ${failed && failed.code})`);
  const flushed = await p.flush(200).then(() => null, (e) => e);
  t.equal(flushed, null, `flush() resolves: nothing was ever queued (got ${flushed && `${flushed.name} ${flushed.code}: ${flushed.message}`})`);
  const closed = await p.disconnect(1000).then(() => null, (e) => e);
  t.equal(closed, null, `disconnect() resolves (got ${closed && `${closed.name} ${closed.code}: ${closed.message}`})`);
  t.throws(() => p.produce('x', 'v', 'k'), { code: 'KDP_STATE' }, 'and the producer is closed');
});

t.test('flush() before connect() resolves: nothing can be queued', async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 });
  const flushed = await p.flush(200).then(() => null, (e) => e);
  t.equal(flushed, null, `flush() resolves (got ${flushed && `${flushed.name} ${flushed.code}: ${flushed.message}`})`);
});

/** The error the constructor throws, or null. */
function construct(...args) {
  try {
    new DynamicProducer(...args);
  } catch (err) {
    return err;
  }
  return null;
}

t.test('a configuration librdkafka refuses is an InvalidOptionError naming the property', async (t) => {
  const cases = [
    // [what, globalConfig, topicConfig, path]
    ['an unknown global property', { 'no.such.property': 1 }, {}, "globalConfig['no.such.property']"],
    ['an unknown topic property', {}, { 'no.such.topic.property': 1 }, "topicConfig['no.such.topic.property']"],
    ['a bad value', { 'queue.buffering.max.messages': 'many' }, {}, "globalConfig['queue.buffering.max.messages']"],
    // librdkafka names the canonical property (request.required.acks), not the alias given.
    ['a bad value under an alias', {}, { acks: 'some' }, 'globalConfig / topicConfig'],
  ];
  for (const [what, global, topic, path] of cases) {
    const e = construct({ 'test.mock.num.brokers': 1, log_level: 0, ...global }, topic);
    t.ok(e instanceof InvalidOptionError, `${what}: InvalidOptionError (got ${e && e.name}: ${e && e.message})`);
    t.equal(e && e.code, 'KDP_INVALID_OPTION', `${what}: code KDP_INVALID_OPTION`);
    t.equal(e && e.path, path, `${what}: path ${path}`);
  }
});

t.test("the SDK's options passed in the librdkafka configuration are refused, saying where they go", async (t) => {
  const cases = [
    // [what, globalConfig, topicConfig, path]
    ['partitioner options as the topic configuration', {}, { hotThreshold: 0.05, maxTopics: 8 }, "topicConfig['hotThreshold']"],
    ['a producer option in the global configuration', { pollIntervalMs: 10 }, {}, "globalConfig['pollIntervalMs']"],
  ];
  for (const [what, global, topic, path] of cases) {
    const e = construct({ 'test.mock.num.brokers': 1, log_level: 0, ...global }, topic);
    t.ok(e instanceof InvalidOptionError && e.code === 'KDP_INVALID_OPTION', `${what}: InvalidOptionError (got ${e && e.name}: ${e && e.message})`);
    t.equal(e && e.path, path, `${what}: path ${path}`);
    t.match(e && e.message, /options/, `${what}: the message points to options`);
  }
  t.equal(construct({ 'test.mock.num.brokers': 1, log_level: 0 }, { partitioner: 'murmur2' }), null,
    'partitioner, a librdkafka topic property as well, is still taken in the topic configuration');
});

t.test('two producers on one prom-client Registry: an InvalidOptionError about the Registry', async (t) => {
  let promClient = null;
  try {
    promClient = require('prom-client');
  } catch {
    // not installed: the optional peer dependency is missing
  }
  if (promClient === null) return t.skip('prom-client is not installed');
  const registry = new promClient.Registry();
  const first = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { prometheus: registry });
  const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
  const e = construct({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { prometheus: registry });
  t.ok(e instanceof InvalidOptionError, `the second producer: InvalidOptionError (got ${e && e.name}: ${e && e.message})`);
  t.equal(e && e.code, 'KDP_INVALID_OPTION', 'code KDP_INVALID_OPTION');
  t.equal(e && e.path, 'options.prometheus', 'naming options.prometheus');
  t.match(e && e.message, /Registry already has a metric named kdp_/, 'and the conflict in the Registry');
  t.same((await registry.getMetricsAsJSON()).map((m) => m.name).sort(), names, "the Registry still holds the first producer's metrics, and only them");

  // A user's own metric of one of the later names: nothing of ours is left half registered.
  const other = new promClient.Registry();
  new promClient.Gauge({ name: 'kdp_held', help: 'the application\'s own', registers: [other] });
  const half = construct({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { prometheus: other });
  t.ok(half instanceof InvalidOptionError, 'a clash on a later name: InvalidOptionError');
  t.same((await other.getMetricsAsJSON()).map((m) => m.name), ['kdp_held'], "none of the producer's gauges left in that Registry");

  // Once the first producer is disconnected, its metrics leave the Registry and another can register.
  await first.disconnect();
  t.same(await registry.getMetricsAsJSON(), [], 'disconnect() takes the metrics out of the Registry');
  t.equal(construct({ 'test.mock.num.brokers': 1, log_level: 0 }, {}, { prometheus: registry }), null, 'a new producer then registers');
});
