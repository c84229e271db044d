'use strict';
// librdkafka statistics (statistics.interval.ms) → 'stats' events, per-partition queue depth
// in metrics() (docs/design.md: msgq_cnt + xmit_msgq_cnt of each partition), and penalties for hot
// keys: (depth - least depth) / recent messages per partition, through the public
// setPartitionPenalty(). The mock brokers answer 100 ms late, one small request at a time per
// connection, so that queues are not empty.
const t = require('tap');
const { DynamicProducer } = require('../..');
const { sleep, knownPartitions } = require('./lib/helpers');

const N = 4;

async function run(t, topic, options) {
  const p = new DynamicProducer({
    'test.mock.num.brokers': 3, 'test.mock.broker.rtt': 100, 'max.in.flight.requests.per.connection': 1, 'batch.num.messages': 200,
    'statistics.interval.ms': 100, log_level: 3,
  }, {}, options);
  t.teardown(() => p.disconnect().catch(() => {}));
  const stats = [];
  const penalties = [];
  const setPenalty = p.partitioner.setPartitionPenalty.bind(p.partitioner);
  p.partitioner.setPartitionPenalty = (tp, partition, value) => {
    penalties.push({ at: stats.length, topic: tp, partition, value });
    return setPenalty(tp, partition, value);
  };
  const checks = [];
  p.on('stats', (s) => {
    stats.push(s);
    // 'stats' is emitted once the producer has read the event: queueDepth must be what this
    // event says now (read at once: a later event may follow in the same turn of the loop).
    const m = p.metrics().topics[topic];
    const parts = s.topics && s.topics[topic] && s.topics[topic].partitions;
    if (m && m.partitions > 0 && parts) {
      const want = Array.from({ length: N }, (_, i) => (parts[i] ? parts[i].msgq_cnt + parts[i].xmit_msgq_cnt : 0));
      checks.push({ want, got: [...m.queueDepth] });
    }
  });
  await p.connect();
  await knownPartitions(p, topic);
  // About 1.5 s of traffic: one hot key (40%) over 200 others.
  for (let tick = 0; tick < 30; tick++) {
    for (let j = 0; j < 400; j++) p.produce(topic, 'v', j % 5 < 2 ? 'HOT' : `k-${(tick * 400 + j) % 200}`);
    await sleep(50);
  }
  await p.flush(20000);
  return { p, stats, penalties, checks };
}

t.test("statistics: 'stats' events, queue depth per partition, penalties", async (t) => {
  const topic = 'stats-on';
  const { p, stats, penalties, checks } = await run(t, topic, {});
  t.ok(stats.length >= 5, `${stats.length} 'stats' events in about 1.5 s at 100 ms`);
  t.ok(stats.every((s) => typeof s === 'object' && s !== null && typeof s.topics === 'object'), 'each the parsed statistics object');
  const depth = p.metrics().topics[topic].queueDepth;
  t.equal(depth.length, N, `metrics().topics[t].queueDepth has one entry per partition (${N})`);
  t.ok(depth.every((d) => Number.isInteger(d) && d >= 0), 'non-negative integers');
  t.ok(checks.length >= 3, `${checks.length} statistics events compared`);
  t.same(checks.map((c) => c.got), checks.map((c) => c.want), 'queueDepth = msgq_cnt + xmit_msgq_cnt of each partition, from the latest event');
  t.ok(checks.some((c) => c.want.some((d) => d > 0)), 'some partition had messages queued');
  // Penalties: per event, one per partition, 0 for the least queued, (depth - least) / (recent per partition) otherwise.
  const ofTopic = penalties.filter((x) => x.topic === topic);
  t.ok(ofTopic.length >= N, `${ofTopic.length} penalties set`);
  t.ok(ofTopic.every((x) => x.value >= 0 && Number.isFinite(x.value)), 'all finite and >= 0');
  const byEvent = new Map();
  for (const x of ofTopic) {
    if (!byEvent.has(x.at)) byEvent.set(x.at, []);
    byEvent.get(x.at).push(x);
  }
  t.ok([...byEvent.values()].every((set) => set.length === N && set.some((x) => x.value === 0)), 'each event sets all 4, the least queued at 0');
  t.ok(ofTopic.some((x) => x.value > 0), 'and a positive penalty where a partition was more queued');
});

t.test('queuePenalty: false reports queue depth but sets no penalty', async (t) => {
  const topic = 'stats-off';
  const { p, stats, penalties } = await run(t, topic, { queuePenalty: false });
  t.ok(stats.length >= 5, `${stats.length} 'stats' events`);
  t.equal(p.metrics().topics[topic].queueDepth.length, N, 'queueDepth still has one entry per partition');
  t.equal(penalties.length, 0, 'no penalty set');
});

t.test('without statistics.interval.ms: no stats, queueDepth empty', async (t) => {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 });
  t.teardown(() => p.disconnect().catch(() => {}));
  let stats = 0;
  p.on('stats', () => stats++);
  await p.connect();
  await knownPartitions(p, 'stats-none');
  for (let i = 0; i < 1000; i++) p.produce('stats-none', 'v', `k${i}`);
  await p.flush(10000);
  await sleep(300);
  t.equal(stats, 0, "no 'stats' events");
  t.same(p.metrics().topics['stats-none'].queueDepth, [], 'queueDepth is empty');
});
