'use strict';
// Fault scenario c: a producer PROCESS SIGKILLed mid-stream and restarted, on the real cluster.
// Two producer processes (DynamicProducer, idempotent, acks=all) spread two hot keys; one
// consumer process (DynamicConsumer, maxWaitMs 5 s) restores their order. Producer 0 is
// SIGKILLed after a third of its messages (right after handing 2,000 more to librdkafka at
// once, so that some are in flight) and started again at once as a new process (a new
// producer id and new chains, docs/ordering.md "Producer restarts") sending the rest.
// Counted from the values (lib/faults.js), with what each process saw acknowledged written to
// a file at once in its delivery callback:
//   - nothing the killed process saw acknowledged is lost (nor anything of the others);
//   - no duplicate (the consumer never restarts; idempotence: no retry duplicates);
//   - per producer process and key, in send order;
//   - flagged only messages of the killed process whose predecessor was never handled (lost
//     in flight, never acknowledged), released with reason 'timeout' after maxWaitMs: the
//     chains it left open hold a consumer at most that bound (docs/ordering.md, Bounds);
//   - the consumer finishes: every acknowledged message handled and nothing held.
//
// Needs KAFKA_BROKERS (npm run test:kafka). FAULTS_LONG=1: 10x the messages.
// Run under each group protocol (lib/faults.js PROTOCOLS: KDP_GROUP_PROTOCOLS, default classic and KIP-848's consumer).

const t = require('tap');
const { Scenario, size, PROTOCOLS, underProtocol } = require('./lib/faults');
const K = require('./lib/kafka');
const F = require('./lib/faults-values');

const PER_PRODUCER = size(15_000, 10);
const RATE = 400;
const MAX_WAIT_MS = 5000;

for (const groupProtocol of PROTOCOLS) {
  t.test(`a producer process SIGKILLed mid-stream and restarted, group protocol ${groupProtocol} (2 producer processes x ${PER_PRODUCER})`, { ...K.needsCluster(), timeout: 900000 }, async (t) => {
    const s = new Scenario(t, {
      name: underProtocol('producer-kill', groupProtocol), groupProtocol,
      maxWaitMs: MAX_WAIT_MS,
      // Only the killed process's messages, after a predecessor that was never handled, by the bound.
      flagRule: (r, ctx) => ctx.producer.killed && r.reason === 'timeout' && ctx.predecessorHandledBy === -1,
    });
    await s.setup();
    const consumer = await s.startConsumer();
    s.started = Date.now();
    const victim = await s.startProducer({ count: PER_PRODUCER, rate: RATE });
    const other = await s.startProducer({ count: PER_PRODUCER, rate: RATE });
    await K.sleep(100);
    while (victim.sent < PER_PRODUCER / 3 && victim.child.exitCode === null) await K.sleep(20);
    // Killed right after handing 2,000 messages to librdkafka at once: some in flight, some
    // not yet sent, so that chains of its hot keys are left open.
    await s.killProducer(victim, 2000);
    const ackedAtKill = s.acked()[victim.incarnation].n;
    // What it sent: the highest message number handled or acknowledged, read after the run.
    const killedAt = Date.now();
    const restarted = await s.startProducer({ count: PER_PRODUCER - ackedAtKill, rate: RATE });
    s.note(`producer 0 restarted as process ${restarted.incarnation} for the remaining ${PER_PRODUCER - ackedAtKill} (what it had not seen acknowledged, as an application would resend)`);
    const exits = await Promise.all([other.done, restarted.done]);
    const end = await s.untilAllHandled(MAX_WAIT_MS + 120000);
    await s.stopConsumer(consumer);
    t.same(exits.map((e) => e.code), [0, 0], 'the other and the restarted producer processes exited normally');
    t.same([other, restarted].map((p) => p.report && p.report.failed), [0, 0], 'no failed delivery');
    t.same(consumer.report && consumer.report.errors, [], 'no consumer errors');
    t.equal(end.missing, 0, 'every acknowledged message handled, nothing held: the consumer is not stalled');
    const fig = s.analyse();
    t.equal(fig.duplicates, 0, 'no duplicate (one consumer, never restarted)');
    // How long the killed process's open chains held messages of the others.
    let othersStall = 0;
    for (const r of s.logs()[0]) {
      if (Math.floor(r.id / F.ID_SPAN) !== victim.incarnation && r.at >= killedAt) othersStall = Math.max(othersStall, r.at - r.sentAt);
    }
    const killedAcked = s.acked()[victim.incarnation].n;
    const killedHandled = new Set(s.logs()[0].filter((r) => Math.floor(r.id / F.ID_SPAN) === victim.incarnation).map((r) => r.id)).size;
    t.comment(`killed with ${killedAcked} acknowledged, ${killedHandled} of its messages in the topic (${killedHandled - killedAcked} written but never acknowledged to it); flagged ${fig.flagged} (maxWaitMs ${MAX_WAIT_MS}); longest send-to-handling of the other processes' messages after the kill ${othersStall} ms`);
    t.ok(killedAcked > 0, `the killed process had acknowledged messages (${killedAcked})`);
    s.report(fig, { killedAcked, killedHandled, othersStallMs: othersStall, maxWaitMs: MAX_WAIT_MS });
  });
}
