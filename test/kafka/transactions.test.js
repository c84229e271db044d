'use strict';
// Exactly once, in order, on the real cluster: consume-transform-produce through DynamicConsumer's
// `transaction` option. Two DynamicProducers (in this process) fill `in` at a steady rate with a key too hot
// for one partition (spread) over Zipf background keys. A group of two processor processes
// (lib/ctp-processor.js: native engine, concurrency 16, a handler that awaits 1-3 ms) writes each message
// transformed to `out` through a transactional DynamicProducer that spreads the hot key again. Faults:
// processor A is SIGKILLed mid-transaction once it has handled 30% and started again with the same
// transactional.id (which fences it and aborts what it left open); at 60%, one broker is stopped and started
// again. A read_committed DynamicConsumer of `out` (one member, groupOrder 'wait') then checks:
//   - every input exactly once in `out` (0 lost, 0 duplicated): aborted output is never read;
//   - the input's order, per input producer and key, in the order read: cold keys whole (one partition of
//     `out`, written by one processor at a time), the spread key per processor's output chain (each
//     processor's producer spreads it again with chains of its own, which a reader restores; between two
//     processors' chains no header orders them): 0 inversions unexplained — an inversion is explained when a
//     message of its input chain with a higher sequence was read before it flagged (by a processor, whose flag
//     the output value carries, or by the reader): it jumped ahead, e.g. a wait for the killed processor's
//     record that timed out; or when its processor handled it again after an aborted transaction (its rewind
//     reads a spread key's messages again after successors released before the abort: docs/exactly-once.md);
//   - at most 1% of the spread key flagged, by the processors (its input order across the group) and by
//     the reader.
// KDP_GROUP_PROTOCOLS picks the group protocols (default both); FAULTS_LONG=1: 10x the messages.
//
// Needs KAFKA_BROKERS (npm run test:kafka); the broker restart needs the cluster scripts/kafka.sh runs.

const t = require('tap');
const path = require('node:path');
const { fork } = require('node:child_process');
const K = require('./lib/kafka');
const { produceHot, consumer, until, offsetsOf } = require('./lib/hot-key');
const { DynamicProducer, DynamicConsumer } = require('../..');
const { size, PROTOCOLS } = require('./lib/faults');

const PER_PRODUCER = size(12_000, 10);
const RATE = 1500;
const PARTITIONS = 6;
const PROCESSOR = path.join(__dirname, 'lib', 'ctp-processor.js');
const ID_BASE = 1 << 24;

function startProcessor(o) {
  const child = fork(PROCESSOR, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const p = { child, handled: 0, metrics: null, report: null, failed: null };
  let ready;
  p.ready = new Promise((resolve) => { ready = resolve; });
  p.done = new Promise((resolve) => {
    child.on('message', (m) => {
      if (m.type === 'ready') ready();
      else if (m.type === 'progress') {
        p.handled = m.handled;
        p.metrics = m.metrics;
      } else if (m.type === 'done') p.report = m;
      else if (m.type === 'failed') p.failed = m.stack;
    });
    child.on('exit', (code, signal) => {
      ready();
      resolve({ code, signal });
    });
  });
  child.send({ type: 'start', concurrency: 16, ...o });
  return p;
}

for (const groupProtocol of PROTOCOLS) {
  t.test(`consume-transform-produce in transactions, group protocol ${groupProtocol}: a processor SIGKILLed, a broker restarted`, { ...K.needsCluster(), timeout: 900000 }, async (t) => {
    const input = K.topicName('ctp-in');
    const output = K.topicName('ctp-out');
    const replication = Math.min(3, K.brokers().split(',').length);
    const durable = { 'min.insync.replicas': String(Math.min(2, replication)) };
    await K.createTopic(input, PARTITIONS, replication, durable);
    await K.createTopic(output, PARTITIONS, replication, durable);
    const group = `ctp-${input}`;
    const base = { bootstrap: K.brokers(), group, input, output, groupProtocol };
    const processors = [
      startProcessor({ ...base, transactionalId: `${group}-a` }),
      startProcessor({ ...base, transactionalId: `${group}-b` }),
    ];
    await Promise.all(processors.map((p) => p.ready));
    for (const p of processors) t.equal(p.failed, null, `processor started${p.failed ? `: ${p.failed}` : ''}`);
    if (processors.some((p) => p.failed !== null)) return;
    const total = 2 * PER_PRODUCER;
    const salt = Math.random().toString(36).slice(2, 6);
    const produced = [0, 1].map((i) => produceHot(input, PER_PRODUCER, {
      salt, seed: 0x71 + i, hotShare: 0.3, ratePerSec: RATE, keys: 2000, idBase: i * ID_BASE,
    }));
    const handled = () => processors.reduce((n, p) => n + p.handled, 0) + killedHandled;
    let killedHandled = 0;
    let killedFlagged = 0;

    // Processor A SIGKILLed mid-transaction at 30% (once it has handled some: a member may join late), started again with its transactional.id.
    const a = processors[0];
    t.ok(await until(() => handled() >= total * 0.3 && a.handled >= total * 0.05, 300000), 'the processors handled 30%, A 5% of it');
    killedHandled += a.handled;
    killedFlagged += a.metrics?.flagged ?? 0;
    a.child.kill('SIGKILL');
    await a.done;
    t.comment(`processor A SIGKILLed after handling ${a.handled} (transactions ${JSON.stringify(a.metrics?.consumer?.transactions)})`);
    processors[0] = startProcessor({ ...base, transactionalId: `${group}-a` });
    await processors[0].ready;

    // One broker stopped and started again at 60%.
    const control = K.clusterControl();
    let restarted = false;
    if (control !== null && control.nodes > 1) {
      t.ok(await until(() => handled() >= total * 0.6, 300000), 'the processors handled 60%');
      const victim = control.nodes - 1;
      t.comment(await control.stop(victim));
      await K.sleep(3000);
      t.comment(await control.start(victim));
      restarted = true;
    }
    const runs = await Promise.all(produced);
    for (const r of runs) t.same(r.errors.map(String), [], 'the input producer had no delivery errors');
    t.equal(runs.reduce((n, r) => n + r.deliveries, 0), total, `all ${total} inputs written`);
    const hotId = runs[0].hotId;
    t.ok(runs.some((r) => r.hot.ever.size > 0), 'the input key was reported hot (spread)');

    // The output, read_committed, in order.
    const counts = new Uint8Array(2 * ID_BASE);
    let read = 0;
    let flaggedHot = 0;
    let hotRead = 0;
    let inversions = 0;
    let flaggedInversions = 0;
    /** Inversions of an input its processor handled again after an aborted transaction (docs/exactly-once.md, limits). */
    let reHandledInversions = 0;
    const inversionSamples = [];
    const lastSeq = new Map();
    /** Per input producer and key, the highest input sequence that went out flagged (what went before it may come after it). */
    const flaggedSeq = new Map();
    const reader = consumer(`${group}-reader`, { groupOrder: 'wait', concurrency: 1, resequencer: { maxWaitMs: 10000 } }, { 'isolation.level': 'read_committed' });
    reader.on('error', () => {});
    await reader.connect();
    const readerDone = reader.run([output], (m, info) => {
      const v = m.value.length === 21 ? K.parseValue(m.value.subarray(0, 16)) : null;
      if (v === null || m.value.readUInt32BE(16) !== ((v.id ^ 0xffffffff) >>> 0)) return;
      const flaggedBefore = (m.value[20] & 1) === 1;
      const handledAgain = (m.value[20] & 2) === 2;
      counts[v.id]++;
      read++;
      const producer = v.id >= ID_BASE ? 1 : 0;
      const chain = `${info.order?.producerId ?? 'cold'}:${producer}:${v.keyId}`;
      const last = lastSeq.get(chain) ?? -1;
      // A flag explains what it jumped ahead of in its input chain, whichever output chain that lands in (a processor's
      // producer may write the key unmarked, then spread, then unmarked again).
      const input = `${producer}:${v.keyId}`;
      if (flaggedBefore || info.outOfOrder) flaggedSeq.set(input, Math.max(flaggedSeq.get(input) ?? -1, v.seq));
      if (v.seq < last) {
        if (info.outOfOrder || v.seq < (flaggedSeq.get(input) ?? -1)) flaggedInversions++;
        else if (handledAgain) reHandledInversions++;
        else {
          inversions++;
          if (inversionSamples.length < 8) inversionSamples.push(`${chain} seq ${v.seq} after ${last} (${m.partition}@${m.offset})`);
        }
      } else lastSeq.set(chain, v.seq);
      if (v.keyId === hotId) {
        hotRead++;
        if (info.outOfOrder) flaggedHot++;
      }
    });
    const complete = await until(() => read >= total, 300000);
    await K.sleep(2000); // a duplicate arriving late is counted too
    for (const p of processors) if (p.child.exitCode === null) p.child.send({ type: 'stop' });
    await Promise.all(processors.map((p) => p.done));
    await reader.stop();
    await readerDone;

    let lost = 0;
    let duplicated = 0;
    for (let i = 0; i < 2; i++) {
      for (let id = 0; id < PER_PRODUCER; id++) {
        const n = counts[i * ID_BASE + id];
        if (n === 0) lost++;
        else if (n > 1) duplicated += n - 1;
      }
    }
    const transactions = processors.map((p) => p.report?.metrics?.consumer?.transactions);
    const flaggedInput = processors.reduce((n, p) => n + (p.report?.metrics?.flagged ?? 0), 0) + killedFlagged;
    const hotInputs = runs.reduce((n, r) => n + r.perKey[hotId], 0);
    t.comment(`read ${read} of ${total}; processors handled ${handled()} (re-handled after the kill and aborts: ${handled() - total}); transactions ${JSON.stringify(transactions)}`);
    t.comment(`hot key: ${hotInputs} inputs, ${flaggedInput} calls flagged by the processors; ${hotRead} read, ${flaggedHot} flagged by the reader ; inversions explained by a flag: ${flaggedInversions}; of inputs handled again after an abort: ${reHandledInversions}; broker restarted: ${restarted}`);
    if (inversionSamples.length > 0) t.comment(`inversions (${inversions}): ${inversionSamples.join('; ')}`);
    for (const p of processors) t.equal(p.failed, null, 'no processor failed');
    t.ok(complete, 'every input read from the output');
    t.equal(lost, 0, 'no input lost');
    t.equal(duplicated, 0, 'no input written twice (aborted output is never read)');
    t.equal(inversions, 0, 'per input producer and key, read in input order (cold keys whole, the spread key per output chain): no inversion unexplained');
    t.ok(flaggedInput <= Math.ceil(hotInputs * 0.01), `at most 1% of the spread key flagged by the processors (${flaggedInput} of ${hotInputs})`);
    t.ok(flaggedHot <= Math.ceil(hotRead * 0.01), `at most 1% of the spread key flagged by the reader (${flaggedHot} of ${hotRead})`);
    t.ok(transactions.every((x) => x && x.committed > 0), 'both processors committed transactions');
    const { committed, ends } = await offsetsOf(group, input, PARTITIONS);
    t.same(committed, ends, "the group's committed offsets (sent in the transactions) are at the end of every input partition");
  });
}

t.test('fenced: a second producer of the same transactional.id ends the first, and the run of the consumer it served', { ...K.needsCluster(), timeout: 120000 }, async (t) => {
  const topic = K.topicName('fence');
  await K.createTopic(topic, 2, Math.min(3, K.brokers().split(',').length));
  const id = `fence-${topic}`;
  const make = () => new DynamicProducer({ 'bootstrap.servers': K.brokers(), 'transactional.id': id, log_level: 2 }, {}, {});
  const first = make();
  const second = make();
  t.teardown(() => Promise.all([first, second].map((p) => p.disconnect().catch(() => undefined))));
  for (const p of [first, second]) p.on('error', () => {});
  await first.connect();
  await first.initTransactions();
  await first.beginTransaction();
  await first.send(topic, Buffer.from('zombie'), 'k');
  await second.connect();
  await second.initTransactions();
  const failed = await first.commitTransaction(10000).then(() => null, (err) => err);
  t.ok(failed !== null, 'the first commit fails');
  t.equal(failed?.code, 'KDP_TRANSACTION', 'with a TransactionError');
  t.equal(failed?.kind, 'fatal', "of kind 'fatal'");
  t.match(failed?.message, /fenced|disconnect it/, 'saying what happened and what to do');
  t.throws(() => first.produce(topic, Buffer.from('x'), 'k'), { code: 'KDP_STATE', message: /fenced or failed for good/ }, 'produce() refused after');
  await t.rejects(first.beginTransaction(), { code: 'KDP_TRANSACTION', kind: 'fatal' }, 'every transactional call too');

  // The same through a consumer's transaction option: the run ends with the fatal error.
  const seed = new DynamicProducer({ 'bootstrap.servers': K.brokers(), log_level: 2 }, {}, {});
  t.teardown(() => seed.disconnect().catch(() => undefined));
  await seed.connect();
  for (let i = 0; i < 50; i++) await seed.send(topic, Buffer.from(String(i)), `k${i}`);
  const c = new DynamicConsumer({ 'bootstrap.servers': K.brokers(), 'group.id': `${id}-group`, 'auto.offset.reset': 'earliest', log_level: 2 }, {}, { transaction: { producer: second, intervalMs: 100 } });
  c.on('error', () => {});
  await c.connect();
  let handled = 0;
  const ended = c.run([topic], async () => { handled++; }).then(() => null, (err) => err);
  t.ok(await until(() => handled >= 50, 60000), 'the consumer handled the messages');
  const third = make();
  t.teardown(() => third.disconnect().catch(() => undefined));
  third.on('error', () => {});
  await third.connect();
  await third.initTransactions();
  await seed.send(topic, Buffer.from('after'), 'k');
  const failure = await ended;
  t.equal(failure?.code, 'KDP_TRANSACTION', 'the run rejects with the TransactionError');
  t.equal(failure?.kind, 'fatal', 'fatal: the producer was fenced');
});
