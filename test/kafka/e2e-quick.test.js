'use strict';
// A short bench:e2e run as a broker test: the slow-consumer scenario, static and dynamic
// (DynamicProducer with a LagMonitor attached in each of 3 producer processes, 6 DynamicConsumers
// of one group, consumer 0 slowed to half its capacity halfway), a 5 s warm-up then 20 s at
// 1,000 msg/s on topics of replication 1. In the dynamic run nothing acknowledged may be lost or
// handled twice, and no order violation may lack a flag that explains it (bench/e2e/stats.js,
// unexplainedOrderViolations); and the busiest consumer handles clearly less than static's
// busiest: with Zipf 1.0 keys the consumer of the hottest hashed partition gets ~23% of the
// messages under static partitioning (bench:e2e's runs), against a fair share of 1/6.
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const path = require('node:path');
const { execFile } = require('node:child_process');
const t = require('tap');
const K = require('./lib/kafka');

const ARGS = ['--quick', '--replication', '1', '--json', '--scenario', 'slow-consumer'];

t.test('bench:e2e --quick, slow consumer: dynamic loses nothing, explains every order violation and evens the consumers\' load', { ...K.needsCluster(), timeout: 420000 }, async (t) => {
  const started = Date.now();
  const out = await new Promise((resolve, reject) => execFile(process.execPath, [path.join(K.ROOT, 'bench', 'e2e.js'), ...ARGS, '--brokers', K.brokers()],
    { maxBuffer: 256 << 20, timeout: 400000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr.slice(-2000)}`)) : resolve(stdout))));
  const result = JSON.parse(out);
  t.comment(`${((Date.now() - started) / 1000).toFixed(1)} s; ${result.summary.join('\n')}`);
  t.equal(result.scenarios.length, 1);
  const [plain, run] = result.scenarios[0].runs;
  t.equal(plain.side, 'static');
  t.equal(run.side, 'dynamic');
  t.equal(plain.sent, run.sent, 'both runs sent the same schedule');
  t.equal(run.sent, 3 * Math.round((1000 / 3) * 25), 'the whole schedule sent: 3 producers, each 1,000 / 3 msg/s for a 5 s warm-up and 20 s');
  t.equal(run.producerFailures, 0, 'no produce failed');
  t.equal(run.acked, run.sent, 'every message acknowledged');
  t.equal(run.lost, 0, 'no acknowledged message lost');
  t.equal(run.duplicated, 0, 'no message handled twice');
  t.equal(run.orderViolationsUnexplained, 0, 'every order violation has a flag on the way');
  t.equal(run.unknown, 0, 'every handled value names a message that was sent');
  t.equal(run.lagMonitorErrors, 0, 'the LagMonitors read the lag without error');
  t.ok(run.slowSeconds !== null, 'consumer 0 was slowed');
  t.same(run.crashes, [], 'no consumer process failed');
  const busiest = (r) => Math.max(...r.perConsumer) / r.perConsumer.reduce((a, b) => a + b, 0);
  t.comment(`busiest consumer's share: static ${busiest(plain).toFixed(3)}, dynamic ${busiest(run).toFixed(3)}; max lag static ${plain.maxLag}, dynamic ${run.maxLag}`);
  t.ok(busiest(run) < 0.9 * busiest(plain), 'the busiest dynamic consumer handles less than 0.9x the busiest static one\'s share');
});
