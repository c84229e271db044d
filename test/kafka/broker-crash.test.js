'use strict';
// A broker killed mid-run: Zipf-keyed messages through DynamicProducer (acks=all,
// enable.idempotence=true) to a topic with replication factor 3 and min.insync.replicas=2;
// once a fifth of them is sent, the node leading partition 0 (broker and controller in
// one JVM) gets SIGKILL, and is started again on its storage some seconds later while the
// producer keeps going. Afterwards: nothing lost, nothing duplicated, cold keys on their
// hashed partition, per-key order kept, and the producer never stalled for good (it
// finished, and the longest pause between delivery reports is reported and bounded).
//
// Needs KAFKA_BROKERS pointing at the cluster scripts/kafka.sh runs (npm run test:kafka):
// only its nodes can be killed and restarted; against another cluster the test is skipped.

const t = require('tap');
const K = require('./lib/kafka');
const { produceZipf, checkTopic, assertNothingLost } = require('./lib/zipf-run');

const MESSAGES = Number(process.env.KDP_KAFKA_CRASH_MESSAGES || 300_000);
const RATE = 8000; // msg/s: the run lasts long enough for the kill, the failover and the restart
const PARTITIONS = 6;
const DOWN_MS = 10000; // how long the node stays dead
const MAX_PAUSE_MS = 60000; // a longer pause between delivery reports counts as a stall

const control = K.brokers() ? K.clusterControl() : null;
const skip = K.needsCluster().skip ??
  (control === null ? 'KAFKA_BROKERS is not the cluster scripts/kafka.sh runs: its nodes cannot be killed from here' : undefined) ??
  (control.nodes < 3 ? `needs 3 nodes (replication 3), the cluster has ${control.nodes}` : undefined);

t.test('a broker killed (SIGKILL) mid-run and restarted: nothing lost or duplicated, no stall', { skip, timeout: 600000 }, async (t) => {
  const total = K.lap();
  const topic = K.topicName('crash');
  await K.createTopic(topic, PARTITIONS, 3, { 'min.insync.replicas': '2' });
  const leaders = await K.leadersOf(topic);
  const victim = leaders[0];
  t.comment(`topic ${topic}: ${PARTITIONS} partitions, replication 3, min.insync.replicas 2; leaders ${leaders.join(',')}; node ${victim} will be killed`);

  let killedAt = 0;
  let restarted = null;
  let restartedAt = 0;
  let run;
  try {
    run = await produceZipf(topic, MESSAGES, {
      seed: 0xc4a54,
      ratePerSec: RATE,
      onProgress: (sent) => {
        if (sent === Math.floor(MESSAGES / 5 / 1000) * 1000) {
          t.comment(`${sent} sent: ${control.kill(victim)}`);
          killedAt = Date.now();
          restarted = K.sleep(DOWN_MS).then(() => control.start(victim)).then((said) => {
            restartedAt = Date.now();
            t.comment(`${said} (${restartedAt - killedAt} ms after the kill)`);
          });
        }
      },
      producerOptions: { metadataRefreshMs: 2000 },
    });
  } finally {
    // The node comes back whatever happened, for the tests after this one.
    if (restarted) await restarted.catch((err) => t.fail(String(err)));
  }
  t.ok(killedAt > 0, `node ${victim} was killed mid-run`);
  t.ok(restartedAt > 0, `node ${victim} was restarted and rejoined`);
  t.comment(`produced ${MESSAGES} in ${run.producedMs} ms, all delivered in ${run.ms} ms; longest pause between delivery reports ${run.longestGap} ms`);
  const second = (at) => Math.floor((at - run.started) / 1000);
  t.comment(`deliveries per second (kill at ${second(killedAt)} s, back at ${second(restartedAt)} s): ${run.perSecond.join(' ')}`);
  t.comment(`${run.producerErrors.length} producer error events, e.g. ${[...new Set(run.producerErrors.map(String))].slice(0, 3).join(' | ')}`);
  const check = await checkTopic(topic, run);
  t.comment(`read back ${check.read.read} messages in ${check.read.ms} ms`);
  const problems = (kind) => check.problems[kind] ?? [];

  t.test('nothing lost, nothing duplicated', async (t) => {
    assertNothingLost(t, run, check, MESSAGES);
  });
  t.test('placement and order kept through the failover', async (t) => {
    t.same(problems('cold'), [], 'every message without order header on its key\'s hashed partition');
    t.same(problems('cold-split'), [], 'each never-hot key on one partition');
    t.same(problems('handed'), [], 'each message on the partition the producer chose');
    t.same(problems('spread'), [], 'spread messages within their allowed partitions');
    t.same(problems('order'), [], 'on each partition, each key\'s messages in produced order');
    t.same(problems('cold-order'), [], 'each cold key\'s messages in produced order end to end');
  });
  t.test('the producer never stalled for good', async (t) => {
    t.ok(run.longestGap < MAX_PAUSE_MS, `longest pause between delivery reports ${run.longestGap} ms < ${MAX_PAUSE_MS} ms`);
    t.ok(run.producerErrors.every((e) => !/fatal/i.test(String(e))), 'no fatal producer error', { errors: run.producerErrors.slice(0, 5).map(String) });
  });
  t.comment(`broker-crash: ${total()} ms`);
});
