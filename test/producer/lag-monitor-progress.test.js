'use strict';
// What a LagMonitor hands an attached DynamicProducer for its handoffs (src/producer/hold/progress.ts):
// per partition the group's committed offset and its pace between two reads. The monitor's
// client is stubbed: the offsets are the test's, and the expected pace is worked from them.
const t = require('tap');
const { LagMonitor } = require('../..');

/** A DynamicPartitioner as LagMonitor.attach() sees one, with nothing to steer. */
const partitioner = (more = {}) => ({ setPartitionPenalty() {}, recentMessagesPerPartition: () => 0, stats: () => ({ topics: {} }), ...more });

function monitor(options = {}) {
  const m = new LagMonitor({ 'metadata.broker.list': 'localhost:1', log_level: 0 }, { groupId: 'g', topics: ['t'], ...options });
  const state = { committed: [-1001, -1001, -1001], high: [0, 0, 0] };
  m.client.getMetadata = (opts, cb) => cb(null, { topics: [{ name: 't', partitions: [{ id: 0 }, { id: 1 }, { id: 2 }] }] });
  m.client.committed = (toppars, timeout, cb) => cb(null, toppars.map(({ topic, partition }) => ({ topic, partition, offset: state.committed[partition] })));
  m.client.queryWatermarkOffsets = (topic, partition, timeout, cb) => cb(null, { lowOffset: 0, highOffset: state.high[partition] });
  m.client.consume = () => {};
  m.client.disconnect = (cb) => cb();
  const fed = [];
  const producer = {
    partitioner: partitioner(),
    consumerProgress: (topic, progress, source) => fed.push({ topic, progress, source }),
  };
  m.attach(producer);
  return { m, state, fed };
}

t.test('an attached producer gets each read\'s committed offsets and their pace since the read before', async (t) => {
  const { m, state, fed } = monitor({ intervalMs: 500, holdHandoffsMs: 7000 });
  state.committed = [100, -1001, 50];
  state.high = [400, 10, 60];
  await m.read();
  t.equal(fed.length, 1);
  const first = fed[0].progress;
  t.equal(fed[0].topic, 't');
  t.same(first.committed, [100, NaN, 50], 'committed offsets; NaN where the group never committed');
  t.ok(first.perMs.every(Number.isNaN), 'no pace at the first read');
  t.equal(first.intervalMs, 500);
  t.equal(first.holdMs, 7000);
  t.same(m.current(), { t: [300, 10, 10] }, 'the lag is read as before (never committed: from offset 0)');

  await new Promise((r) => setTimeout(r, 200));
  state.committed = [160, -1001, 40]; // partition 2 went back (a reset)
  await m.read();
  const second = fed[1].progress;
  const elapsed = second.at - first.at;
  t.ok(elapsed >= 190, `premise: ${elapsed} ms between the reads`);
  t.equal(second.perMs[0], 60 / elapsed, '60 offsets over the time between the reads');
  t.ok(Number.isNaN(second.perMs[1]), 'never committed: no pace');
  t.ok(Number.isNaN(second.perMs[2]), 'an offset that went back: no pace');

  await m.stop();
  t.same(fed.at(-1), { topic: 't', progress: undefined, source: m }, 'stop() tells the producer the progress is gone');
  t.ok(fed.every((f) => f.source === m), 'each read names the monitor it came from');
});

t.test('holdHandoffsMs 0: producers get no progress; a partitioner never does', async (t) => {
  const off = monitor({ holdHandoffsMs: 0 });
  off.state.committed = [1, 1, 1];
  await off.m.read();
  await off.m.stop();
  t.same(off.fed, []);
  const m = new LagMonitor({ 'metadata.broker.list': 'localhost:1', log_level: 0 }, { groupId: 'g', topics: ['t'] });
  m.attach(partitioner({ consumerProgress: () => t.fail('a partitioner is no producer') }));
  m.client.disconnect = (cb) => cb();
  await m.stop();
});

// Penalties: a partition's lag above the least lagging one × penaltyGain (3 by default), over
// what a partition receives from all producers over the load horizon. Each producer knows only its own recent
// messages per partition; its share of the topic's writes between two reads (its decided
// messages against the growth of the log ends) makes them the topic's, so that the gain does
// not grow with the number of producers.
t.test('penalties: each producer\'s own messages scaled by its share of the topic\'s writes', async (t) => {
  const { m, state } = monitor({ holdHandoffsMs: 0 });
  const writer = (decided) => {
    const w = { decided, perPartition: 500, penalties: [] };
    w.partitioner = partitioner({
      setPartitionPenalty: (topic, i, x) => { w.penalties[i] = x; },
      recentMessagesPerPartition: () => w.perPartition,
      stats: () => ({ topics: { t: { partitions: 3, messages: w.decided } } }),
    });
    m.attach(w.partitioner);
    return w;
  };
  const near = (got, want, message) => t.ok(got.length === want.length && got.every((x, i) => Math.abs(x - want[i]) < 1e-12), `${message} (${got})`);
  const a = writer(1000);
  const b = writer(5000);
  state.committed = [0, 0, 0];
  state.high = [300, 100, 200];
  await m.read();
  // No share known at the first read: each counts as alone.
  t.same(a.penalties, [3 * 200 / 500, 0, 3 * 100 / 500], 'first read: 3 × (lag − least) / own messages per partition');
  t.same(b.penalties, a.penalties);

  // 4,000 messages land; a decided 3,000 of them, b 1,000.
  a.decided += 3000;
  b.decided += 1000;
  state.high = [2300, 1100, 1200];
  await m.read();
  near(a.penalties, [3 * 0.75 * 1200 / 500, 0, 3 * 0.75 * 100 / 500], 'a wrote 3/4: its penalties × 3/4');
  near(b.penalties, [3 * 0.25 * 1200 / 500, 0, 3 * 0.25 * 100 / 500], 'b wrote 1/4: its penalties × 1/4');

  // Nothing written since: the shares stay.
  await m.read();
  near(a.penalties, [3 * 0.75 * 1200 / 500, 0, 3 * 0.75 * 100 / 500], 'no writes between two reads: the last share is kept');
  await m.stop();
});

t.test('penaltyGain scales every penalty; 0 gives none', async (t) => {
  for (const gain of [12, 0]) {
    const { m, state } = monitor({ holdHandoffsMs: 0, penaltyGain: gain });
    const penalties = [];
    m.attach(partitioner({
      setPartitionPenalty: (topic, i, x) => { penalties[i] = x; },
      recentMessagesPerPartition: () => 400,
      stats: () => ({ topics: { t: { partitions: 3, messages: 1000 } } }),
    }));
    state.committed = [0, 0, 0];
    state.high = [500, 100, 300];
    await m.read();
    t.same(penalties, [gain * 400 / 400, 0, gain * 200 / 400], `penaltyGain ${gain}: ${gain} × (lag − least) / messages per partition (alone)`);
    await m.stop();
  }
});
