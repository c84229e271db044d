'use strict';
// A short bench:e2e run as a broker test: the slow-consumer scenario's dynamic side only
// (DynamicProducer with a LagMonitor attached in each of 3 producer processes, 6 DynamicConsumers
// of one group, consumer 0 slowed to half its capacity halfway), 20 s at 1,000 msg/s on a topic
// of replication 1. Nothing acknowledged may be lost or handled twice, and no order violation may
// lack a flag that explains it (bench/e2e/stats.js, unexplainedOrderViolations).
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const path = require('node:path');
const { execFile } = require('node:child_process');
const t = require('tap');
const K = require('./lib/kafka');

const ARGS = ['--quick', '--replication', '1', '--json', '--scenario', 'slow-consumer', '--only', 'dynamic'];

t.test('bench:e2e --quick, slow consumer, dynamic: nothing lost or duplicated, every order violation explained', { ...K.needsCluster(), timeout: 240000 }, async (t) => {
  const started = Date.now();
  const out = await new Promise((resolve, reject) => execFile(process.execPath, [path.join(K.ROOT, 'bench', 'e2e.js'), ...ARGS, '--brokers', K.brokers()],
    { maxBuffer: 256 << 20, timeout: 200000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr.slice(-2000)}`)) : resolve(stdout))));
  const result = JSON.parse(out);
  t.comment(`${((Date.now() - started) / 1000).toFixed(1)} s; ${result.summary.join('\n')}`);
  t.equal(result.scenarios.length, 1);
  const [run] = result.scenarios[0].runs;
  t.equal(run.side, 'dynamic');
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
});
