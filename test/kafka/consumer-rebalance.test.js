'use strict';
// Incremental rebalancing on the real cluster: DynamicConsumer A reads a topic (a hot key at
// 40% over Zipf background keys, produced while it is read); mid-stream DynamicConsumer B
// joins the group. With cooperative-sticky assignment (group protocol 'classic') or the
// broker's (KIP-848, 'consumer') only the partitions that move are revoked from A; the first
// test runs under each protocol (KDP_GROUP_PROTOCOLS, default 'classic,consumer') and prints
// how long B's join and B's leave took under each, side by side:
//   - A keeps handling messages of the partitions it keeps in the window between B's
//     subscribe and the end of the rebalance (B's partitions assigned); the longest pause in
//     that flow is reported;
//   - once everything is produced and handled, B leaves (its partitions go back to A), then A
//     stops: every produced message was handled at least once across A and B, and the group's
//     committed offsets are the log end on every partition.
// A second test revokes partitions from A while its handler is behind, and hands them back:
// A must neither handle the revoked partitions' queued messages nor, once they are back,
// commit offsets it remembered from before (behind what B committed meanwhile).
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const t = require('tap');
const K = require('./lib/kafka');
const H = require('./lib/hot-key');

const RATE = 6000;
const PARTITIONS = 6;
const MESSAGES = Number(process.env.KDP_KAFKA_REBALANCE_MESSAGES || 72_000);
const JOIN_AT = 24000; // B joins once this many messages are sent
const WAIT_MS = 2000; // maxWaitMs of both consumers
const MAX_PAUSE_MS = 1500; // the longest pause allowed in A's kept partitions during the rebalance

const PROTOCOLS = (process.env.KDP_GROUP_PROTOCOLS || 'classic,consumer').split(',');
/** Per protocol, what B's join and leave took (ms): printed side by side once all ran. */
const times = new Map();

for (const groupProtocol of PROTOCOLS) {
  t.test(`a second consumer joins mid-stream, group protocol ${groupProtocol}: kept partitions keep flowing, nothing lost or left uncommitted`, { ...K.needsCluster(), timeout: 300000 }, async (t) => {
    const total = K.lap();
    const topic = K.topicName(`rebalance-${groupProtocol}`);
    const group = `${topic}-group`;
    const replication = Math.min(3, K.brokers().split(',').length);
    await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });

    const count = [new Uint16Array(MESSAGES), new Uint16Array(MESSAGES)];
    const handled = [[], []]; // per consumer: { at, partition, id, flagged }
    const events = []; // { at, who, type, partitions }
    const errors = [];
    let joinAt = 0;
    const owned = [new Set(), new Set()];
    let afterRevoke = 0; // messages A or B handled of a partition no longer assigned to it
    const make = (who) => {
      const c = H.consumer(group, { resequencer: { maxWaitMs: WAIT_MS, maxBufferedMessages: 500000 } }, { 'group.protocol': groupProtocol });
      c.on('error', (err) => errors.push(`${'AB'[who]} at ${Date.now() - (joinAt || Date.now())} ms: ${err}`));
      c.on('paused', () => events.push({ at: Date.now(), who, type: 'paused', partitions: [] }));
      c.on('resumed', () => events.push({ at: Date.now(), who, type: 'resumed', partitions: [] }));
      for (const type of ['assigned', 'revoked']) {
        c.on(type, (assignment) => {
          const partitions = assignment.map((tp) => tp.partition);
          events.push({ at: Date.now(), who, type, partitions });
          for (const p of partitions) (type === 'assigned' ? owned[who].add(p) : owned[who].delete(p));
        });
      }
      const handler = (m, info) => {
        const v = K.parseValue(m.value);
        if (v === null || v.id >= MESSAGES) return;
        count[who][v.id]++;
        if (!owned[who].has(m.partition)) afterRevoke++;
        handled[who].push({ at: Date.now(), partition: m.partition, id: v.id, flagged: info.outOfOrder, reason: info.reason });
      };
      return { c, handler };
    };

    const A = make(0);
    const { done: aDone } = await H.runAssigned(A.c, topic, A.handler);
    let B = null;
    let bDone = null;
    let leaveAt = 0;
    const run = await H.produceHot(topic, MESSAGES, {
      hotShare: 0.4,
      ratePerSec: RATE,
      seed: 0x7eb,
      onProgress: async (sent) => {
        if (sent === JOIN_AT) {
          B = make(1);
          await B.c.connect();
          joinAt = Date.now();
          bDone = B.c.run([topic], B.handler);
        }
      },
    });
    const handledOnce = () => {
      for (let id = 0; id < MESSAGES; id++) if (count[0][id] + count[1][id] === 0) return false;
      return true;
    };
    const all = await H.until(() => handledOnce() && A.c.resequencer.held === 0 && B.c.resequencer.held === 0, 60000);
    await K.sleep(600); // a commit interval or two
    const before = await H.offsetsOf(group, topic, PARTITIONS);
    // B leaves: its partitions go back to A, which then commits for them.
    leaveAt = Date.now();
    const back = new Promise((resolve) => A.c.once('assigned', resolve));
    await B.c.stop();
    await bDone;
    const returned = await H.within(back, 20000);
    const leaveMs = Date.now() - leaveAt;
    const stale = [A.c.metrics().rejoins.staleRetries, B.c.metrics().rejoins.staleRetries];
    await K.sleep(600);
    await A.c.stop();
    await aDone;
    t.comment(`produced ${MESSAGES} at ${RATE} msg/s in ${run.producedMs} ms (${run.perKey[run.hotId]} of the hot key); B joined at ${joinAt - run.started} ms, left at ${leaveAt - run.started} ms`);
    t.comment(`committed before B left ${before.committed.join(',')}, log end ${before.ends.join(',')}`);
    const final = await H.offsetsOf(group, topic, PARTITIONS);

    const rel = (at) => `${at - joinAt} ms`;
    for (const e of events) t.comment(`${rel(e.at).padStart(9)}  ${'AB'[e.who]} ${e.type} ${e.partitions.join(',') || '(none)'}`);
    const firstA = events.find((e) => e.who === 0 && e.type === 'assigned').partitions;
    const revokedA = events.filter((e) => e.who === 0 && e.type === 'revoked' && e.at >= joinAt && e.at < leaveAt).flatMap((e) => e.partitions);
    const bAssigned = events.find((e) => e.who === 1 && e.type === 'assigned' && e.partitions.length > 0);
    const kept = firstA.filter((p) => !revokedA.includes(p));
    const endAt = bAssigned ? bAssigned.at : Infinity;
    const inWindow = handled[0].filter((h) => h.at >= joinAt && h.at <= endAt && kept.includes(h.partition));
    let gap = 0;
    let prev = joinAt;
    for (const h of inWindow) {
      gap = Math.max(gap, h.at - prev);
      prev = h.at;
    }
    gap = Math.max(gap, Math.min(endAt, Date.now()) - prev);
    // The same flow in the seconds before B joined, for comparison.
    const beforeJoin = handled[0].filter((h) => h.at >= joinAt - (endAt - joinAt) && h.at < joinAt && kept.includes(h.partition)).length;
    const buckets = [];
    for (const h of handled[0]) {
      if (h.at < joinAt - 1000 || h.at > endAt + 1000 || !kept.includes(h.partition)) continue;
      const b = Math.floor((h.at - joinAt + 1000) / 250);
      buckets[b] = (buckets[b] ?? 0) + 1;
    }
    t.comment(`A's kept partitions, messages handled per 250 ms from 1 s before B joined to 1 s after the rebalance: ${Array.from(buckets, (x) => x ?? 0).join(' ')}`);
    let missing = 0;
    let twice = 0;
    for (let id = 0; id < MESSAGES; id++) {
      const n = count[0][id] + count[1][id];
      if (n === 0) missing++;
      if (n > 1) twice++;
    }
    const flagged = handled.map((list) => list.filter((h) => h.flagged).length);
    t.comment(`A kept ${kept.join(',')}, gave up ${revokedA.join(',')}; rebalance window ${endAt - joinAt} ms: A handled ${inWindow.length} messages of its kept partitions in it (${beforeJoin} in as long before B joined), longest pause ${gap} ms`);
    t.comment(`handled: A ${handled[0].length}, B ${handled[1].length}; re-delivered ${twice}; handled after their partition was revoked ${afterRevoke}; flagged out of order: A ${flagged[0]}, B ${flagged[1]}`);

    t.same(errors, [], 'no consumer errors');
    t.equal(run.deliveries, MESSAGES, 'every message delivered');
    t.ok(revokedA.length > 0 && kept.length > 0, `A gave up some partitions (${revokedA}) and kept others (${kept})`);
    t.ok(bAssigned !== undefined, `B was assigned partitions (${bAssigned ? bAssigned.partitions : '-'}), ${endAt - joinAt} ms after it subscribed`);
    t.ok(handled[1].length > 0, `B handled messages (${handled[1].length})`);
    t.ok(inWindow.length > 0, `A kept handling its kept partitions during the rebalance (${inWindow.length} messages in ${endAt - joinAt} ms)`);
    t.ok(gap < MAX_PAUSE_MS, `the longest pause in that flow is short (${gap} ms < ${MAX_PAUSE_MS} ms)`);
    t.ok(all, 'every produced message handled at least once, nothing held');
    t.same(before.committed, before.ends, 'committed offsets = log end with both consumers in the group');
    t.ok(returned !== null, `B's partitions went back to A when B left (${returned ? returned.map((tp) => tp.partition) : '-'})`);
    t.equal(missing, 0, 'no message missing');
    t.same(final.committed, final.ends, `committed offsets = log end on every partition (${final.ends.join(',')})`);
    t.equal(A.c.groupProtocol, groupProtocol);
    // A message whose predecessor's partition is between owners waits at most maxWaitMs (docs/ordering.md, Bounds): flags only then.
    const moving = (at) => (at >= joinAt && at <= endAt + WAIT_MS + 1000) || (at >= leaveAt && at <= leaveAt + leaveMs + WAIT_MS + 1000);
    const flags = handled.flat().filter((h) => h.flagged);
    t.same(flags.filter((h) => !moving(h.at)).map((h) => `${h.id} at ${h.at - joinAt} ms (${h.reason})`), [],
      `flagged only while partitions moved (${flags.length}: ${flags.map((h) => h.reason).join(',') || 'none'})`);
    times.set(groupProtocol, { join: endAt - joinAt, leave: leaveMs });
    t.comment(`consumer-rebalance (${groupProtocol}): B's join took ${endAt - joinAt} ms (subscribe to its partitions), its leave ${leaveMs} ms (stop() to A's partitions back); commits made again for a stale member epoch: A ${stale[0]}, B ${stale[1]}; ${total()} ms`);
  });
}

t.test('rebalance times by group protocol', { ...K.needsCluster() }, async (t) => {
  for (const [protocol, { join, leave }] of times) t.comment(`rebalance times, ${protocol.padEnd(8)}: join ${String(join).padStart(6)} ms, leave ${String(leave).padStart(6)} ms`);
  t.pass(`measured under ${[...times.keys()].join(', ')}`);
});

// A's handler stalls just before B joins, so A still has released-but-unhandled messages of the
// partitions it gives up when they are revoked; they come back to A when B leaves. A must not
// then commit offsets it remembered from before (behind what B committed meanwhile).
t.test('partitions revoked while the handler is behind, then handed back: the committed offsets stay at the log end', { ...K.needsCluster(), timeout: 300000 }, async (t) => {
  const total = K.lap();
  const topic = K.topicName('handback');
  const group = `${topic}-group`;
  const messages = 30000;
  const replication = Math.min(3, K.brokers().split(',').length);
  await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
  const count = [new Uint16Array(messages), new Uint16Array(messages)];
  const errors = [];
  const owned = [new Set(), new Set()];
  let afterRevoke = 0;
  let stall = null; // while set, A's handler waits for it
  let release = () => undefined;
  const make = (who) => {
    const c = H.consumer(group, { resequencer: { maxWaitMs: WAIT_MS } });
    c.on('error', (err) => errors.push(`${'AB'[who]}: ${err}`));
    c.on('assigned', (a) => a.forEach((tp) => owned[who].add(tp.partition)));
    c.on('revoked', (a) => a.forEach((tp) => owned[who].delete(tp.partition)));
    return {
      c,
      handler: async (m) => {
        if (who === 0 && stall) await stall;
        const v = K.parseValue(m.value);
        if (v === null || v.id >= messages) return;
        count[who][v.id]++;
        if (!owned[who].has(m.partition)) afterRevoke++;
      },
    };
  };
  const A = make(0);
  const { done: aDone } = await H.runAssigned(A.c, topic, A.handler);
  let B = null;
  let bDone = null;
  let revokedWhileBehind = -1;
  A.c.on('revoked', () => {
    if (revokedWhileBehind < 0 && stall) {
      revokedWhileBehind = A.c.metrics().waiting; // released, not yet handled
      setTimeout(release, 200);
    }
  });
  await H.produceHot(topic, messages, {
    hotShare: 0.4,
    ratePerSec: RATE,
    seed: 0xbac,
    onProgress: async (sent) => {
      if (sent === 12000) stall = new Promise((resolve) => { release = () => { stall = null; resolve(); }; });
      if (sent === 15000) {
        B = make(1);
        await B.c.connect();
        bDone = B.c.run([topic], B.handler);
      }
    },
  });
  setTimeout(() => release(), 15000).unref(); // in case no revoke came
  const handledOnce = () => {
    for (let id = 0; id < messages; id++) if (count[0][id] + count[1][id] === 0) return false;
    return true;
  };
  const all = await H.until(() => handledOnce() && A.c.resequencer.held === 0 && B.c.resequencer.held === 0, 60000);
  await K.sleep(600);
  const both = await H.offsetsOf(group, topic, PARTITIONS);
  const back = new Promise((resolve) => A.c.once('assigned', resolve));
  await B.c.stop();
  await bDone;
  const returned = await H.within(back, 20000);
  await K.sleep(1000); // A commits for the partitions it got back
  const handedBack = await H.offsetsOf(group, topic, PARTITIONS);
  await A.c.stop();
  await aDone;
  const final = await H.offsetsOf(group, topic, PARTITIONS);
  t.comment(`A's handler was ${revokedWhileBehind} messages behind at the revoke; A handled ${afterRevoke} messages of partitions no longer its own`);
  t.comment(`committed with both: ${both.committed.join(',')}; after B left: ${handedBack.committed.join(',')}; at the end: ${final.committed.join(',')}; log end ${final.ends.join(',')}`);
  t.same(errors, [], 'no consumer errors');
  t.ok(all, 'every produced message handled at least once');
  t.ok(returned !== null, `B's partitions went back to A (${returned ? returned.map((tp) => tp.partition) : '-'})`);
  t.ok(revokedWhileBehind > 0, `A's handler was behind when its partitions were revoked (${revokedWhileBehind} messages queued)`);
  t.ok(afterRevoke <= 1, `A did not handle what it had queued of the revoked partitions (${afterRevoke}: at most the one in the handler's hands)`);
  t.same(both.committed, both.ends, 'committed = log end with both consumers in the group');
  t.same(handedBack.committed, handedBack.ends, 'committed = log end after B left and A took its partitions back');
  t.same(final.committed, final.ends, 'committed = log end after A stopped');
  t.comment(`handback: ${total()} ms`);
});
