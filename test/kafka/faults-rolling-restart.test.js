'use strict';
// Fault scenario f: a rolling restart of every node of the cluster under load, as an operator
// does it: each node in turn stopped with SIGTERM (a controlled shutdown that hands its
// partitions' leadership over), started again on its storage, and the next one only once every
// partition of the topic and of the group's offsets has all its replicas in sync again. Two
// producer processes (DynamicProducer on its default engine, idempotent, acks=all) spread two
// hot keys throughout; one consumer process (DynamicConsumer) restores their order and commits
// as it goes, its group coordinator moving with the restarts.
// Counted from the values (lib/faults.js), with every acknowledgement and handling written to a
// file at once:
//   - nothing acknowledged lost, every message acknowledged, no failed delivery;
//   - no duplicate: the producers are idempotent (a retry after a leader moved is written
//     once), and the one consumer process reads on from where it was;
//   - per producer process and key, in send order; nothing flagged.
//
// Needs KAFKA_BROKERS pointing at the 3-node cluster scripts/kafka.sh runs (npm run test:kafka):
// only its nodes can be stopped and started; against another cluster the test is skipped.
// FAULTS_LONG=1: 10x the messages.
// Run under each group protocol (lib/faults.js PROTOCOLS: KDP_GROUP_PROTOCOLS, default classic and KIP-848's consumer).

const t = require('tap');
const { Scenario, size, TRANSIENT_CONNECTION_ERRORS, PROTOCOLS, underProtocol } = require('./lib/faults');
const K = require('./lib/kafka');

const RATE = 1000; // msg/s per producer process: the run outlasts the three restarts
const PER_PRODUCER = size(100_000, 10);

const control = K.brokers() ? K.clusterControl() : null;
const skip = K.needsCluster().skip ??
  (control === null ? 'KAFKA_BROKERS is not the cluster scripts/kafka.sh runs: its nodes cannot be restarted from here' : undefined) ??
  (control.nodes < 3 ? `needs 3 nodes (replication 3), the cluster has ${control.nodes}` : undefined);

for (const groupProtocol of PROTOCOLS) {
  t.test(`a rolling restart of all 3 nodes under load, group protocol ${groupProtocol} (2 producer processes x ${PER_PRODUCER} at ${RATE}/s)`, { skip, timeout: 900000 }, async (t) => {
    const s = new Scenario(t, { name: underProtocol('rolling-restart', groupProtocol), groupProtocol, maxWaitMs: 10000 });
    await s.setup();
    const consumer = await s.startConsumer();
    s.started = Date.now();
    const producers = [await s.startProducer({ count: PER_PRODUCER, rate: RATE }), await s.startProducer({ count: PER_PRODUCER, rate: RATE })];
    const total = 2 * PER_PRODUCER;
    await s.untilSent(total / 10);
    const restarted = [];
    for (let node = 1; node <= control.nodes; node++) {
      const sent = s.sent();
      await control.stop(node);
      s.note(`node ${node} stopped (SIGTERM) at ${sent} sent`);
      await control.start(node);
      const waited = await K.inSync([s.topic, '__consumer_offsets'], 3);
      s.note(`node ${node} started again; all replicas in sync ${waited} ms later, ${s.sent()} sent`);
      restarted.push(node);
    }
    const restartsDone = s.sent();
    const exits = await Promise.all(producers.map((p) => p.done));
    const end = await s.untilAllHandled(180000);
    await s.stopConsumer(consumer);
    t.same(restarted, [1, 2, 3], 'every node was stopped and started again in turn');
    t.ok(restartsDone < total, `the restarts ended while the producers were still sending (${restartsDone} of ${total} sent)`);
    t.same(exits.map((e) => e.code), [0, 0], 'producer processes exited normally');
    t.same(producers.map((p) => p.report && p.report.failed), [0, 0], 'no failed delivery');
    // A node going down closes its connections: librdkafka's transient connection errors, as in
    // faults-resets; anything else fails the test.
    t.same((consumer.report ? consumer.report.errors : ['no report']).filter((e) => !TRANSIENT_CONNECTION_ERRORS.test(e)), [], 'no consumer errors beyond transient connection errors');
    t.equal(end.missing, 0, 'every acknowledged message handled, nothing held');
    const fig = s.analyse();
    t.equal(fig.acked, total, 'every message acknowledged');
    t.equal(fig.duplicates, 0, 'nothing handled twice: idempotent producers, one consumer process reading on');
    s.report(fig, {});
  });
}
