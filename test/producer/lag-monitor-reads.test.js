'use strict';
// LagMonitor's reads one at a time, and its stop: a read asked for while one is under way gets that one's answer
// (one metadata request); a stop while a read is under way waits for it, and that read then feeds nobody (no 'lag'
// event, no penalty, no progress after the producers were told the monitor is gone) before the client disconnects.
// A partition the group never committed lags by what its log holds: from its start (the low watermark), not offset 0.
// The monitor's client is stubbed, its answers the test's.
const t = require('tap');
const { LagMonitor } = require('../..');

function monitor() {
  const m = new LagMonitor({ 'metadata.broker.list': 'localhost:1', log_level: 0 }, { groupId: 'g', topics: ['t'], holdHandoffsMs: 1000 });
  const log = [];
  const state = { committed: [10, -1001], low: [0, 0], high: [50, 0], hold: false, held: [] };
  m.client.getMetadata = (opts, cb) => {
    log.push('metadata');
    const answer = () => cb(null, { topics: [{ name: 't', partitions: [{ id: 0 }, { id: 1 }] }] });
    if (state.hold) state.held.push(answer);
    else answer();
  };
  m.client.committed = (toppars, timeout, cb) => cb(null, toppars.map(({ topic, partition }) => ({ topic, partition, offset: state.committed[partition] })));
  m.client.queryWatermarkOffsets = (topic, partition, timeout, cb) => cb(null, { lowOffset: state.low[partition], highOffset: state.high[partition] });
  m.client.consume = () => {};
  m.client.disconnect = (cb) => {
    log.push('disconnect');
    cb();
  };
  const penalties = [];
  const producer = {
    partitioner: { setPartitionPenalty: (topic, p, v) => penalties.push([p, v]), recentMessagesPerPartition: () => 100, stats: () => ({ topics: { t: { messages: 0, partitions: 2 } } }) },
    consumerProgress: (topic, progress) => log.push(progress === undefined ? 'gone' : 'progress'),
  };
  m.attach(producer);
  m.on('lag', () => log.push('lag'));
  return { m, state, log, penalties };
}

const release = (state) => {
  state.hold = false;
  for (const answer of state.held.splice(0)) answer();
};

t.test('a read asked for while one is under way: the same answer, one request', async (t) => {
  const { m, state, log } = monitor();
  state.hold = true;
  const a = m.read();
  const b = m.read();
  t.equal(a, b, 'the read under way');
  release(state);
  t.same(await a, { t: [40, 0] });
  t.same(log.filter((x) => x === 'metadata'), ['metadata'], 'one metadata request');
  await m.read();
  t.same(log.filter((x) => x === 'metadata').length, 2, 'the next read is a read of its own');
  await m.stop();
});

t.test('stop() while a read is under way: the read ends first, feeding nobody; then the client disconnects', async (t) => {
  const { m, state, log, penalties } = monitor();
  await m.read();
  t.same(log, ['metadata', 'progress', 'lag'], 'premise: a read feeds the producer and says so');
  const fedBefore = penalties.length;
  t.ok(fedBefore > 0, 'premise: and sets penalties');
  log.length = 0;
  state.hold = true;
  state.high = [500, 0];
  const reading = m.read();
  let stopped = false;
  const stopping = m.stop().then(() => {
    stopped = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.notOk(stopped, 'stop() waits for the read under way');
  t.notOk(log.includes('disconnect'), 'the client is not disconnected under it');
  release(state);
  await stopping;
  t.same(await reading, { t: [40, 0] }, 'the read answers with the lag last read');
  t.same(log, ['metadata', 'gone', 'disconnect'], 'no lag event, no progress after the producer was told the monitor is gone');
  t.equal(penalties.length, fedBefore, 'no penalty set');
  t.same(m.current(), { t: [40, 0] });
});

t.test('a partition never committed lags by what its log holds, from its start', async (t) => {
  const { m, state } = monitor();
  state.committed = [-1001, -1001];
  state.low = [30, 0];
  state.high = [100, 8];
  t.same(await m.read(), { t: [70, 8] }, 'from the low watermark (30), and from 0 where the log starts there');
  await m.stop();
});
