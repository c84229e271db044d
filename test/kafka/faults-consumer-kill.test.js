'use strict';
// Fault scenario d: a consumer PROCESS SIGKILLed mid-stream, on the real cluster, under each
// group protocol: classic (session.timeout.ms 6 s) and KIP-848's 'consumer' (the brokers'
// session timeout, 10 s: scripts/kafka.sh). Two producer processes (DynamicProducer,
// idempotent, acks=all) spread two hot keys; one consumer process (DynamicConsumer, maxWaitMs
// 10 s, concurrency 64, each call 0-4 ms: the hottest key, one call at a time, keeps up with
// its ~240 msg/s, 30% of both producers'; at 0-20 ms it fell a minute behind) restores their
// order and commits what it handled every 200 ms. Once it has handled 40% of the messages it is SIGKILLed; the group's
// committed offsets are read, and a new consumer process of the same group carries on.
// KDP_GROUP_PROTOCOLS (default 'classic,consumer') picks the protocols.
// Counted from the values (lib/faults.js), with every handling written to a file at once:
//   - nothing acknowledged lost;
//   - duplicates only re-reads: messages the killed process handled at or above the offset
//     committed on their partition (what was not committed); on the native engine (handled
//     records) no more than what it started in its last commit interval before the kill;
//   - per producer process and key, in send order, re-reads aside;
//   - flagged only after the move, and only a message whose predecessor the killed process
//     handled (the new one never sees it, and lets the message go after maxWaitMs:
//     docs/ordering.md, Bounds); nothing flagged before the kill.
//
// Needs KAFKA_BROKERS (npm run test:kafka). FAULTS_LONG=1: 10x the messages.

const t = require('tap');
const fs = require('node:fs');
const { Scenario, size, PROTOCOLS, underProtocol } = require('./lib/faults');
const K = require('./lib/kafka');
const F = require('./lib/faults-values');

const PER_PRODUCER = size(15_000, 10);
const RATE = 400;

for (const groupProtocol of PROTOCOLS) {
  t.test(`a consumer process SIGKILLed mid-stream, group protocol ${groupProtocol} (2 producer processes x ${PER_PRODUCER})`, { ...K.needsCluster(), timeout: 900000 }, async (t) => {
    const s = new Scenario(t, {
      name: underProtocol('consumer-kill', groupProtocol),
      groupProtocol,
      maxWaitMs: 10000,
      sessionTimeoutMs: 6000,
      concurrency: 64,
      handlerMs: 2,
      flagRule: (r, ctx) => ctx.consumer > 0 && ctx.predecessorHandledBy >= 0 && ctx.predecessorHandledBy < ctx.consumer,
    });
    await s.setup();
    const first = await s.startConsumer();
    s.started = Date.now();
    const producers = [await s.startProducer({ count: PER_PRODUCER, rate: RATE }), await s.startProducer({ count: PER_PRODUCER, rate: RATE })];
    const total = 2 * PER_PRODUCER;
    while (fs.statSync(first.logFile).size / F.RECORD < total * 0.4 && first.child.exitCode === null) await K.sleep(20);
    const committed = await s.killConsumer(first);
    const second = await s.startConsumer();
    s.note(`consumer ${second.incarnation} assigned ${second.assigned[0].join(',')}`);
    const exits = await Promise.all(producers.map((p) => p.done));
    const end = await s.untilAllHandled(120000);
    await s.stopConsumer(second);
    t.same(exits.map((e) => e.code), [0, 0], 'producer processes exited normally');
    t.same(producers.map((p) => p.report && p.report.failed), [0, 0], 'no failed delivery');
    t.same(second.report && second.report.errors, [], 'no errors in the second consumer');
    t.ok(committed.some((o) => o > 0), `the killed consumer had committed offsets (${committed.join(',')})`);
    t.equal(end.missing, 0, 'every acknowledged message handled, nothing held');
    const fig = s.analyse();
    t.equal(fig.acked, total, 'every message acknowledged');
    const before = s.logs()[0].filter((r) => r.flagged).length;
    t.equal(before, 0, 'nothing flagged before the kill');
    if (process.env.KDP_ENGINE !== 'client') {
      t.ok(fig.rereads <= fig.rereadBound, `handled again ${fig.rereads}: no more than the killed consumer started in its last commit interval (${fig.rereadBound})`);
    }
    t.comment(`${groupProtocol}: the partitions moved ${second.assignedAt - s.killedAt[0]} ms after the kill`);
    s.report(fig, { groupProtocol });
  });
}
