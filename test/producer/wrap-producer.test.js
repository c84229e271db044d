'use strict';
// wrapProducer() on an application's own connected node-rdkafka Producer (delivery reports
// on, its own setPollInterval): the wrapper's messages follow the existing producer's
// `partitioner`; the application keeps producing directly on it, and neither side's
// accounting is confused by the other's messages. Disconnecting the wrapper leaves the
// application's producer connected. The client library is test/lib/clients.js's
// (test/kafkajs/confluent/matrix.test.js runs this file with Confluent's).
const t = require('tap');
const { kafka } = require('../lib/clients');
const { wrapProducer, partitionForKey, StateError, InvalidArgTypeError } = require('../..');
const { mockProducer, disconnect } = require('../lib/mock-cluster');
const { zipf, sleep, knownPartitions, brokersOf, consumeAll, trackHot } = require('./lib/helpers');

const N = 4;

/**
 * The application's producer and the wrapper over it; the application produces `appPlain`
 * messages without an opaque and `appOpaque` with one, interleaved with the wrapper's
 * `sends` send()s and `produces` produce()s.
 */
async function scenario(t, { topic, appPlain, appOpaque, sends = 3000, produces = 3000 }) {
  const app = await mockProducer({ log_level: 3 }, { partitioner: 'murmur2' });
  t.teardown(() => disconnect(app));
  app.setPollInterval(5);
  const appReports = [];
  app.on('delivery-report', (err, report) => appReports.push({ err, report }));
  const w = wrapProducer(app);
  const errors = [];
  w.on('error', (e) => errors.push(e));
  const hot = trackHot(w);
  await knownPartitions(w, topic);
  let wDeliveries = 0;
  w.on('delivery', () => wDeliveries++);
  const next = zipf(400, 1.0, 8);
  const keys = Array.from({ length: sends + produces }, () => `w-${next()}`);
  const pending = [];
  const appOpaques = [];
  let a = 0;
  for (let i = 0; i < keys.length; i++) {
    if (i < sends) pending.push(w.send(topic, `w${i}`, keys[i]));
    else w.produce(topic, `w${i}`, keys[i]);
    // The application's own messages, interleaved.
    if (i % 2 === 0 && a < appPlain + appOpaque) {
      if (a < appPlain) app.produce(topic, null, Buffer.from(`a${a}`), `app-${a % 50}`);
      else {
        const opaque = { appMessage: a };
        appOpaques.push(opaque);
        app.produce(topic, null, Buffer.from(`a${a}`), `app-${a % 50}`, null, opaque);
      }
      a++;
    }
  }
  const settled = await Promise.allSettled(pending);
  await w.flush(20000);
  await sleep(200);
  return { app, w, keys, settled, appReports, appOpaques, wDeliveries: () => wDeliveries, hot, errors };
}

t.test('wrapProducer: partitioning swapped in; the application\'s own messages (no opaque) do not disturb it', async (t) => {
  const topic = 'wrap-plain';
  const s = await scenario(t, { topic, appPlain: 2000, appOpaque: 0 });
  const { w, app, keys, settled, hot } = s;
  t.equal(w.partitioner.options.partitioner, 'murmur2', "the existing producer's partitioner is the base");
  t.ok(settled.every((x) => x.status === 'fulfilled'), 'every send() resolved');
  t.equal(s.wDeliveries(), 6000, "the wrapper's 'delivery' events: its own 6,000 messages only");
  t.match(w.metrics(), { inflight: 0, held: 0, topics: { [topic]: { produced: 6000, delivered: 6000, failed: 0 } } }, "the wrapper's metrics count its own messages");
  t.equal(s.appReports.length, 2000, "the application's own listener got the reports of its own 2,000 messages, none of the wrapper's");
  t.equal(s.appReports.filter((r) => r.err).length, 0, 'without errors');
  let wrongCold = 0;
  settled.forEach((x, i) => {
    if (!hot.wasHot(keys[i]) && x.value.partition !== partitionForKey(keys[i], N, 'murmur2')) wrongCold++;
  });
  t.equal(wrongCold, 0, "keys never hot: send() reports on partitionForKey(key, 4, 'murmur2')");
  t.ok(hot.ever.size > 0, `${hot.ever.size} keys turned hot`);

  const read = await consumeAll(await brokersOf(app), topic, 8000);
  t.equal(read.total, 8000, 'the log holds the 6,000 wrapper and 2,000 application messages');
  const appOnWrongPartition = read.messages.filter((m) => m.value.toString()[0] === 'a' && m.partition !== partitionForKey(m.key, N, 'murmur2'));
  t.equal(appOnWrongPartition.length, 0, "the application's messages placed by librdkafka's murmur2, as before");
  const wrapperCold = read.messages.filter((m) => m.value.toString()[0] === 'w' && !hot.wasHot(m.key.toString()));
  t.ok(wrapperCold.every((m) => m.partition === partitionForKey(m.key, N, 'murmur2')), "the wrapper's cold-key messages too");

  // Disconnecting the wrapper leaves the application's producer usable.
  await w.disconnect();
  t.ok(app.isConnected(), "the application's producer is still connected");
  t.throws(() => w.produce(topic, 'late', 'k'), StateError, 'the wrapper refuses produce() afterwards');
  await t.rejects(w.send(topic, 'late', 'k'), StateError, 'and send()');
  const before = s.appReports.length;
  app.produce(topic, null, Buffer.from('after'), 'k');
  for (let i = 0; i < 100 && s.appReports.length === before; i++) await sleep(20);
  t.equal(s.appReports.length, before + 1, 'the application still produces and gets its report');
  t.same(s.errors, [], "no 'error' events");
});

// node-rdkafka users routinely pass an opaque with their messages. Those reports are the
// application's, not the wrapper's: they must not count as the wrapper's deliveries, push
// its in-flight count below zero (flush() and disconnect() wait on it), or come out of its
// 'delivery' event.
t.test("the application's own messages with an opaque do not confuse the wrapper's accounting", async (t) => {
  const topic = 'wrap-opaque';
  const s = await scenario(t, { topic, appPlain: 0, appOpaque: 2000 });
  const { w, settled } = s;
  t.ok(settled.every((x) => x.status === 'fulfilled'), 'every send() resolved');
  const appOwn = s.appReports.filter((r) => r.report.opaque && r.report.opaque.appMessage !== undefined);
  t.equal(appOwn.length, 2000, 'the application got its 2,000 reports with its opaques');
  t.ok(appOwn.every((r) => s.appOpaques[r.report.opaque.appMessage] === r.report.opaque), 'each with its own opaque object');
  t.equal(s.wDeliveries(), 6000, "the wrapper's 'delivery' events: its own 6,000 messages only");
  const m = w.metrics();
  t.equal(m.inflight, 0, 'the wrapper has nothing in flight (not a negative count)');
  t.equal(m.topics[topic].delivered, 6000, 'the wrapper counts 6,000 delivered, its own');
  await w.disconnect();
});

t.test('wrapProducer: base partitioner default, and refusals', async (t) => {
  const app = await mockProducer({ log_level: 3 });
  t.teardown(() => disconnect(app));
  app.setPollInterval(5);
  const w = wrapProducer(app, { hotThreshold: 0.5 });
  t.equal(w.partitioner.options.partitioner, 'consistent_random', "no partitioner configured: librdkafka's default");
  t.equal(w.partitioner.options.hotThreshold, 0.5, 'options are passed on');
  const topic = 'wrap-default';
  await knownPartitions(w, topic);
  const reports = await Promise.all(Array.from({ length: 200 }, (_, i) => w.send(topic, 'v', `d-${i}`)));
  t.ok(reports.every((r, i) => r.partition === partitionForKey(`d-${i}`, N, 'consistent_random')), "200 distinct keys on consistent_random's partitions");
  await w.disconnect();
  t.ok(app.isConnected(), 'still connected after the wrapper disconnected');

  const idle = new (kafka().Producer)({ 'test.mock.num.brokers': 1, log_level: 3 }, {});
  t.throws(() => wrapProducer(idle), StateError, 'a producer not connected yet: StateError');
  t.throws(() => wrapProducer({}), InvalidArgTypeError, 'not a producer: InvalidArgTypeError');
  t.throws(() => wrapProducer(null), InvalidArgTypeError, 'null: InvalidArgTypeError');
});

// The existing producer's partitioner is its topicConfig.partitioner, or librdkafka's
// default (consistent_random) when unset: librdkafka places every message the wrapper hands
// over unassigned (partition count not known yet) with it. An options.partitioner that
// disagrees with that sends a cold key to two partitions (its early messages by
// consistent_random, the later ones by murmur2), breaking its order.
t.test("options.partitioner must agree with the existing producer's effective (default) partitioner", async (t) => {
  const app = await mockProducer({ log_level: 3 }); // no partitioner: consistent_random
  t.teardown(() => disconnect(app));
  app.setPollInterval(5);
  let w = null;
  const thrown = (() => { try { w = wrapProducer(app, { partitioner: 'murmur2' }); } catch (err) { return err; } return null; })();
  t.ok(thrown && thrown.code === 'KDP_INVALID_OPTION', "wrapProducer(app without partitioner, { partitioner: 'murmur2' }) is an InvalidOptionError");
  if (!w) return;
  // What accepting it does: the same keys before and after the partition count is known.
  const topic = 'wrap-disagree';
  const keys = Array.from({ length: 200 }, (_, i) => `x-${i}`);
  const first = keys.map((k) => w.send(topic, 'early', k));
  await knownPartitions(w, topic);
  const second = keys.map((k) => w.send(topic, 'late', k));
  const [a, b] = [await Promise.all(first), await Promise.all(second)];
  const split = keys.filter((k, i) => a[i].partition !== b[i].partition);
  t.equal(split.length, 0, `every key on one partition (${split.length} of ${keys.length} keys on two: e.g. ${split[0]} on ${a[keys.indexOf(split[0])]?.partition} then ${b[keys.indexOf(split[0])]?.partition})`);
  await w.disconnect();
});
