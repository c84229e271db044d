'use strict';
// Every public class that takes options checks them through one schema (src/core/schema.ts):
// the same rules everywhere. No broker is needed: options are checked at construction.
const t = require('tap');
const {
  DynamicPartitioner, DynamicProducer, DynamicConsumer, Resequencer, LagMonitor, createKafkaJsPartitioner,
  DEFAULTS, PRODUCER_DEFAULTS, CONSUMER_DEFAULTS, RESEQUENCER_DEFAULTS,
} = require('../..');

const MOCK = { 'test.mock.num.brokers': 1, log_level: 0 };
const GROUP = { 'metadata.broker.list': 'localhost:1', log_level: 0, 'group.id': 'schema' };

// [class, build(options), names its options accept (from each documented defaults object / the README)]
const CLASSES = [
  ['DynamicPartitioner', (o) => new DynamicPartitioner(o).close(), Object.keys(DEFAULTS)],
  ['DynamicProducer', (o) => new DynamicProducer(MOCK, {}, o).disconnect(0), [...Object.keys(DEFAULTS), ...Object.keys(PRODUCER_DEFAULTS), 'prometheus', 'producerId', 'kafka']],
  ['DynamicConsumer', (o) => new DynamicConsumer(GROUP, {}, o), ['resequencer', ...Object.keys(CONSUMER_DEFAULTS), 'kafka']],
  ['Resequencer', (o) => new Resequencer(o), Object.keys(RESEQUENCER_DEFAULTS)],
  ['LagMonitor', (o) => new LagMonitor(GROUP, { groupId: 'g', topics: ['t'], ...o }), ['groupId', 'topics', 'intervalMs', 'holdHandoffsMs', 'penaltyGain', 'kafka']],
  ['createKafkaJsPartitioner', (o) => createKafkaJsPartitioner(o).partitioner.close(), [...Object.keys(DEFAULTS), 'orderHeaders']],
];

const error = (fn) => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return null;
};

t.test('an unknown name, an Object.prototype one included, is refused with the valid names listed', async (t) => {
  for (const [what, build, valid] of CLASSES) {
    for (const bad of ['nope', 'toString', 'constructor', 'valueOf', 'hasOwnProperty']) {
      const err = error(() => build({ [bad]: 1 }));
      t.match(err, { name: 'InvalidOptionError', code: 'KDP_INVALID_OPTION', path: `options.${bad}` }, `${what}: ${bad}`);
      t.ok(err && err.message.startsWith(`options.${bad} is not an option (valid here: `), `${what}: ${bad}: the message says so`);
      for (const name of valid) t.ok(err && err.message.includes(name), `${what}: ${bad}: ${name} listed`);
    }
  }
});

t.test('options that are not an object are refused, naming options', async (t) => {
  for (const [what, build] of CLASSES) {
    for (const bad of [null, 42, 'fast', [], true]) {
      const err = error(() => (what === 'LagMonitor' ? new LagMonitor(GROUP, bad) : build(bad)));
      t.match(err, { code: 'KDP_INVALID_OPTION', path: 'options' }, `${what}: ${JSON.stringify(bad)}`);
    }
  }
});

t.test('undefined stands for the default, in every class', async (t) => {
  for (const [what, build, valid] of CLASSES) {
    const undef = Object.fromEntries(valid.filter((n) => n !== 'groupId' && n !== 'topics').map((n) => [n, undefined]));
    t.equal(error(() => build(undef)), null, `${what}: every option undefined`);
  }
  t.same({ ...new DynamicConsumer(GROUP, {}, { batchSize: undefined }).resequencer.options }, { ...RESEQUENCER_DEFAULTS }, 'a consumer\'s resequencer gets the defaults');
  t.same({ ...new Resequencer({ maxWaitMs: undefined }).options }, { ...RESEQUENCER_DEFAULTS });
});

t.test('nested options are named by their full path', async (t) => {
  t.match(error(() => new DynamicConsumer(GROUP, {}, { resequencer: { toString: 1 } })), { path: 'options.resequencer.toString' });
  t.match(error(() => new DynamicConsumer(GROUP, {}, { resequencer: { maxChains: 0 } })), { path: 'options.resequencer.maxChains' });
  t.match(error(() => new DynamicConsumer(GROUP, {}, { resequencer: 5 })), { path: 'options.resequencer' });
  t.match(error(() => new DynamicProducer(MOCK, {}, { sketch: { wide: 1 } })), { path: 'options.sketch.wide', message: /width/ });
  t.match(error(() => createKafkaJsPartitioner({ horizon: { ms: 0 } })), { path: 'options.horizon.ms' });
  t.match(error(() => new LagMonitor(GROUP, { groupId: 'g', topics: ['a', null] })), { path: 'options.topics[1]' });
  t.equal(new DynamicConsumer(GROUP, {}, { resequencer: { maxWaitMs: 5 } }).resequencer.options.maxWaitMs, 5, 'a nested value is taken');
});

t.test('timer options stop where setTimeout / setInterval stop (2^31 - 1 ms; beyond, they fire at once)', async (t) => {
  for (const name of ['metadataRefreshMs', 'pollIntervalMs']) {
    t.match(error(() => new DynamicProducer(MOCK, {}, { [name]: 2 ** 31 })), { code: 'KDP_INVALID_OPTION', path: `options.${name}`, message: /\[\d+, 2147483647\]/ }, name);
    t.equal(error(() => new DynamicProducer(MOCK, {}, { [name]: 2 ** 31 - 1 }).disconnect(0)), null, `${name}: 2^31 - 1 is taken`);
  }
  t.match(error(() => new DynamicConsumer(GROUP, {}, { commitIntervalMs: 2 ** 31 })), { path: 'options.commitIntervalMs' });
  t.match(error(() => new LagMonitor(GROUP, { groupId: 'g', topics: ['t'], intervalMs: 2 ** 31 })), { path: 'options.intervalMs' });
});

t.test('the producer and the KafkaJS adapter hand the partitioner options on, defaults filled in once', async (t) => {
  const p = new DynamicProducer(MOCK, {}, { hotThreshold: 0.3, sketch: { width: 64 } });
  t.equal(p.partitioner.options.hotThreshold, 0.3);
  t.same(p.partitioner.options.sketch, { ...DEFAULTS.sketch, width: 64 }, 'sketch: the given width, the default depth and sampling');
  t.equal(p.partitioner.options.partitioner, 'consistent_random', "no partitioner given: librdkafka's default, not the partitioner's");
  await p.disconnect(0);
  const k = createKafkaJsPartitioner({ coolThreshold: 0.01 });
  t.equal(k.partitioner.options.coolThreshold, 0.01);
  t.equal(k.partitioner.options.partitioner, 'murmur2_random', "KafkaJS's DefaultPartitioner");
  k.partitioner.close();
  // The partitioner's own cross-checks apply to options given through the producer.
  t.match(error(() => new DynamicProducer(MOCK, {}, { coolThreshold: 0.2 })), { path: 'options.coolThreshold' });
});

t.test('the defaults objects are frozen', async (t) => {
  for (const [name, d] of Object.entries({ DEFAULTS, PRODUCER_DEFAULTS, CONSUMER_DEFAULTS, RESEQUENCER_DEFAULTS })) t.ok(Object.isFrozen(d), name);
  t.same({ ...PRODUCER_DEFAULTS }, { metadataRefreshMs: 30000, maxQueued: 100000, pollIntervalMs: 5, orderHeaders: 'spread', traceHeaders: 'keep', queuePenalty: true, engine: 'auto', nativeHandles: 2 }, 'PRODUCER_DEFAULTS: the README values');
  t.same({ ...RESEQUENCER_DEFAULTS }, { maxBufferedMessages: 10000, maxBufferedBytes: 64 * 1024 * 1024, maxWaitMs: 30000, maxChainIdleMs: 3600000, maxChains: 100000 }, 'RESEQUENCER_DEFAULTS: the values ResequencerOptions documents');
});
