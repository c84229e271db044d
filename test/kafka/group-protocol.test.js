'use strict';
// Static membership (group.instance.id, KIP-345) under each group protocol, on the real
// cluster: DynamicConsumers A and B (instances `a` and `b`) read a topic whose hot key the
// producer spreads; A stops and a new A, of the same instance, starts 6 s later: past a
// heartbeat (KIP-848's: 5 s), within the session timeout (classic: librdkafka's 45 s;
// KIP-848's 'consumer': the brokers' 10 s, scripts/kafka.sh).
// librdkafka closes a static member without leaving the group (classic: no LeaveGroup;
// KIP-848: a heartbeat with member epoch -2), so:
//   - the new A gets back the partitions A had, and B's assignment never changes;
//   - nothing A handled is handled again (A's stop committed it), every message is handled;
//   - per key, in produce order across A, the new A and B (handled records: the native engine).
// Rows: [protocol, engine, static]; engine 'client' is node-rdkafka's consumer (no handled
// records: order across members is flagged there rather than waited for, and only counted).
// The last row, without group.instance.id, is the control: there B's assignment changes twice.
//
// Then Confluent's KafkaJS-compatible consumer under KIP-848, wrapped (lib/confluent-kip848.js,
// in a process that cannot load node-rdkafka), when Confluent's client is installed.
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const t = require('tap');
const K = require('./lib/kafka');
const H = require('./lib/hot-key');
const path = require('node:path');
const { nativeBuilt } = require('../lib/native-built');
const { confluentInstalled, CONFLUENT_MISSING } = require('../lib/clients');

const PARTITIONS = 6;
const MESSAGES = 20_000;
const RATE = 4000;
const RESTART_AFTER_MS = 6000;
const ROWS = [['classic', 'native', true], ['consumer', 'native', true], ['consumer', 'client', true], ['consumer', 'native', false]];

for (const [groupProtocol, engine, isStatic] of ROWS) {
  const skip = K.needsCluster().skip ?? (engine === 'native' && !nativeBuilt() ? 'the native engine is not built' : false);
  const title = isStatic ? 'static membership' : 'without group.instance.id (the control)';
  t.test(`${title}, group protocol ${groupProtocol}, engine ${engine}: a member restarted within the session ${isStatic ? 'gets its partitions back' : 'makes the group rebalance'}, nothing replayed`,
    { skip, timeout: 180000 }, async (t) => {
      const topic = K.topicName(`static-${groupProtocol}-${engine}-${isStatic}`);
      const group = `${topic}-group`;
      const replication = Math.min(3, K.brokers().split(',').length);
      await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
      const handled = []; // { at, who, id, keyId, seq, flagged }
      const count = new Uint8Array(MESSAGES);
      const errors = [];
      const events = []; // { at, who, type, partitions }
      const owned = { A: new Set(), B: new Set(), A2: new Set() };
      const make = (who, instance) => {
        const c = H.consumer(group, { engine, resequencer: { maxWaitMs: 3000 } }, { 'group.protocol': groupProtocol, ...(isStatic ? { 'group.instance.id': `${group}-${instance}` } : {}) });
        c.on('error', (err) => errors.push(`${who}: ${err}`));
        for (const type of ['assigned', 'revoked']) {
          c.on(type, (a) => {
            events.push({ at: Date.now(), who, type, partitions: a.map((tp) => tp.partition).sort() });
            for (const tp of a) (type === 'assigned' ? owned[who].add(tp.partition) : owned[who].delete(tp.partition));
          });
        }
        const handler = (m, info) => {
          const v = K.parseValue(m.value);
          if (v === null || v.id >= MESSAGES) return;
          count[v.id]++;
          handled.push({ at: Date.now(), who, ...v, flagged: info.outOfOrder });
        };
        return { c, handler };
      };
      const A = make('A', 'a');
      const B = make('B', 'b');
      const { done: aDone } = await H.runAssigned(A.c, topic, A.handler);
      const { done: bDone } = await H.runAssigned(B.c, topic, B.handler);
      t.equal(A.c.groupProtocol, groupProtocol);
      t.equal(A.c.engine, engine);
      // Both in the group with their shares before anything is produced.
      await H.until(() => owned.A.size + owned.B.size === PARTITIONS && owned.A.size > 0 && owned.B.size > 0, 60000);
      let stoppedAt = 0;
      let restartedAt = 0;
      let A2 = null;
      let a2Done = null;
      let aHad = [];
      const run = await H.produceHot(topic, MESSAGES, {
        hotShare: 0.4,
        ratePerSec: RATE,
        seed: 0x5a7,
        onProgress: async (sent) => {
          if (sent !== MESSAGES / 2) return;
          aHad = [...owned.A].sort();
          stoppedAt = Date.now();
          await A.c.stop();
          await aDone;
          await K.sleep(RESTART_AFTER_MS);
          restartedAt = Date.now();
          A2 = make('A2', 'a');
          ({ done: a2Done } = await H.runAssigned(A2.c, topic, A2.handler));
        },
      });
      const all = await H.until(() => count.every((n) => n > 0) && A2.c.resequencer.held === 0 && B.c.resequencer.held === 0, 60000);
      await K.sleep(600);
      const bAfter = events.filter((e) => e.who === 'B' && e.at >= stoppedAt && e.partitions.length > 0);
      const a2First = events.find((e) => e.who === 'A2' && e.type === 'assigned');
      const stale = [A, A2, B].reduce((n, x) => n + x.c.metrics().rejoins.staleRetries, 0);
      await Promise.all([A2.c.stop(), B.c.stop()]);
      await Promise.all([a2Done, bDone]);
      const final = await H.offsetsOf(group, topic, PARTITIONS);

      let twice = 0;
      for (const n of count) if (n > 1) twice++;
      // Per key, in the order the calls started across the members.
      const last = new Map();
      let outOfOrder = 0;
      for (const h of [...handled].sort((x, y) => x.at - y.at)) {
        if ((last.get(h.keyId) ?? -1) > h.seq) outOfOrder++;
        last.set(h.keyId, Math.max(last.get(h.keyId) ?? -1, h.seq));
      }
      const flagged = handled.filter((h) => h.flagged).length;
      const hotPartitions = new Set();
      for (let id = 0; id < MESSAGES; id++) if (run.keyOf[id] === run.hotId) hotPartitions.add(run.partitionOf[id]);
      t.comment(`A had ${aHad}, the new A got ${a2First ? a2First.partitions : '-'} ${a2First ? a2First.at - restartedAt : '-'} ms after it started; ` +
        `B's changes after A stopped: ${JSON.stringify(bAfter.map(({ at, type, partitions }) => ({ ms: at - stoppedAt, type, partitions })))}; hot key on partitions ${[...hotPartitions].sort()}`);
      t.comment(`handled ${handled.length} (${twice} twice), flagged ${flagged}, out of order ${outOfOrder}; commits made again for a stale member epoch ${stale}`);
      t.same(errors, [], 'no consumer errors');
      t.equal(run.deliveries, MESSAGES, 'every message delivered');
      t.ok(hotPartitions.size > 1, `the hot key was spread (${hotPartitions.size} partitions)`);
      t.ok(aHad.length > 0, `A had partitions (${aHad})`);
      if (isStatic) {
        t.same(a2First?.partitions, aHad, 'the new A got back the partitions A had');
        t.same(bAfter, [], "B's assignment did not change (no rebalance)");
      } else {
        t.ok(bAfter.length > 0, `without it, B's assignment changed (${bAfter.length} changes)`);
      }
      t.ok(all, 'every message handled');
      t.equal(twice, 0, 'nothing handled twice: the new A replayed nothing A handled');
      if (engine === 'native') {
        t.equal(flagged, 0, 'nothing flagged');
        t.equal(outOfOrder, 0, 'per key in produce order across the members');
      }
      t.same(final.committed, final.ends, 'committed = log end');
    });
}

if (!K.brokers()) t.test("Confluent's KafkaJS consumer under KIP-848", { skip: K.needsCluster().skip }, async () => {});
else if (!confluentInstalled()) t.test("Confluent's KafkaJS consumer under KIP-848", { skip: CONFLUENT_MISSING }, async () => {});
else {
  t.spawn(process.execPath, ['--require', path.join(__dirname, '..', 'lib', 'without-node-rdkafka.js'), path.join(__dirname, 'lib', 'confluent-kip848.js')], {
    cwd: K.ROOT,
    env: { ...process.env, KDP_TEST_CLIENT: 'confluent' },
  }, "Confluent's KafkaJS consumer under KIP-848 (lib/confluent-kip848.js, node-rdkafka refused)");
}
