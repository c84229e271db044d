'use strict';
// wrapPlatformaticConsumer on the real cluster: two DynamicProducers (Node 20) send a hot key
// (spread over several partitions, with order headers) and Zipf background keys, while
// @platformatic/kafka's consumers wrapped by wrapPlatformaticConsumer read the topic under
// Node 22 (this file, run as a child with KDP_PLATFORMATIC_CHILD set; test/lib/platformatic.js),
// with handlers that await timers and turns of the event loop, 16 calls at once in key order:
//   - one consumer;
//   - a group of two, the second joining once the first has handled a third of the messages,
//     under the classic group protocol and under KIP-848's (@platformatic/kafka's groupProtocol
//     'consumer': the broker assigns, and a change comes in a heartbeat without a join event).
// What was produced comes from the delivery reports (which producer, key, place in its key);
// the child reports every handler call in the order they began. Each producer's key must be
// handled in the order sent: a message handled after a later one of its key, or before its
// predecessor, is a violation, explained when a message that went ahead was handed out flagged
// (groupOrder 'flag': its predecessor was on a partition another member owned, or was given up
// on after maxWaitMs); none may be unexplained, and none may be missing. Messages handled again
// (read again by a partition's next owner, at least once) are counted, not checked.
//
// Needs KAFKA_BROKERS (npm run test:kafka) and Node 22 with @platformatic/kafka (bench/node22.js).

if (process.env.KDP_PLATFORMATIC_CHILD) {
  child().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  parent();
}

/** Under Node 22: consumes `MESSAGES` distinct messages with one or two wrapped consumers and reports the calls. */
async function child() {
  const { platformatic, reportResult } = require('../lib/platformatic');
  const { wrapPlatformaticConsumer } = require('../..');
  const { Consumer } = await platformatic();
  const { brokers, topic, group, messages, members, groupProtocol } = JSON.parse(process.env.KDP_PLATFORMATIC_CHILD);
  const log = []; // [who, id, flagged ? reason : '']
  const seen = new Uint8Array(messages);
  let distinct = 0;
  const errors = [];
  const events = [];
  const started = Date.now();
  const make = (who) => {
    const consumer = new Consumer({
      groupId: group, clientId: `kdp-test-${who}`, bootstrapBrokers: brokers.split(','), maxWaitTime: 200,
      // Under KIP-848 the session and heartbeat are the broker's (the client's defaults stand, and rebalanceTimeout must not be below them).
      ...(groupProtocol === 'consumer' ? { groupProtocol } : { sessionTimeout: 10000, heartbeatInterval: 500, rebalanceTimeout: 15000 }),
    });
    const dc = wrapPlatformaticConsumer(consumer, { commitIntervalMs: 200, resequencer: { maxWaitMs: 5000 } });
    // With the protocol errors a response gathered (their ids: Kafka's error names).
    const ids = (e) => (Array.isArray(e?.errors) ? ` [${e.errors.map((x) => x.apiId ?? x.message).join(', ')}]` : '');
    dc.on('error', (err) => errors.push(`${who}: ${err.message}${ids(err.cause)}`));
    dc.on('stopped', (err) => err && errors.push(`${who} stopped: ${err.message}`));
    for (const type of ['assigned', 'revoked']) dc.on(type, (list) => events.push(`${Date.now() - started} ms: ${'AB'[who]} ${type} ${list.map((tp) => tp.partition)}`));
    const handler = async (m, info) => {
      const id = m.value.readUInt32BE(0);
      log.push([who, id, info.ordered ? '' : info.reason]);
      if (id < messages && !seen[id]) {
        seen[id] = 1;
        distinct++;
      }
      // I/O-like: a turn of the event loop for most messages, a timer for one in eight.
      if ((id & 7) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      else await new Promise((resolve) => setImmediate(resolve));
    };
    return { consumer, dc, handler };
  };
  const run = (c) => c.dc.run({ topics: [topic], handler: c.handler, concurrency: 16, consume: { mode: 'committed', fallbackMode: 'earliest' } });
  const until = async (ready, ms) => {
    const deadline = Date.now() + ms;
    while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return ready();
  };
  const all = [make(0)];
  await run(all[0]);
  if (members > 1) {
    await until(() => distinct >= messages / 3, 60000);
    all.push(make(1));
    events.push(`${Date.now() - started} ms: B joins at ${distinct} handled`);
    await run(all[1]);
  }
  const complete = await until(() => distinct === messages && all.every((c) => c.dc.metrics().held === 0), 90000);
  for (const c of all) await c.dc.stop();
  for (const c of all) await c.consumer.close(true);
  reportResult({ complete, log, errors, events, handled: all.map((_, who) => log.filter((l) => l[0] === who).length) });
}

function parent() {
  const t = require('tap');
  const K = require('./lib/kafka');
  const { platformaticSkip, runPlatformatic } = require('../lib/platformatic');
  const { DynamicProducer } = require('../..');
  const { KeyStream, parseWorkload, prng } = require('../../build/tools/workload');

  const PRODUCERS = 2;
  const PER_PRODUCER = Number(process.env.KDP_KAFKA_PLATFORMATIC_MESSAGES || 15_000);
  const MESSAGES = PRODUCERS * PER_PRODUCER;
  const PARTITIONS = 6;
  const KEYS = 2000;
  const RATE = 4000; // msg/s per producer: consumed while produced
  // Under KIP-848 a member joins in about one broker heartbeat interval (5 s): a production that lasts longer than that.
  const RATE_KIP848 = 1200;

  /** One producer's messages: ids base .. base+count-1, 40% on the hot key, values K.value(id, keyId, place in this producer's key). */
  async function produce(topic, base, count, keys, seed, sent, rate) {
    const p = new DynamicProducer({
      'bootstrap.servers': K.brokers(), 'enable.idempotence': true, 'linger.ms': 5, 'compression.codec': 'lz4', dr_msg_cb: true, log_level: 3,
    }, { acks: 'all', partitioner: 'murmur2_random' }, { metadataRefreshMs: 5000, horizon: { messages: 2000 }, ...K.clientOptions() });
    const errors = [];
    p.on('delivery', (err, report) => {
      if (err) return void errors.push(String(err));
      const v = K.parseValue(report.value);
      if (v !== null) sent[v.id] = { keyId: v.keyId, seq: v.seq, partition: report.partition, producer: base / count };
    });
    await p.connect();
    await p.refreshMetadata(topic);
    const stream = new KeyStream(parseWorkload('zipf:1.0'), KEYS, seed);
    const rand = prng(seed ^ 0x5a5a5a);
    const perKey = new Uint32Array(KEYS + 1);
    const started = Date.now();
    for (let i = 0; i < count; i++) {
      const keyId = rand() < 0.4 ? KEYS : stream.next();
      if (!p.produce(topic, K.value(base + i, keyId, perKey[keyId]++), keys[keyId])) await new Promise((resolve) => p.once('drain', resolve));
      if ((i + 1) % 500 === 0) {
        const ahead = started + ((i + 1) * 1000) / rate - Date.now();
        await new Promise((resolve) => (ahead > 0 ? setTimeout(resolve, ahead) : setImmediate(resolve)));
      }
    }
    await p.flush(60000);
    await p.disconnect();
    return errors;
  }

  /** Per (producer, key): violations of send order in the calls' order, and whether a message handed out flagged explains each. */
  function check(log, sent) {
    const chains = new Map(); // producer:key -> { handled: Set<seq>, max, flaggedAbove: seq[] }
    const out = { violations: 0, unexplained: [], again: 0, flagged: {}, missing: 0 };
    const handledIds = new Uint8Array(MESSAGES);
    for (const [, id, reason] of log) {
      const m = sent[id];
      if (m === undefined) continue;
      if (reason) out.flagged[reason] = (out.flagged[reason] ?? 0) + 1;
      if (handledIds[id]) {
        out.again++;
        continue;
      }
      handledIds[id] = 1;
      const name = `${m.producer}:${m.keyId}`;
      let c = chains.get(name);
      if (!c) chains.set(name, (c = { handled: new Set(), max: -1, flagged: [] }));
      const s = m.seq;
      const behind = c.max > s; // a later one of its key went first
      const skipped = s > 0 && !c.handled.has(s - 1); // its predecessor not handled yet
      if (behind || skipped) {
        out.violations++;
        // Behind: the first message above it that went before it (and so every later one) follows one that went ahead
        // flagged, between the two; skipped: it went ahead flagged itself.
        let above = s + 1;
        while (behind && !c.handled.has(above)) above++;
        const explained = (!behind || c.flagged.some((f) => f > s && f <= above)) && (!skipped || reason !== '');
        if (!explained && out.unexplained.length < 10) out.unexplained.push(`producer ${m.producer} key ${m.keyId}: seq ${s} (partition ${m.partition}) ${behind ? `after seq ${c.max}` : `before seq ${s - 1}`}`);
        if (!explained) out.unexplainedCount = (out.unexplainedCount ?? 0) + 1;
      }
      c.handled.add(s);
      if (reason) c.flagged.push(s);
      if (s > c.max) c.max = s;
    }
    for (let id = 0; id < MESSAGES; id++) if (sent[id] !== undefined && !handledIds[id]) out.missing++;
    return out;
  }

  for (const [members, groupProtocol] of [[1, 'classic'], [2, 'classic'], [2, 'consumer']]) {
    t.test(`@platformatic/kafka's consumer, wrapped: ${members === 1 ? 'one consumer' : 'a group of two, the second joining mid-run'}, group protocol ${groupProtocol} (${MESSAGES} messages of ${PRODUCERS} producers)`,
      { ...K.needsCluster(), skip: K.needsCluster().skip ?? platformaticSkip(), timeout: 180000 }, async (t) => {
        const total = K.lap();
        const topic = K.topicName(`platformatic-${members}-${groupProtocol}`);
        const replication = Math.min(3, K.brokers().split(',').length);
        await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
        const salt = Math.random().toString(36).slice(2, 6);
        const keys = Array.from({ length: KEYS }, (_, i) => `k${i}-${salt}`);
        keys.push(`hot-${salt}`);
        const sent = new Array(MESSAGES);
        const env = { KDP_PLATFORMATIC_CHILD: JSON.stringify({ brokers: K.brokers(), topic, group: `${topic}-group`, messages: MESSAGES, members, groupProtocol }) };
        const consumed = runPlatformatic(__filename, { env, timeout: 170000 });
        const produced = await Promise.all(Array.from({ length: PRODUCERS }, (_, i) => produce(topic, i * PER_PRODUCER, PER_PRODUCER, keys, 0x51 + i * 7 + members, sent,
          groupProtocol === 'consumer' ? RATE_KIP848 : RATE)));
        const { result } = await consumed;
        const delivered = sent.filter((m) => m !== undefined).length;
        const hotPartitions = [0, 1].map((p) => new Set(sent.filter((m) => m && m.producer === p && m.keyId === KEYS).map((m) => m.partition)).size);
        const c = check(result.log, sent);
        for (const e of result.events) t.comment(e);
        t.comment(`delivered ${delivered}; hot key on ${hotPartitions.join(' and ')} partitions; handled ${result.handled.join(' + ')} calls; handled again ${c.again}; flagged ${JSON.stringify(c.flagged)}; violations ${c.violations} (unexplained ${c.unexplainedCount ?? 0})`);
        t.same(produced.flat(), [], 'no delivery errors');
        t.equal(delivered, MESSAGES, 'every message delivered');
        t.ok(hotPartitions.every((n) => n > 1), `each producer spread the hot key (${hotPartitions.join(', ')} partitions)`);
        t.same(result.errors, [], 'no consumer errors');
        t.ok(result.complete, 'every message handled, nothing held at the end');
        t.equal(c.missing, 0, 'no message lost');
        t.same(c.unexplained, [], 'no unexplained order violation');
        if (members === 1) t.equal(c.violations, 0, 'one consumer: no violation at all');
        else t.ok(result.handled[1] > 0, `the second member handled messages (${result.handled[1]})`);
        t.comment(`platformatic-consumer (${members}, ${groupProtocol}): ${total()} ms`);
      });
  }
}
