'use strict';
// metrics(): per-topic counters, rate, load shares, imbalance and hot keys, each checked
// against figures computed here from what was sent and where it was delivered; and the
// prom-client integration (an optional peer dependency: without it, prometheus is refused
// with an InvalidOptionError that says so).
const t = require('tap');
const { performance } = require('node:perf_hooks');
const { DynamicProducer, InvalidOptionError, DEFAULTS, partitionForKey } = require('../..');
const { zipf, sleep, knownPartitions, trackHot } = require('./lib/helpers');

const N = 4;
const LOAD_HALF_LIFE = 3000;

t.test('metrics(): counters, rate, load shares, imbalance, hot keys', async (t) => {
  const topic = 'metrics-main';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3, 'message.max.bytes': 20000 }, {}, { loadHorizon: { messages: LOAD_HALF_LIFE } });
  t.teardown(() => p.disconnect().catch(() => {}));
  const hot = trackHot(p);
  await p.connect();
  await knownPartitions(p, topic);
  const next = zipf(1000, 1.2, 5);
  const partitions = []; // partition of each message, in production order
  const keys = []; // and its key
  const sendAll = async (count) => {
    const base = partitions.length;
    const batch = Array.from({ length: count }, () => `m-${next()}`);
    keys.push(...batch);
    const reports = await Promise.all(batch.map((key) => p.send(topic, 'v', key)));
    reports.forEach((r, i) => { partitions[base + i] = r.partition; });
  };
  await sendAll(6000);
  const first = p.metrics();
  const t1 = performance.now();
  t.match(first.topics[topic], { partitions: N, produced: 6000, delivered: 6000, failed: 0 }, 'counters after 6,000 messages');
  await sendAll(3000);
  await sleep(100);
  const second = p.metrics();
  const seconds = (performance.now() - t1) / 1000;
  const rate = second.topics[topic].messagesPerSecond;
  t.ok(rate > 0, `messagesPerSecond > 0 on the second call (${rate.toFixed(0)})`);
  t.ok(Math.abs(rate * seconds - 3000) < 3000 * 0.1, `≈ 3,000 messages over the ${seconds.toFixed(3)} s between the calls`);
  const third = p.metrics();
  t.equal(third.topics[topic].messagesPerSecond, 0, 'nothing produced since the previous call: 0');

  // Load shares: each partition's decayed share (half-life LOAD_HALF_LIFE messages) of the
  // messages it received, computed here from the delivery reports.
  const m = second.topics[topic];
  const want = new Array(N).fill(0);
  let total = 0;
  partitions.forEach((part, i) => {
    const w = Math.pow(2, (i - partitions.length) / LOAD_HALF_LIFE);
    want[part] += w;
    total += w;
  });
  for (let i = 0; i < N; i++) want[i] /= total;
  t.equal(m.load.length, N, 'one load share per partition');
  t.ok(Math.abs(m.load.reduce((a, b) => a + b, 0) - 1) < 1e-9, 'load shares sum to 1');
  t.ok(m.load.every((l, i) => Math.abs(l - want[i]) < 1e-6), `load = decayed shares of the delivered messages (${m.load.map((l) => l.toFixed(4))} vs ${want.map((l) => l.toFixed(4))})`);
  t.ok(m.imbalance >= 1, `imbalance ${m.imbalance.toFixed(4)} >= 1`);
  t.ok(Math.abs(m.imbalance - Math.max(...want) * N) < 1e-6, 'imbalance = most loaded share / mean share');

  // Hot keys: those reported 'hot' and not 'cooled' since.
  const now = new Map();
  for (const e of hot.events) {
    const k = String(e.key);
    if (e.type === 'hot') now.set(k, true);
    else now.delete(k);
  }
  t.ok(now.size >= 1, `${now.size} keys hot now`);
  t.same(new Set(m.hotKeys.map((h) => String(h.key))), new Set(now.keys()), "hotKeys = keys reported 'hot' and not 'cooled' since");
  // A key hot by its share cools below coolThreshold / N; one hot for relief below reliefThreshold / 2 / N.
  const o = DEFAULTS;
  const line = (h) => (h.reason === 'relief' ? o.reliefThreshold / 2 : o.coolThreshold) / N;
  t.ok(m.hotKeys.every((h) => h.topic === topic && h.share > line(h) && h.partitions >= 1 && (h.reason === 'share' || h.reason === 'relief')),
    'each with topic, share above its cooling line, partitions and reason');
  t.ok(m.hotKeys.some((h) => h.key === 'm-0' && h.partitions >= 2), 'the most frequent key (m-0) among them, spread');

  // Moved messages: delivered on another partition than Kafka's base partitioner puts their key.
  const base = p.partitioner.options.partitioner;
  const moved = partitions.filter((part, i) => part !== partitionForKey(keys[i], N, base)).length;
  t.equal(m.movedMessages, moved, `movedMessages = messages delivered off their key's partition (${moved})`);
  t.ok(m.spreadMessages >= moved && m.spreadMessages <= 9000, `spreadMessages ${m.spreadMessages}: at least the moved ones, at most all`);

  // A message librdkafka refuses counts as failed, so produced = delivered + failed.
  await t.rejects(p.send(topic, Buffer.alloc(30000), 'm-big'), { code: 'KDP_KAFKA_ERROR' }, 'an oversized message is refused');
  await p.flush(5000);
  const last = p.metrics();
  t.match(last.topics[topic], { produced: 9001, delivered: 9000, failed: 1 }, 'produced 9,001 = delivered 9,000 + failed 1');
  t.match(last, { inflight: 0, held: 0 }, 'nothing in flight or held after flush()');
});

t.test('prometheus', async (t) => {
  let promClient = null;
  try {
    promClient = require('prom-client');
  } catch {
    // not installed: the optional peer dependency is missing
  }
  if (promClient === null) {
    const e = (() => { try { new DynamicProducer({ 'test.mock.num.brokers': 3 }, {}, { prometheus: {} }); } catch (err) { return err; } return null; })();
    t.ok(e instanceof InvalidOptionError, 'prom-client not installed: prometheus is refused with an InvalidOptionError');
    t.match(e && e.message, /prom-client/, 'whose message names prom-client');
    t.equal(e && e.path, 'options.prometheus', 'and the option');
    return;
  }
  const registry = new promClient.Registry();
  t.throws(() => new DynamicProducer({ 'test.mock.num.brokers': 3 }, {}, { prometheus: {} }), InvalidOptionError, 'not a Registry: InvalidOptionError');
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, {}, { prometheus: registry });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  await knownPartitions(p, 'metrics-prom');
  await Promise.all(Array.from({ length: 500 }, (_, i) => p.send('metrics-prom', 'v', `k${i % 7}`)));
  const text = await registry.metrics();
  t.match(text, /kdp_messages_produced\{topic="metrics-prom"\} 500/, 'kdp_messages_produced');
  t.match(text, /kdp_messages_delivered\{topic="metrics-prom"\} 500/, 'kdp_messages_delivered');
  for (const name of ['kdp_messages_failed', 'kdp_partition_load_share', 'kdp_imbalance', 'kdp_hot_keys', 'kdp_inflight', 'kdp_held']) {
    t.match(text, new RegExp(`^${name}`, 'm'), name);
  }
  const topicMetrics = p.metrics().topics['metrics-prom'];
  t.match(text, new RegExp(`^kdp_spread_messages\\{topic="metrics-prom"\\} ${topicMetrics.spreadMessages}$`, 'm'), 'kdp_spread_messages');
  t.match(text, new RegExp(`^kdp_moved_messages\\{topic="metrics-prom"\\} ${topicMetrics.movedMessages}$`, 'm'), 'kdp_moved_messages');
  // 7 keys, none refused: the table's gauges agree with metrics().
  const tracked = p.metrics().trackedKeys;
  t.ok(tracked.tracked >= 1 && tracked.tracked <= 7 && tracked.capacity === 1024, `metrics().trackedKeys ${JSON.stringify(tracked)}`);
  t.match(text, new RegExp(`^kdp_tracked_keys ${tracked.tracked}$`, 'm'), 'kdp_tracked_keys');
  t.match(text, /^kdp_tracked_keys_refused 0$/m, 'kdp_tracked_keys_refused');
});
