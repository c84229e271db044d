'use strict';
// Fault scenario a: connection resets and latency spikes during a run, on the real cluster
// through the fault proxy (test/lib/fault-proxy.js; the cluster started with KAFKA_PROXY_PORT,
// as npm run test:kafka does). Two producer processes (DynamicProducer, idempotent, acks=all)
// spread two hot keys over Zipf background keys; one consumer process (DynamicConsumer)
// restores their order; all clients go through the proxy, which adds 2 ms each way and, every
// few seconds in turn: resets every connection of one broker, resets every connection, adds a
// 250 ms latency spike for 2 s, stalls one broker's connections for 3 s, limits the bandwidth
// to 256 kB/s for 3 s. Counted from the values (lib/faults.js): nothing acknowledged lost, no
// duplicate (the consumer never restarts), per producer and key in send order, nothing flagged.
//
// Needs KAFKA_BROKERS and KAFKA_PROXY (npm run test:kafka). FAULTS_LONG=1: 10x the messages.
// Run under each group protocol (lib/faults.js PROTOCOLS: KDP_GROUP_PROTOCOLS, default classic and KIP-848's consumer).

const t = require('tap');
const { Scenario, needsProxy, size, TRANSIENT_CONNECTION_ERRORS, PROTOCOLS, underProtocol } = require('./lib/faults');

const PER_PRODUCER = size(25_000, 10);
const RATE = 400; // msg/s per producer process
const EVERY_MS = 5000;

for (const groupProtocol of PROTOCOLS) {
  t.test(`connection resets and latency spikes, group protocol ${groupProtocol} (2 producer processes x ${PER_PRODUCER})`, { ...needsProxy(), timeout: 900000 }, async (t) => {
    const s = new Scenario(t, { name: underProtocol('resets-latency', groupProtocol), groupProtocol, proxy: true, maxWaitMs: 30000 });
    await s.setup();
    s.proxy.set({ latencyMs: 2 });
    const consumer = await s.startConsumer();
    s.started = Date.now();
    const producers = [await s.startProducer({ count: PER_PRODUCER, rate: RATE }), await s.startProducer({ count: PER_PRODUCER, rate: RATE })];
    const running = () => producers.some((p) => p.child.exitCode === null);
    const faults = { resets: 0, spikes: 0, stalls: 0, limits: 0 };
    let step = 0;
    const script = (async () => {
      while (running()) {
        await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
        if (!running()) break;
        const broker = step % s.proxy.routes.length;
        switch (step++ % 5) {
          case 0:
            faults.resets += s.proxy.reset(broker);
            s.note(`reset broker ${broker + 1}'s connections`);
            break;
          case 1:
            s.note('latency spike 250 ms for 2 s');
            faults.spikes++;
            await s.proxy.spike(250, 2000);
            break;
          case 2:
            faults.resets += s.proxy.reset();
            s.note('reset every connection');
            break;
          case 3:
            s.note(`stall broker ${broker + 1}'s connections for 3 s`);
            faults.stalls += await s.proxy.stall((c) => c.route === broker, 3000);
            s.note(`(${faults.stalls} connections stalled so far)`);
            break;
          default:
            s.note('bandwidth 256 kB/s for 3 s');
            faults.limits++;
            s.proxy.set({ bandwidth: 256 * 1024 });
            await new Promise((resolve) => setTimeout(resolve, 3000));
            s.proxy.set({ bandwidth: 0 });
        }
      }
    })();
    const exits = await Promise.all(producers.map((p) => p.done));
    await script;
    t.comment(`faults injected: ${JSON.stringify(faults)}; producers done in ${Date.now() - s.started} ms`);
    const end = await s.untilAllHandled(120000);
    await s.stopConsumer(consumer);
    t.same(exits.map((e) => e.code), [0, 0], 'producer processes exited normally');
    // librdkafka reports a reset connection ('broker transport failure') and, when every
    // connection was reset at once, 'all broker connections are down': transient, it reconnects
    // (delivery failures are counted above). Any other error fails the test.
    const errors = [...producers.flatMap((p) => (p.report ? p.report.errors : ['no report'])), ...(consumer.report ? consumer.report.errors : ['no report'])];
    t.same(errors.filter((e) => !TRANSIENT_CONNECTION_ERRORS.test(e)), [], `no producer or consumer errors beyond transient connection errors (${errors.length})`);
    t.same(producers.map((p) => p.report && p.report.failed), [0, 0], 'no failed delivery');
    t.ok(faults.resets > 0 && faults.spikes > 0, `resets (${faults.resets} connections) and spikes (${faults.spikes}) injected`);
    t.equal(end.missing, 0, 'every acknowledged message handled, nothing held');
    const fig = s.analyse();
    t.equal(fig.acked, 2 * PER_PRODUCER, 'every message acknowledged');
    t.equal(fig.duplicates, 0, 'no duplicate (one consumer, never restarted)');
    t.equal(fig.flagged, 0, 'nothing flagged out of order');
    s.report(fig, { resets: faults.resets, spikes: faults.spikes });
  });
}
