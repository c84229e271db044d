'use strict';
// The statistics of a native producer's librdkafka handles merged into one message per round
// (src/native/statistics-merge.ts): each partition's entry from the handle that produces to it
// (p % handles), counters summed, a round given out once every handle has reported.
const t = require('tap');
const { StatisticsRounds, mergeStatistics } = require('../../build/native/statistics-merge');

/** One handle's statistics in librdkafka's shape (STATISTICS.md), with `queued[p]` messages queued on partition p. */
function stats(name, queued, { txmsgs = 0, requests = 0 } = {}) {
  const partitions = { '-1': { partition: -1, msgq_cnt: 0, xmit_msgq_cnt: 0 } };
  queued.forEach((q, p) => { partitions[p] = { partition: p, msgq_cnt: q, xmit_msgq_cnt: 0, txmsgs: q }; });
  return JSON.stringify({
    name, type: 'producer', msg_cnt: queued.reduce((a, b) => a + b, 0), txmsgs,
    brokers: { 'b1:9092/1': { name: 'b1:9092/1', state: 'UP', outbuf_cnt: 1, waitresp_cnt: requests, tx: requests, req: { Produce: requests, Metadata: 1 }, rtt: { avg: 100 } } },
    topics: { orders: { topic: 'orders', batchcnt: { avg: 10 }, partitions } },
  });
}

t.test('each partition from its own handle, counters summed', async (t) => {
  // Handle 0 produces to partitions 0 and 2, handle 1 to 1 and 3; each also lists the others at 0.
  const merged = JSON.parse(mergeStatistics([
    stats('h0', [40, 0, 20, 0], { txmsgs: 100, requests: 3 }),
    stats('h1', [0, 7, 0, 9], { txmsgs: 50, requests: 2 }),
  ]));
  const parts = merged.topics.orders.partitions;
  t.same([0, 1, 2, 3].map((p) => parts[p].msgq_cnt), [40, 7, 20, 9], "each partition's queue from the handle that produces to it");
  t.equal(parts['-1'].msgq_cnt, 0, 'the unassigned partition (-1) from the first handle');
  t.equal(merged.msg_cnt, 76, 'messages queued: the sum');
  t.equal(merged.txmsgs, 150, 'messages sent: the sum');
  const broker = merged.brokers['b1:9092/1'];
  t.equal(broker.waitresp_cnt, 5, "a broker's requests in flight: the sum over handles");
  t.same(broker.req, { Produce: 5, Metadata: 2 }, 'requests by type: the sums');
  t.same(broker.rtt, { avg: 100 }, 'latency windows: the first handle\'s');
  t.equal(merged.name, 'h0', 'names: the first handle\'s');
  t.equal(merged.handles, 2, 'how many handles were merged');
});

t.test('a round is given out once every handle has reported', async (t) => {
  const rounds = new StatisticsRounds(3);
  t.equal(rounds.add(0, stats('h0', [1, 0, 0])), undefined, 'one of three: nothing yet');
  t.equal(rounds.add(0, stats('h0', [5, 0, 0])), undefined, "the same handle again: still waiting (its latest replaces the first)");
  t.equal(rounds.add(2, stats('h2', [0, 0, 3])), undefined, 'two of three');
  const merged = JSON.parse(rounds.add(1, stats('h1', [0, 2, 0])));
  t.same([0, 1, 2].map((p) => merged.topics.orders.partitions[p].msgq_cnt), [5, 2, 3], 'the whole round, each handle\'s latest');
  t.equal(rounds.add(1, stats('h1', [0, 4, 0])), undefined, 'the next round starts empty');
  rounds.clear();
  t.equal(rounds.add(0, stats('h0', [0, 0, 0])), undefined, 'cleared: a new round');
});

t.test('statistics that are not JSON pass through as the first handle gave them', async (t) => {
  t.equal(mergeStatistics(['not json', stats('h1', [1])]), 'not json');
});
