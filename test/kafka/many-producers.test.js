'use strict';
// Several producer processes (one service scaled to N replicas) spread the same hot keys into
// one topic on the real cluster, read by a DynamicConsumer that is restarted mid-stream.
//
// Three processes (lib/many-producers-worker.js), each a DynamicProducer (idempotent,
// acks=all, linger.ms 0 / 5 / 20), send two shared hot keys (one at 30%, cooling in the middle
// of the run and hot again; one at 12% throughout) over Zipf background keys to one
// 6-partition topic; each value carries (producer, key, the message's number among that
// producer's messages of that key). One DynamicConsumer (a group of one) reads it while it is
// produced; it is stopped once it has handled half the messages, and a second one of the
// same group carries on from the committed offsets.
//   - per (producer, key), messages handled in send order; after the restart a message whose
//     number is not above the last handled of its (producer, key) is a re-read only when the
//     first consumer handled it at or above the offset committed on its partition at the stop;
//   - none flagged out of order before the restart (the first consumer reads every
//     partition; its maxWaitMs, 10 s, is far above any wait in order, so a wait on another
//     producer's messages would show as a timeout);
//   - after the restart, a message is flagged only when its predecessor was handled before it
//     (the second consumer never sees that one, and lets the message go after its maxWaitMs);
//   - every acknowledged message handled; a message handled twice is such a re-read.
//
// Needs KAFKA_BROKERS (npm run test:kafka). KDP_KAFKA_MANY_PRODUCERS_MESSAGES changes the count per producer.

const t = require('tap');
const path = require('node:path');
const { fork } = require('node:child_process');
const { decodeOrderHeader } = require('../..');
const K = require('./lib/kafka');
const H = require('./lib/hot-key');
const { ID_SPAN, BACKGROUND_KEYS, keysOf } = require('./lib/many-producers-worker');

const WORKER = path.join(__dirname, 'lib', 'many-producers-worker.js');
const PRODUCERS = [{ linger: 0, horizon: 1000 }, { linger: 5, horizon: 1000 }, { linger: 20, horizon: 1200 }];
const PER_PRODUCER = Number(process.env.KDP_KAFKA_MANY_PRODUCERS_MESSAGES || 35_000);
const RATE = 2000; // msg/s per producer: consumed while produced
const PARTITIONS = 6;
const WAIT_BEFORE_MS = 10000; // maxWaitMs of the first consumer
// maxWaitMs of the second one: it starts with a backlog of thousands of messages per partition
// and reads some partitions ahead of others, so a relocated key's first message on its new
// partition can wait seconds, in order, for its predecessor further down the old one.
const WAIT_AFTER_MS = 10000;
// The first consumer is stopped once it has handled this share, and not before maxWaitMs and
// two seconds more have passed since the producers started: a wait cycle formed early in the run
// has then timed out (flagged) before the restart.
const RESTART_AT = 0.5;
const RESTART_AFTER_MS = WAIT_BEFORE_MS + 2000;

/** Forks the worker processes; resolves once all are ready, with { go(), done: promise of their reports, progress }. */
async function startProducers(topic, salt) {
  const progress = PRODUCERS.map(() => 0);
  const workers = PRODUCERS.map((o, index) => {
    const child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let ready;
    let early;
    const isReady = new Promise((resolve, reject) => { ready = resolve; early = reject; });
    const done = new Promise((resolve, reject) => {
      child.on('message', (m) => {
        if (m.type === 'ready') ready();
        else if (m.type === 'progress') progress[index] = m.sent;
        else if (m.type === 'done') resolve(m);
      });
      child.on('exit', (code) => {
        const err = new Error(`producer ${index} exited (${code}) before its report`);
        early(err);
        reject(err);
      });
    });
    done.catch(() => {});
    child.send({ type: 'start', index, topic, count: PER_PRODUCER, salt, rate: RATE, ...o });
    return { child, isReady, done };
  });
  await Promise.all(workers.map((w) => w.isReady));
  return {
    go: () => workers.forEach((w) => w.child.send({ type: 'go' })),
    done: Promise.all(workers.map((w) => w.done)),
    progress,
    kill: () => workers.forEach((w) => w.child.exitCode === null && w.child.kill()),
  };
}

t.test(`three producer processes spread the same hot keys; each one's order survives a consumer restart (${PRODUCERS.length} x ${PER_PRODUCER} messages)`, { ...K.needsCluster(), timeout: 240000 }, async (t) => {
  const total = K.lap();
  const topic = K.topicName('many-producers');
  const group = `${topic}-group`;
  const replication = Math.min(3, K.brokers().split(',').length);
  await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });
  const salt = Math.random().toString(36).slice(2, 6);
  const keys = keysOf(salt, 2);
  const hotKeys = keys.slice(BACKGROUND_KEYS);
  const count = PRODUCERS.length * PER_PRODUCER;
  const slot = (id) => Math.floor(id / ID_SPAN) * PER_PRODUCER + (id % ID_SPAN); // 0 .. count-1

  // Every handling, in order.
  const log = { slot: [], producer: [], keyId: [], seq: [], who: [], partition: [], offset: [], flagged: [], reason: [], at: [] };
  const handledBy = [new Uint8Array(count), new Uint8Array(count)];
  const partitionOf = new Int16Array(count).fill(-1);
  const offsetOf = new Float64Array(count).fill(-1);
  const marked = PRODUCERS.map(() => 0);
  const spreadOver = new Map(); // hot key -> partitions of its spread messages
  const lanes = new Map(); // partition/key -> producers with marked messages there
  let distinct = 0;
  let foreign = 0;
  const errors = [];
  let restart = null;
  let c2 = null;
  let pausesAfter = 0; // the second consumer's back-pressure pauses (its queue for the handler full)
  let c2Started = 0;
  let c2Done = null;
  let started = Infinity; // when the producers were let go
  const handler = (who) => (m, info) => {
    const v = K.parseValue(m.value);
    const producer = v === null ? -1 : Math.floor(v.id / ID_SPAN);
    if (v === null || producer >= PRODUCERS.length || v.id % ID_SPAN >= PER_PRODUCER) {
      foreign++;
      return;
    }
    const s = slot(v.id);
    if (handledBy[0][s] + handledBy[1][s] === 0) {
      distinct++;
      const raw = K.headerOf(m);
      const order = raw === undefined ? null : decodeOrderHeader(raw);
      if (order !== null) {
        marked[producer]++;
        const key = keys[v.keyId];
        if (order.kind === 'spread') {
          if (!spreadOver.has(key)) spreadOver.set(key, new Set());
          spreadOver.get(key).add(m.partition);
        }
        const lane = `${m.partition}/${key}`;
        if (!lanes.has(lane)) lanes.set(lane, new Set());
        lanes.get(lane).add(producer);
      }
    }
    handledBy[who][s]++;
    partitionOf[s] = m.partition;
    offsetOf[s] = m.offset;
    log.slot.push(s);
    log.producer.push(producer);
    log.keyId.push(v.keyId);
    log.seq.push(v.seq);
    log.who.push(who);
    log.partition.push(m.partition);
    log.offset.push(m.offset);
    log.flagged.push(info.outOfOrder || info.ordered === false);
    log.reason.push(info.reason);
    log.at.push(Date.now());
    if (who === 0 && restart === null && distinct >= count * RESTART_AT && Date.now() - started >= RESTART_AFTER_MS) restart = new Promise((resolve) => setImmediate(resolve)).then(restartConsumer).catch((err) => errors.push(`restart: ${err}`));
  };

  const c1 = H.consumer(group, { resequencer: { maxWaitMs: WAIT_BEFORE_MS, maxBufferedMessages: 500000 } });
  c1.on('error', (err) => errors.push(`first: ${err}`));
  let heldMax = 0;
  const sampler = setInterval(() => { heldMax = Math.max(heldMax, c1.resequencer.held); }, 20);
  sampler.unref();
  const { done: c1Done, assignment: first } = await H.runAssigned(c1, topic, handler(0));
  t.comment(`topic ${topic}: ${PARTITIONS} partitions, replication ${replication}; first consumer assigned ${first.map((tp) => tp.partition).join(',')}`);

  let stopped1At = 0;
  let committed1 = null;
  let heldAtStop = 0;
  async function restartConsumer() {
    heldAtStop = c1.resequencer.held;
    await c1.stop();
    await c1Done;
    stopped1At = Date.now();
    clearInterval(sampler);
    committed1 = (await H.offsetsOf(group, topic, PARTITIONS)).committed;
    c2 = H.consumer(group, { resequencer: { maxWaitMs: WAIT_AFTER_MS, maxBufferedMessages: 500000 } });
    c2.on('error', (err) => errors.push(`second: ${err}`));
    c2.on('paused', () => { pausesAfter++; });
    await c2.connect();
    c2Started = Date.now();
    c2Done = c2.run([topic], handler(1));
  }

  const producers = await startProducers(topic, salt);
  t.teardown(producers.kill);
  started = Date.now();
  producers.go();
  const reports = await producers.done;
  const ackedSlots = new Uint8Array(count);
  let acked = 0;
  reports.forEach((r, i) => {
    for (const n of r.acked) {
      ackedSlots[i * PER_PRODUCER + n] = 1;
      acked++;
    }
  });
  t.comment(`produced ${count} in ${Date.now() - started} ms (per producer ${reports.map((r) => r.producedMs).join(' / ')} ms of sending)`);
  const all = await H.until(() => c2 !== null && distinct >= acked && c2.resequencer.held === 0, 90000);
  await restart;
  t.ok(all, `every acknowledged message handled (${distinct} distinct handled, ${acked} acknowledged), nothing held`);
  if (c2) {
    await c2.stop();
    await c2Done;
  }
  const final = await H.offsetsOf(group, topic, PARTITIONS);
  t.comment(`restart: first consumer stopped ${stopped1At - started} ms into the run with ${heldAtStop} messages held (up to ${heldMax} before); committed then ${committed1 ? committed1.join(',') : '-'}; second consumer running ${c2Started - stopped1At} ms later, paused by back-pressure ${pausesAfter} times`);

  const problems = {};
  const problem = (kind, text) => {
    const list = problems[kind] ?? (problems[kind] = []);
    if (list.length < 5) list.push(text);
  };
  const list = (kind) => problems[kind] ?? [];
  const name = (s) => `producer ${Math.floor(s / PER_PRODUCER)} #${s % PER_PRODUCER}`;
  const inReread = (s) => committed1 !== null && offsetOf[s] >= committed1[partitionOf[s]];

  // At-least-once around the restart: every acknowledged message handled; duplicates = re-reads.
  let duplicates = 0;
  let rereadRange = 0;
  for (let s = 0; s < count; s++) {
    const a = handledBy[0][s];
    const b = handledBy[1][s];
    if (ackedSlots[s] && a + b === 0) problem('lost', `${name(s)} acknowledged, never handled`);
    if (a > 1 || b > 1) problem('twice', `${name(s)} handled ${a} times by the first consumer, ${b} by the second`);
    if (a && inReread(s)) rereadRange++;
    if (a && b) {
      duplicates++;
      if (!inReread(s)) problem('duplicate', `${name(s)} (${partitionOf[s]}/${offsetOf[s]}) handled again, below the committed offset ${committed1[partitionOf[s]]}`);
    }
  }

  // (producer, key):seq of every message the first consumer handled.
  const handledBefore = new Set();
  for (let i = 0; i < log.slot.length; i++) {
    if (log.who[i] === 0) handledBefore.add(`${log.producer[i] * (BACKGROUND_KEYS + hotKeys.length) + log.keyId[i]}:${log.seq[i]}`);
  }
  // Per (producer, key), in handling order: seq = last + 1, or a re-read.
  const last = new Map();
  const done = new Uint8Array(count);
  let reread = 0;
  const flagged = [0, 0];
  const reasons = {};
  for (let i = 0; i < log.slot.length; i++) {
    const s = log.slot[i];
    const chain = log.producer[i] * (BACKGROUND_KEYS + hotKeys.length) + log.keyId[i];
    const seq = log.seq[i];
    const before = last.has(chain) ? last.get(chain) : -1;
    const where = `producer ${log.producer[i]} key ${keys[log.keyId[i]]}: #${seq} (${log.who[i] ? 'second' : 'first'} consumer, ${log.partition[i]}/${log.offset[i]}${log.flagged[i] ? `, flagged ${log.reason[i]}` : ''})`;
    if (log.flagged[i]) {
      flagged[log.who[i]]++;
      reasons[log.reason[i]] = (reasons[log.reason[i]] ?? 0) + 1;
      if (log.who[i] === 0) problem('flagged', `${where}, ${log.at[i] - started} ms into the run`);
      else if (!handledBefore.has(`${chain}:${seq - 1}`)) problem('flag', `${where}: its predecessor was not handled before the restart`);
    }
    if (seq === before + 1) last.set(chain, seq);
    else if (seq <= before) {
      if (log.who[i] === 1 && done[s] && handledBy[0][s] && inReread(s)) reread++;
      else problem('order', `${where} after #${before}`);
    } else {
      problem('order', `${where} after #${before}: ${seq - before - 1} skipped`);
      last.set(chain, seq);
    }
    done[s] = 1;
  }

  const shared = [...lanes.values()].filter((x) => x.size > 1).length;
  t.comment(`marked messages per producer ${marked.join(' / ')}; hot keys' spread partitions ${hotKeys.map((k) => `${k}:${spreadOver.has(k) ? [...spreadOver.get(k)].sort().join('') : '-'}`).join(' ')}; ${shared} (partition, key) lanes with marked messages of several producers`);
  t.comment(`hot keys cooled per producer: ${reports.map((r) => hotKeys.filter((k) => r.cooled.includes(k)).length).join(' / ')}`);
  t.comment(`handled ${log.slot.length} (${distinct} distinct); handled by both consumers ${duplicates} (re-read range ${rereadRange}); order-check re-reads ${reread}; flagged: ${flagged[0]} before the restart, ${flagged[1]} after (${JSON.stringify(reasons)})`);

  t.same(reports.map((r) => r.errors), PRODUCERS.map(() => []), 'no producer errors');
  t.equal(acked, count, 'every message acknowledged');
  t.same(errors, [], 'no consumer errors');
  t.equal(foreign, 0, 'no message that was not produced');
  marked.forEach((n, i) => t.ok(n > 100, `producer ${i}'s marked messages reached the consumer (${n})`));
  for (const k of hotKeys) t.ok(spreadOver.has(k) && spreadOver.get(k).size >= 2, `${k} spread over ${spreadOver.has(k) ? spreadOver.get(k).size : 0} partitions (>= 2)`);
  t.ok(shared > 0, `producers share (partition, key) lanes with marked messages (${shared})`);
  t.ok(committed1 !== null, 'the first consumer was stopped mid-stream and a second one took over');
  t.same(list('lost'), [], 'no acknowledged message lost');
  t.same(list('twice'), [], 'no message handled twice by one consumer');
  t.same(list('duplicate'), [], `messages handled by both consumers (${duplicates}) are re-reads of the range at or above the committed offsets`);
  t.same(list('order'), [], "each producer's messages of each key handled in its send order (re-reads aside)");
  t.same(list('flagged'), [], `none flagged out of order before the restart (${flagged[0]})`);
  t.same(list('flag'), [], `after it, only messages whose predecessor the first consumer handled are flagged (${flagged[1]})`);
  t.same(final.committed, final.ends, `committed offsets = log end on every partition (${final.ends.join(',')})`);
  t.comment(`many-producers: ${total()} ms`);
});
