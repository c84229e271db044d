'use strict';
// Fault scenario b: one broker blackholed for 20 s, then restored, on the real cluster through
// the fault proxy (test/lib/fault-proxy.js; the cluster started with KAFKA_PROXY_PORT, as npm
// run test:kafka does). Two producer processes (DynamicProducer, idempotent, acks=all) spread
// two hot keys; one consumer process (DynamicConsumer, maxWaitMs 45 s) restores their order.
// Broker 2 is blackholed for the clients only (the proxy accepts and passes nothing; new
// connections are held too), while replication stays direct: it stays leader of its
// partitions, whose produce and fetch requests wait; messages elsewhere waiting for a
// predecessor there are held by the consumer. Counted from the values (lib/faults.js):
// nothing acknowledged lost, no duplicate, per producer and key in send order, nothing flagged
// (the blackhole is shorter than maxWaitMs); the longest stall shows the blackhole.
//
// Needs KAFKA_BROKERS and KAFKA_PROXY (npm run test:kafka). FAULTS_LONG=1: 10x the messages,
// a 60 s blackhole and maxWaitMs 120 s.
// Run under each group protocol (lib/faults.js PROTOCOLS: KDP_GROUP_PROTOCOLS, default classic and KIP-848's consumer).

const t = require('tap');
const { Scenario, needsProxy, size, LONG, PROTOCOLS, underProtocol } = require('./lib/faults');

const PER_PRODUCER = size(15_000, 10);
const RATE = 400;
const BLACKHOLE_MS = LONG ? 60000 : 20000;
const BROKER = 1; // route index: the second broker

for (const groupProtocol of PROTOCOLS) {
  t.test(`one broker blackholed for ${BLACKHOLE_MS / 1000} s, then restored, group protocol ${groupProtocol} (2 producer processes x ${PER_PRODUCER})`, { ...needsProxy(), timeout: 900000 }, async (t) => {
    const s = new Scenario(t, { name: underProtocol('blackhole', groupProtocol), groupProtocol, proxy: true, maxWaitMs: LONG ? 120000 : 45000 });
    await s.setup();
    const consumer = await s.startConsumer();
    s.started = Date.now();
    const producers = [await s.startProducer({ count: PER_PRODUCER, rate: RATE }), await s.startProducer({ count: PER_PRODUCER, rate: RATE })];
    await s.untilSent(PER_PRODUCER * 0.4);
    const before = s.proxy.stats()[BROKER].open;
    s.note(`blackhole broker ${BROKER + 1} (${before} open connections) for ${BLACKHOLE_MS / 1000} s`);
    await s.proxy.blackhole(BROKER, BLACKHOLE_MS);
    s.note('restored');
    const exits = await Promise.all(producers.map((p) => p.done));
    const end = await s.untilAllHandled(180000);
    await s.stopConsumer(consumer);
    t.same(exits.map((e) => e.code), [0, 0], 'producer processes exited normally');
    t.same(producers.map((p) => p.report && p.report.failed), [0, 0], 'no failed delivery');
    t.same(consumer.report && consumer.report.errors, [], 'no consumer errors');
    t.ok(before > 0, `the blackholed broker had client connections (${before})`);
    t.equal(end.missing, 0, 'every acknowledged message handled, nothing held');
    const fig = s.analyse();
    t.equal(fig.acked, 2 * PER_PRODUCER, 'every message acknowledged');
    t.equal(fig.duplicates, 0, 'no duplicate (one consumer, never restarted)');
    t.equal(fig.flagged, 0, 'nothing flagged out of order (the blackhole is shorter than maxWaitMs)');
    s.report(fig, { blackholeMs: BLACKHOLE_MS });
  });
}
