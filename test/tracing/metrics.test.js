'use strict';
// The producers' and consumers' gauges through OpenTelemetry's metrics API (src/core/otel-metrics.ts), with the SDK's
// MeterProvider and a reader collected on demand, on librdkafka's mock cluster: a DynamicProducer's counts are the
// messages the test sent, its hot key the one the test made dominant, spread over more than one partition; every point
// carries the producer's id; a consumer's gauges are there while it runs (what it handled since start, its calls), gone
// once it stopped; and the names follow OpenTelemetry's manner.
const t = require('tap');
const api = require('@opentelemetry/api');
const { AggregationTemporality, MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
const { bootstrapOf } = require('../lib/mock-cluster');
const { DynamicProducer, DynamicConsumer } = require('../..');
const { otelName } = require('../../build/core/otel-metrics');

class OnDemand extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
// Delta: a collection holds what was observed since the last one (a gauge whose callback is gone reports nothing).
const reader = new OnDemand({ aggregationTemporalitySelector: () => AggregationTemporality.DELTA });
api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
t.teardown(() => api.metrics.disable());

/** Every point collected now, as { name, attributes, value }. */
async function points() {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.flatMap((m) => m.dataPoints.map((d) => ({ name: m.descriptor.name, attributes: d.attributes, value: d.value }))));
}

t.test('the names', async (t) => {
  t.equal(otelName('kdp_consumer_held', 'consumer'), 'kdp.consumer.held');
  t.equal(otelName('kdp_hot_key_share', 'producer'), 'kdp.producer.hot_key_share');
});

t.test("a producer's gauges: its counts, its hot key, its id", async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, {}, { warmupMessages: 50 });
  await p.connect(30_000, { topics: ['m'] });
  const SENT = 2000;
  await Promise.all(Array.from({ length: SENT }, (_, i) => p.send('m', `v${i}`, i % 5 === 0 ? `k${i % 97}` : 'DOMINANT')));
  const id = p.producerId.toString('hex');
  const mine = (await points()).filter((x) => x.attributes['kdp.client.id'] === id);
  const one = (name, attrs = {}) => mine.filter((x) => x.name === name && Object.entries(attrs).every(([k, v]) => x.attributes[k] === v));
  t.same(one('kdp.producer.messages_produced', { topic: 'm' }).map((x) => x.value), [SENT], 'produced: what the test sent');
  t.same(one('kdp.producer.messages_delivered', { topic: 'm' }).map((x) => x.value), [SENT], 'delivered: every one');
  const hot = one('kdp.producer.hot_key_share', { topic: 'm' });
  t.same(hot.map((x) => x.attributes.key), ['DOMINANT'], 'the hot key: the dominant one');
  t.ok(hot[0].value > 0.5 && hot[0].value <= 1, `its share (${hot[0].value.toFixed(2)}) near the 80% it was sent`);
  t.ok(one('kdp.producer.hot_key_partitions', { topic: 'm', key: 'DOMINANT' })[0].value > 1, 'spread over more than one partition');
  await p.disconnect();
  t.same((await points()).filter((x) => x.attributes['kdp.client.id'] === id), [], 'gone once it disconnected');
});

t.test("a consumer's gauges while it runs", async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, {}, {});
  await p.connect(30_000, { topics: ['c'] });
  t.teardown(() => p.disconnect());
  await Promise.all(Array.from({ length: 20 }, (_, i) => p.send('c', `v${i}`, `k${i}`)));
  const c = new DynamicConsumer({ 'metadata.broker.list': await bootstrapOf(p.client), 'group.id': 'metrics-group', 'auto.offset.reset': 'earliest', log_level: 3 }, {}, {});
  await c.connect();
  let handled = 0;
  let during;
  let release;
  const held = new Promise((resolve) => {
    release = resolve;
  });
  const run = c.run(['c'], async () => {
    if (++handled === 20) {
      during = await points();
      release();
    }
  });
  await held;
  await c.stop();
  await run;
  const ours = during.filter((x) => String(x.attributes['kdp.client.id']).startsWith('metrics-group-'));
  t.same(ours.filter((x) => x.name === 'kdp.consumer.in_flight').map((x) => x.value), [1], 'its call under way (the one collecting)');
  t.ok(ours.some((x) => x.name === 'kdp.consumer.held') && ours.some((x) => x.name === 'kdp.consumer.retries'), 'its other gauges');
  t.same((await points()).filter((x) => String(x.attributes['kdp.client.id']).startsWith('metrics-group-')), [], 'gone once its run ended');
});

t.test("a hot key's lag on the consumer side: metrics().hotKeys and its gauges", async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, {}, { warmupMessages: 50 });
  await p.connect(30_000, { topics: ['lag'] });
  t.teardown(() => p.disconnect());
  // Every message written AGE_MS before it was sent (its timestamp): a consumer handles each at least that old.
  const AGE_MS = 10_000;
  const sentAt = Date.now();
  await Promise.all(Array.from({ length: 2000 }, (_, i) => p.send('lag', `v${i}`, i % 5 === 0 ? `k${i % 97}` : 'DOMINANT', undefined, sentAt - AGE_MS)));
  const c = new DynamicConsumer({ 'metadata.broker.list': await bootstrapOf(p.client), 'group.id': 'lag-group', 'auto.offset.reset': 'earliest', log_level: 3 }, {}, {});
  await c.connect();
  let handled = 0;
  let marked = 0;
  let during;
  let snapshot;
  let release;
  const held = new Promise((resolve) => {
    release = resolve;
  });
  const run = c.run(['lag'], async (m, info) => {
    if (info.order !== null && m.key.toString() === 'DOMINANT') marked++;
    if (++handled === 2000) {
      // The previous calls ended: what they noted is there.
      snapshot = c.metrics().hotKeys;
      during = await points();
      release();
    }
  });
  await held;
  const readAt = Date.now();
  await c.stop();
  await run;
  t.ok(marked > 100, `premise: the dominant key's messages came marked (${marked})`);
  const [hot, ...others] = snapshot;
  t.same(others, [], 'one hot key: the cold keys, never marked, are not there');
  t.match(hot, { topic: 'lag', key: 'DOMINANT' });
  t.ok(hot.lagMs >= AGE_MS && hot.lagMs <= AGE_MS + (readAt - sentAt), `its lag (${hot.lagMs} ms): at least the age the test gave its messages, at most that plus the test's time`);
  t.ok(hot.idleMs >= 0 && hot.idleMs <= readAt - sentAt, `since its last handled message: ${hot.idleMs} ms`);
  const ours = during.filter((x) => String(x.attributes['kdp.client.id']).startsWith('lag-group-'));
  const lag = ours.filter((x) => x.name === 'kdp.consumer.hot_key_lag_ms');
  t.same(lag.map((x) => [x.attributes.topic, x.attributes.key]), [['lag', 'DOMINANT']], 'the gauge: the hot key alone');
  t.ok(lag[0].value >= AGE_MS, `its value (${lag[0].value}) at least the age given`);
  t.ok(ours.some((x) => x.name === 'kdp.consumer.hot_key_idle_ms' && x.attributes.key === 'DOMINANT'), 'and its idle time');
});
