'use strict';
// A spread key restored in produce order by DynamicConsumer on the real cluster.
//
// DynamicProducer (horizon 2,000 messages) sends a hot key that takes 40% of the traffic over
// Zipf background keys, then 0.2% for a while (it cools), then 40% again (hot again); each
// message's value carries its number within its own key. A DynamicConsumer reads the topic
// while it is produced, with partition 0 paused for the first seconds (so the hot key's
// messages on the other partitions wait in the resequencer for their predecessors on 0), and
// is stopped mid-stream; a second DynamicConsumer of the same group carries on.
//   - each key's messages are handled in produce order; re-delivered messages after the
//     restart (sequence <= the last one handled of that key) are counted and, with the re-read
//     range's messages the second consumer skipped, must be exactly the re-read range: messages
//     the first consumer handled at or above the offset it had committed on their partition (it
//     is stopped while the partition of the hot key's last handled message is held back, so
//     that the key's messages on its other partitions wait in its resequencer at the stop and
//     there is such a range). On the native engine the stop's commit carries the handled record,
//     so the second consumer skips the whole range (docs/ordering.md, "Restart and rebalance")
//     and re-delivers nothing; on the client engine it re-delivers the whole range;
//   - no message missing; the group's committed offsets = log end at the end;
//   - outOfOrder flags: none before the restart (one consumer reads every partition, nothing
//     capped); after it, only on messages whose predecessor was handled before the restart,
//     released after maxWaitMs (without handled records: with them the second consumer knows
//     what the first one handled).
//
// Needs KAFKA_BROKERS (npm run test:kafka). KDP_KAFKA_ORDER_MESSAGES changes the count.
// KDP_TEST_CLIENT=confluent runs it on Confluent's client (test/kafka/confluent.test.js).

const t = require('tap');
const K = require('./lib/kafka');
const H = require('./lib/hot-key');

const MESSAGES = Number(process.env.KDP_KAFKA_ORDER_MESSAGES || 80_000);
const RATE = 10000; // msg/s: consumed while produced
const PARTITIONS = 6;
const PAUSE_MS = 2500; // partition 0 of the first consumer paused this long after production starts
const WAIT_BEFORE_MS = 10000; // maxWaitMs of the first consumer: the pause never times out
// maxWaitMs of the second one: short where a predecessor handled before the restart is not known
// to it (no handled records: it waits that long, then goes flagged). With records it is known,
// and the second consumer skips the re-read range of the partitions the first one read ahead on,
// reaching their new messages before those of the partition held back at the stop: their
// messages then wait for that partition to catch up, which takes more than 2 s on a loaded
// machine, so it gets the first one's maxWaitMs.
const WAIT_AFTER_MS = 2000;
const RESTART_AT = 0.6; // the first consumer is stopped once it has handled this share
const STOP_PAUSE_MS = 700; // a partition of the hot key paused this long before the first consumer's stop
const HOT_ID = 10000; // the hot key's id in H.produceHot's values (after its 10,000 background keys)
// The hot key's share: hot, then cold for a quarter of the run (it cools within it), then hot.
const hotShare = (id) => (id < MESSAGES * 0.25 || id >= MESSAGES * 0.5 ? 0.4 : 0.002);

t.test(`a spread key in produce order through a paused partition and a consumer restart (${MESSAGES} messages)`, { ...K.needsCluster(), timeout: 300000 }, async (t) => {
  const total = K.lap();
  const topic = K.topicName('order');
  const group = `${topic}-group`;
  const replication = Math.min(3, K.brokers().split(',').length);
  await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
  t.comment(`topic ${topic}: ${PARTITIONS} partitions, replication ${replication}`);

  // Every handling, in order: which consumer (0 = first, 1 = after the restart), the message.
  const log = { id: [], keyId: [], seq: [], who: [], partition: [], offset: [], flagged: [], reason: [], at: [] };
  const handledBy = [new Uint8Array(MESSAGES), new Uint8Array(MESSAGES)];
  const offsetOf = new Float64Array(MESSAGES).fill(-1);
  let distinct = 0;
  let foreign = 0;
  const errors = [];
  let restart = null;
  let c2 = null;
  let c2Started = 0;
  let c2Done = null;
  const handler = (who) => (m, info) => {
    const v = K.parseValue(m.value);
    if (v === null || v.id >= MESSAGES) {
      foreign++;
      return;
    }
    if (handledBy[0][v.id] + handledBy[1][v.id] === 0) distinct++;
    handledBy[who][v.id]++;
    offsetOf[v.id] = m.offset;
    log.id.push(v.id);
    log.keyId.push(v.keyId);
    log.seq.push(v.seq);
    log.who.push(who);
    log.partition.push(m.partition);
    log.offset.push(m.offset);
    log.flagged.push(info.outOfOrder);
    log.reason.push(info.reason);
    log.at.push(Date.now());
    if (who === 0 && restart === null && distinct >= MESSAGES * RESTART_AT) restart = new Promise((resolve) => setImmediate(resolve)).then(restartConsumer).catch((err) => errors.push(`restart: ${err}`));
  };

  const c1 = H.consumer(group, { resequencer: { maxWaitMs: WAIT_BEFORE_MS, maxBufferedMessages: 500000 } });
  c1.on('error', (err) => errors.push(`first: ${err}`));
  let heldMax = 0;
  let heldAtResume = 0;
  const sampler = setInterval(() => { heldMax = Math.max(heldMax, c1.resequencer.held); }, 20);
  sampler.unref();
  let paused = false;
  c1.on('assigned', (assignment) => {
    if (!paused && assignment.some((tp) => tp.partition === 0)) {
      paused = true;
      c1.client.pause([{ topic, partition: 0 }]);
    }
  });
  const { done: c1Done, assignment: first } = await H.runAssigned(c1, topic, handler(0));
  t.comment(`first consumer assigned ${first.map((tp) => tp.partition).join(',')}`);

  let stopped1At = 0;
  let waitAfterMs = WAIT_AFTER_MS;
  let committed1 = null;
  let heldAtStop = 0;
  let stopPartition = -1;
  async function restartConsumer() {
    // The partition of the hot key's last handled message held back for a moment first, so
    // that the stop comes with messages held (never handled, read again) and later ones of
    // their partitions handled (read again too). A fixed partition would hold nothing when it
    // is not among the partitions the split key uses then (its allowed set, from its hash).
    stopPartition = 3;
    for (let i = log.keyId.length - 1; i >= 0; i--) {
      if (log.keyId[i] === HOT_ID) {
        stopPartition = log.partition[i];
        break;
      }
    }
    c1.client.pause([{ topic, partition: stopPartition }]);
    await K.sleep(STOP_PAUSE_MS);
    heldAtStop = c1.resequencer.held;
    await c1.stop();
    await c1Done;
    stopped1At = Date.now();
    clearInterval(sampler);
    committed1 = (await H.offsetsOf(group, topic, PARTITIONS)).committed;
    waitAfterMs = c1.metrics().records === null ? WAIT_AFTER_MS : WAIT_BEFORE_MS;
    c2 = H.consumer(group, { resequencer: { maxWaitMs: waitAfterMs, maxBufferedMessages: 500000 } });
    c2.on('error', (err) => errors.push(`second: ${err}`));
    await c2.connect();
    c2Started = Date.now();
    c2Done = c2.run([topic], handler(1));
  }

  const run = await H.produceHot(topic, MESSAGES, {
    hotShare,
    ratePerSec: RATE,
    seed: 0x0de7,
    // A split key's order (relocate: false: the background keys that turn hot are split too).
    producerOptions: { horizon: { messages: 2000 }, relocate: false },
    onConnect: () => setTimeout(() => {
      heldAtResume = c1.resequencer.held;
      c1.client.resume([{ topic, partition: 0 }]);
    }, PAUSE_MS),
  });
  t.comment(`produced ${MESSAGES} in ${run.producedMs} ms, delivered in ${run.ms} ms; ${run.perKey[run.hotId]} of the hot key ${run.keys[run.hotId]}`);
  t.equal(run.hotId, HOT_ID, 'the hot key\'s id is the one the stop looks for');
  // Every message handled, and the second consumer holding none: a re-read message it holds for
  // a predecessor (handled before the restart) goes after its maxWaitMs, and is handled again.
  const all = await H.until(() => c2 !== null && distinct === MESSAGES && c2.resequencer.held === 0, 120000);
  await restart;
  t.ok(all, `every message handled (${distinct} of ${MESSAGES})`);
  await c2.stop();
  await c2Done;
  const final = await H.offsetsOf(group, topic, PARTITIONS);
  t.comment(`restart: first consumer stopped ${stopped1At - run.started} ms into the run, partition ${stopPartition} held back, with ${heldAtStop} messages held; committed then ${committed1.join(',')}; second consumer running ${c2Started - stopped1At} ms later`);

  const problems = {};
  const problem = (kind, text) => {
    const list = problems[kind] ?? (problems[kind] = []);
    if (list.length < 5) list.push(text);
    list.count = (list.count ?? 0) + 1;
  };
  const list = (kind) => problems[kind] ?? [];

  // At-least-once around the restart: duplicates = exactly the re-read range.
  let duplicates = 0;
  let reread = 0;
  let notReread = 0; // in the re-read range, handled by the first consumer only: skipped by the second (its record)
  for (let id = 0; id < MESSAGES; id++) {
    const a = handledBy[0][id];
    const b = handledBy[1][id];
    if (a + b === 0) problem('missing', `message ${id} never handled`);
    if (a > 1 || b > 1) problem('twice', `message ${id} handled ${a} times by the first consumer, ${b} by the second`);
    const p = run.partitionOf[id];
    const inRange = offsetOf[id] >= committed1[p];
    if (a && inRange) reread++;
    if (a && b) {
      duplicates++;
      if (!inRange) problem('duplicate', `message ${id} (${p}/${offsetOf[id]}) handled again below the committed offset ${committed1[p]}`);
    } else if (a && inRange) notReread++;
    if (b && !a && !inRange) problem('below', `message ${id} (${p}/${offsetOf[id]}) handled only after the restart, below the committed offset ${committed1[p]}`);
  }

  // Per key, in handling order: seq = last + 1, or <= last for a message handled before.
  const keyCount = run.keys.length;
  const last = new Int32Array(keyCount).fill(-1);
  const done = new Uint8Array(MESSAGES);
  const idOf = new Map(); // keyId * 2^22 + seq -> id
  for (let i = 0; i < log.id.length; i++) idOf.set(log.keyId[i] * 4194304 + log.seq[i], log.id[i]);
  let redelivered = 0;
  const flagged = [0, 0];
  const reasons = {};
  let earliestFlag = Infinity;
  for (let i = 0; i < log.id.length; i++) {
    const id = log.id[i];
    const k = log.keyId[i];
    const s = log.seq[i];
    const where = `${log.who[i] ? 'second' : 'first'} consumer, ${log.partition[i]}/${log.offset[i]}${log.flagged[i] ? `, flagged ${log.reason[i]}` : ''}`;
    if (log.flagged[i]) {
      flagged[log.who[i]]++;
      reasons[log.reason[i]] = (reasons[log.reason[i]] ?? 0) + 1;
      if (log.who[i] === 1) {
        earliestFlag = Math.min(earliestFlag, log.at[i] - c2Started);
        const before = idOf.get(k * 4194304 + s - 1);
        if (before === undefined || !handledBy[0][before]) problem('flag', `key ${run.keys[k]} seq ${s} (${where}) flagged, but its predecessor was not handled before the restart`);
      }
    }
    if (s === last[k] + 1) last[k] = s;
    else if (s <= last[k]) {
      if (done[id]) redelivered++;
      else problem('order', `key ${run.keys[k]}: seq ${s} (${where}) after seq ${last[k]}`);
    } else {
      problem('order', `key ${run.keys[k]}: seq ${s} (${where}) after seq ${last[k]}: ${s - last[k] - 1} skipped`);
      last[k] = s;
    }
    done[id] = 1;
  }

  // The hot key: spread in both hot phases, cooled in between.
  const hotKey = run.keys[run.hotId];
  const hotEvents = run.hot.events.filter((e) => e.key === hotKey).map((e) => e.type);
  const partitionsIn = (from, to) => {
    const used = new Set();
    for (let id = Math.floor(from); id < to; id++) if (run.keyOf[id] === run.hotId) used.add(run.partitionOf[id]);
    return used.size;
  };
  const firstPhase = partitionsIn(0, MESSAGES * 0.25);
  const lastPhase = partitionsIn(MESSAGES * 0.5, MESSAGES);
  t.comment(`hot key events: ${hotEvents.join(' -> ')}; partitions used: ${firstPhase} in the first hot phase, ${lastPhase} in the second; ${run.hot.ever.size} keys hot at times`);
  t.comment(`first consumer: up to ${heldMax} messages held while partition 0 was paused (${heldAtResume} at its resume), ${flagged[0]} flagged`);
  t.comment(`handled ${log.id.length} (${distinct} distinct); re-delivered after the restart ${duplicates} (re-read range ${reread}, skipped by the record ${notReread}); order-check skips ${redelivered}; flagged after the restart ${flagged[1]} (${JSON.stringify(reasons)}), the first ${earliestFlag === Infinity ? '-' : earliestFlag} ms after it began`);

  t.equal(run.errors.length, 0, 'no delivery errors', { first: run.errors.slice(0, 3).map(String) });
  t.equal(run.deliveries, MESSAGES, 'every message delivered');
  t.same(errors, [], 'no consumer errors');
  t.equal(foreign, 0, 'no message that was not produced');
  t.ok(hotEvents.join(',').includes('hot,cooled,hot'), `the hot key turned hot, cooled and turned hot again (${hotEvents.join(',')})`);
  t.ok(firstPhase > 1 && lastPhase > 1, `the hot key spread over several partitions in both hot phases (${firstPhase}, ${lastPhase})`);
  t.ok(heldMax > 100, `partition 0's pause made the resequencer hold messages (${heldMax})`);
  t.same(list('missing'), [], 'no message missing');
  t.same(list('twice'), [], 'no message handled twice by one consumer');
  t.same([...list('duplicate'), ...list('below')], [], `re-delivered messages (${duplicates}) are in the re-read range (${reread})`);
  const records = c2.metrics().records;
  if (records === null) {
    t.equal(notReread, 0, `without handled records (engine ${c2.engine}) the whole re-read range is re-delivered`);
    t.ok(duplicates > 0, `the restart re-delivered messages (${duplicates})`);
  } else {
    // The stop's commit recorded everything the first consumer handled: the second skips it all.
    t.equal(notReread, records.skipped, `the re-read range's messages not re-delivered (${notReread}) are those the second consumer skipped by the record (${records.skipped})`);
    t.ok(reread > 0 && duplicates === 0, `with handled records nothing of the re-read range (${reread}) is re-delivered (${duplicates})`);
  }
  t.equal(redelivered, duplicates, 'the messages skipped by the order check are the re-delivered ones');
  t.same(list('order'), [], 'each key\'s messages handled in produce order');
  t.equal(flagged[0], 0, 'none flagged out of order before the restart');
  t.same(list('flag'), [], 'after the restart, only messages whose predecessor was handled before it are flagged');
  t.ok(flagged[1] === 0 || (earliestFlag >= waitAfterMs && Object.keys(reasons).every((r) => r === 'timeout')), `flagged ones released by the timeout, after maxWaitMs (${waitAfterMs} ms)`);
  t.same(final.committed, final.ends, `committed offsets = log end on every partition (${final.ends.join(',')})`);
  t.comment(`consumer-order: ${total()} ms`);
});
