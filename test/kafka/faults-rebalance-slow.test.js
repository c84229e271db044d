'use strict';
// Fault scenario e: a rebalance in the middle of slow handlers, on the real cluster. Two producer
// processes (DynamicProducer, idempotent, acks=all) spread two hot keys; one consumer process
// (DynamicConsumer, concurrency 32, handlers waiting 0 to 10 ms each, in key order) is well under
// way when a second process joins the group: partitions move while calls of theirs are under
// way (they end before the hand-over, revokeTimeoutMs). Counted from the values (lib/faults.js):
//   - nothing acknowledged lost;
//   - duplicates only re-reads: messages the first process handled at or above the offset
//     committed on their partition when it gave the partition up (handled above a gap of
//     calls still waiting: commits stay below the lowest message not handled);
//   - per producer process and key, in send order, re-reads aside, the two members' logs read
//     as one by when each call started (they handle a spread key's messages side by side);
//   - flagged only after the join (a spread key's predecessor on the other member's
//     partitions: 'unowned', or 'timeout'); nothing flagged before it.
//
// Needs KAFKA_BROKERS (npm run test:kafka). FAULTS_LONG=1: 10x the messages.
// Run under each group protocol (lib/faults.js PROTOCOLS: KDP_GROUP_PROTOCOLS, default classic and KIP-848's consumer).

const t = require('tap');
const fs = require('node:fs');
const { Scenario, size, PROTOCOLS, underProtocol } = require('./lib/faults');
const K = require('./lib/kafka');
const F = require('./lib/faults-values');

const PER_PRODUCER = size(10_000, 10);
const RATE = 500;

for (const groupProtocol of PROTOCOLS) {
  t.test(`a member joins in the middle of slow handlers, group protocol ${groupProtocol} (2 producer processes x ${PER_PRODUCER}, concurrency 32)`, { ...K.needsCluster(), timeout: 900000 }, async (t) => {
    let joinedAt = Infinity;
    const s = new Scenario(t, {
      name: underProtocol('rebalance-slow-handlers', groupProtocol), groupProtocol,
      maxWaitMs: 10000,
      sessionTimeoutMs: 6000,
      concurrency: 32,
      handlerMs: 5,
      mergeByTime: true,
      flagRule: (r) => r.at >= joinedAt && (r.reason === 'unowned' || r.reason === 'timeout'),
    });
    await s.setup();
    const first = await s.startConsumer();
    s.started = Date.now();
    const producers = [await s.startProducer({ count: PER_PRODUCER, rate: RATE }), await s.startProducer({ count: PER_PRODUCER, rate: RATE })];
    const total = 2 * PER_PRODUCER;
    while (fs.statSync(first.logFile).size / F.RECORD < total * 0.3 && first.child.exitCode === null) await K.sleep(20);
    joinedAt = Date.now();
    const second = await s.startConsumer();
    // Cooperative: the first assignment may be empty, the partitions come once the first process gave them up.
    await require('./lib/hot-key').until(() => second.assigned.some((a) => a.length > 0), 60000);
    const moved = second.assigned.find((a) => a.length > 0);
    s.note(`consumer ${second.incarnation} joined, assigned ${moved.join(',')}`);
    // What the first process committed of those partitions when it gave them up: the second one's
    // re-reads start there (of the partitions it kept, nothing may be read again).
    await require('./lib/hot-key').until(() => moved.every((p) => first.gaveUp.has(p)), 60000);
    s.committedAfter[0] = Array.from({ length: s.o.partitions }, (_, p) => (first.gaveUp.has(p) ? first.gaveUp.get(p) : Infinity));
    s.note(`consumer 0 gave up ${moved.map((p) => `${p}@${first.gaveUp.get(p)}`).join(',')}`);
    const exits = await Promise.all(producers.map((p) => p.done));
    const end = await s.untilAllHandled(180000);
    await Promise.all([s.stopConsumer(first), s.stopConsumer(second)]);
    t.same(exits.map((e) => e.code), [0, 0], 'producer processes exited normally');
    t.same(producers.map((p) => p.report && p.report.failed), [0, 0], 'no failed delivery');
    t.same([first.report && first.report.errors, second.report && second.report.errors], [[], []], 'no errors in either consumer');
    t.ok(moved.length > 0, `the second process took partitions (${moved.join(',')})`);
    t.equal(end.missing, 0, 'every acknowledged message handled, nothing held');
    const fig = s.analyse();
    t.equal(fig.acked, total, 'every message acknowledged');
    t.equal(s.logs()[0].filter((r) => r.flagged && r.at < joinedAt).length, 0, 'nothing flagged before the join');
    s.report(fig, {});
  });
}
