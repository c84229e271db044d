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
