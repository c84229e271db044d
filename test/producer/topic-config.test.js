'use strict';
// Configuration: topic-level librdkafka properties given in the global configuration move to
// the topic configuration (node-rdkafka reads them only there); the base partitioner comes
// from options.partitioner or topicConfig.partitioner (which must agree), else librdkafka's
// default; anything else is an InvalidOptionError at construction.
const t = require('tap');
const { DynamicProducer, partitionForKey, InvalidOptionError } = require('../..');
const { brokersOf, consumeAll } = require('./lib/helpers');

const MOCK = { 'test.mock.num.brokers': 3, log_level: 3 };

t.test('acks and partitioner given globally end up in the topic configuration, and librdkafka uses them', async (t) => {
  // maxQueued 2: messages of a topic whose count is unknown go to librdkafka at once (none can wait for it here).
  const p = new DynamicProducer({ ...MOCK, acks: 'all', partitioner: 'murmur2', 'message.timeout.ms': 20000 }, {}, { maxQueued: 2 });
  t.teardown(() => p.disconnect().catch(() => {}));
  t.match(p.client.topicConfig, { acks: 'all', partitioner: 'murmur2', 'message.timeout.ms': 20000 }, 'in p.client.topicConfig');
  t.notOk('acks' in p.client.globalConfig || 'partitioner' in p.client.globalConfig || 'message.timeout.ms' in p.client.globalConfig,
    'and not left in p.client.globalConfig');
  t.equal(p.client.globalConfig['test.mock.num.brokers'], 3, 'global properties stay global');
  t.equal(p.partitioner.options.partitioner, 'murmur2', 'murmur2 is the base partitioner');
  // Behaviour: messages produced before the partition count is known are placed by
  // librdkafka. With murmur2 (not the default consistent_random) they must follow murmur2,
  // null keys included (murmur2 hashes a null key as the empty key).
  await p.connect();
  const keys = Array.from({ length: 400 }, (_, i) => (i % 50 === 0 ? null : `cfg-${i}`));
  const differ = keys.filter((k) => k !== null && partitionForKey(k, 4, 'murmur2') !== partitionForKey(k, 4, 'consistent_random')).length;
  t.ok(differ > 100, `${differ} keys where murmur2 and consistent_random disagree`);
  keys.forEach((k, i) => p.produce('cfg-topic', String(i), k));
  await p.flush(10000);
  const read = await consumeAll(await brokersOf(p.client), 'cfg-topic', keys.length);
  const wrong = read.messages.filter((m) => m.partition !== partitionForKey(keys[Number(m.value.toString())], 4, 'murmur2'));
  t.equal(wrong.length, 0, "every message (null keys too) on murmur2's partition");
});

t.test('a topic property given in both configurations must agree', async (t) => {
  t.throws(() => new DynamicProducer({ ...MOCK, partitioner: 'murmur2' }, { partitioner: 'fnv1a' }),
    { name: 'InvalidOptionError', code: 'KDP_INVALID_OPTION' }, 'global partitioner murmur2, topic fnv1a');
  t.throws(() => new DynamicProducer({ ...MOCK, acks: 'all' }, { acks: 1 }), InvalidOptionError, 'global acks all, topic acks 1');
  const p = new DynamicProducer({ ...MOCK, acks: 'all' }, { acks: 'all' });
  t.equal(p.client.topicConfig.acks, 'all', 'equal values are accepted');
});

t.test('options.partitioner and topicConfig.partitioner', async (t) => {
  const e = (() => { try { new DynamicProducer(MOCK, { partitioner: 'murmur2' }, { partitioner: 'fnv1a' }); } catch (err) { return err; } return null; })();
  t.ok(e instanceof InvalidOptionError, 'conflicting: InvalidOptionError');
  t.equal(e && e.code, 'KDP_INVALID_OPTION', 'code KDP_INVALID_OPTION');
  t.match(e && e.message, /murmur2/, 'naming the topic configuration value');
  const agree = new DynamicProducer(MOCK, { partitioner: 'fnv1a' }, { partitioner: 'fnv1a' });
  t.equal(agree.partitioner.options.partitioner, 'fnv1a', 'agreeing: accepted');
  const fromOptions = new DynamicProducer(MOCK, {}, { partitioner: 'consistent' });
  t.equal(fromOptions.partitioner.options.partitioner, 'consistent', 'options.partitioner alone is the base');
  t.equal(fromOptions.client.topicConfig.partitioner, 'consistent', 'and librdkafka is told (topic configuration)');
  const neither = new DynamicProducer(MOCK);
  t.equal(neither.partitioner.options.partitioner, 'consistent_random', "neither: librdkafka's default, consistent_random");
  t.equal(neither.client.topicConfig.partitioner, 'consistent_random', 'set explicitly in the topic configuration');
});

t.test('unknown partitioners and bad producer options are InvalidOptionErrors', async (t) => {
  const cases = [
    ['options.partitioner random', [MOCK, {}, { partitioner: 'random' }]],
    ['topicConfig.partitioner random', [MOCK, { partitioner: 'random' }]],
    ['global partitioner random', [{ ...MOCK, partitioner: 'random' }]],
    ['topicConfig.partitioner murmur2 + options random', [MOCK, { partitioner: 'murmur2' }, { partitioner: 'random' }]],
    ['partitioner 42', [MOCK, {}, { partitioner: 42 }]],
    ['maxQueued 0', [MOCK, {}, { maxQueued: 0 }]],
    ['maxQueued 1.5', [MOCK, {}, { maxQueued: 1.5 }]],
    ['pollIntervalMs -1', [MOCK, {}, { pollIntervalMs: -1 }]],
    ['metadataRefreshMs 50', [MOCK, {}, { metadataRefreshMs: 50 }]],
    ["orderHeaders 'all'", [MOCK, {}, { orderHeaders: 'all' }]],
    ["queuePenalty 'yes'", [MOCK, {}, { queuePenalty: 'yes' }]],
    ['producerId of 7 bytes', [MOCK, {}, { producerId: Buffer.alloc(7) }]],
    ['producerId a string', [MOCK, {}, { producerId: '01234567' }]],
    ['an unknown option', [MOCK, {}, { hotTreshold: 0.2 }]],
    ['hotThreshold 0', [MOCK, {}, { hotThreshold: 0 }]],
    ['options null', [MOCK, {}, null]],
  ];
  for (const [what, args] of cases) {
    let thrown = null;
    try {
      new DynamicProducer(...args);
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof InvalidOptionError && thrown.code === 'KDP_INVALID_OPTION', `${what}: InvalidOptionError (got ${thrown ? thrown.name : 'none'})`);
  }
  t.throws(() => new DynamicProducer(null), { code: 'KDP_INVALID_ARG_TYPE' }, 'globalConfig null: InvalidArgTypeError');
  t.throws(() => new DynamicProducer(MOCK, 'x'), { code: 'KDP_INVALID_ARG_TYPE' }, 'topicConfig a string: InvalidArgTypeError');
});

t.test('with dr_cb off, produce() works and send() says it needs delivery reports', async (t) => {
  const p = new DynamicProducer({ ...MOCK, dr_cb: false });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  let reports = 0;
  p.on('delivery', () => reports++);
  for (let i = 0; i < 100; i++) p.produce('cfg-nodr', String(i), `k${i}`);
  await t.rejects(p.send('cfg-nodr', 'x', 'k'), { name: 'StateError', code: 'KDP_STATE' }, 'send() rejects with StateError');
  await t.resolves(p.flush(10000), 'flush() resolves without delivery reports');
  t.equal(reports, 0, "no 'delivery' events");
  const read = await consumeAll(await brokersOf(p.client), 'cfg-nodr', 100);
  t.equal(read.total, 100, 'the produced messages are in the log');
});
