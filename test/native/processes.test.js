'use strict';
// Several producer processes on the native engine, as users deploy them: three child processes
// write to one topic of a mock cluster this process holds, through send() and sendBatch() at
// once, each message naming its process and its sequence per key. Read back with a plain
// node-rdkafka consumer: every message once, nothing else; per process and key, the
// messages of a key that no process spread are in sequence order in its partition (where
// Kafka's partitioner puts them), and what each process's reports say is what the log holds.
const t = require('tap');
const { nativeBuilt } = require('../lib/native-built');
const path = require('node:path');
const { spawn } = require('node:child_process');
const Kafka = require('node-rdkafka');
const { partitionForKey } = require('../..');
const { consumeAll, headerOf } = require('../producer/lib/helpers');
const { bootstrapOf } = require('../lib/mock-cluster');

const ROOT = path.join(__dirname, '..', '..');
const PROCESSES = 3;
const PER_PROCESS = 30000;
const N = 4; // partitions of an auto-created topic in the mock cluster

const native = nativeBuilt();

function child(brokers, topic, id) {
  const script = `
    const { DynamicProducer } = require(${JSON.stringify(ROOT)});
    (async () => {
      const p = new DynamicProducer({ 'metadata.broker.list': ${JSON.stringify(brokers)}, log_level: 0, 'linger.ms': 5 }, { partitioner: 'murmur2_random' }, { engine: 'native' });
      await p.connect(15000, { topics: [${JSON.stringify(topic)}] });
      if (p.metrics().engine !== 'native') throw new Error('not on the native engine');
      const seq = new Map();
      const next = (key) => { const s = (seq.get(key) ?? 0) + 1; seq.set(key, s); return s; };
      const reports = [];
      const pending = [];
      for (let i = 0; i < ${PER_PROCESS}; ) {
        // Every third slice goes through send(), one message at a time; the rest as batches.
        if ((i / 500) % 3 === 0) {
          for (let k = 0; k < 500; k++, i++) {
            const key = i % 4 === 0 ? 'hot' : 'key-' + (i % 300);
            pending.push(p.send(${JSON.stringify(topic)}, ${id} + ':' + key + ':' + next(key), key).then((r) => [r]));
          }
        } else {
          const batch = [];
          for (let k = 0; k < 500; k++, i++) {
            const key = i % 4 === 0 ? 'hot' : 'key-' + (i % 300);
            batch.push({ value: ${id} + ':' + key + ':' + next(key), key });
          }
          pending.push(p.sendBatch(${JSON.stringify(topic)}, batch));
        }
        if (pending.length >= 8) reports.push(...(await pending.shift()));
      }
      for (const r of await Promise.all(pending)) reports.push(...r);
      await p.disconnect();
      process.stdout.write(JSON.stringify(reports.map((r) => [r.partition, r.offset])));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['-e', script], { cwd: ROOT });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (err += d));
    proc.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`producer ${id} exited ${code}: ${err.slice(-1000)}`))));
  });
}

t.test('three producer processes on the native engine: every message once, per-key order, reports match the log', { skip: !native && 'the native engine is not built here', timeout: 180000 }, async (t) => {
  const holder = new Kafka.Producer({ 'test.mock.num.brokers': 3, log_level: 0 });
  await new Promise((resolve, reject) => holder.connect({}, (err) => (err ? reject(err) : resolve())));
  t.teardown(() => new Promise((resolve) => holder.disconnect(resolve)));
  const brokers = await bootstrapOf(holder);
  const topic = 'native-processes';
  const reports = await Promise.all(Array.from({ length: PROCESSES }, (_, id) => child(brokers, topic, id)));
  for (let id = 0; id < PROCESSES; id++) t.equal(reports[id].length, PER_PROCESS, `producer ${id}: a report per message`);
  const read = await consumeAll(brokers, topic, PROCESSES * PER_PROCESS, 60000);
  t.equal(read.total, PROCESSES * PER_PROCESS, 'the log holds exactly as many messages as were sent');
  const seen = new Set();
  const where = new Set(read.messages.map((m) => `${m.partition}/${m.offset}`));
  let duplicates = 0;
  let misplaced = 0;
  let misordered = 0;
  const hotSpread = new Set();
  const last = new Map(); // process:key:partition -> last sequence read
  // In offset order per partition: sequences of one process and key rise within a partition.
  const ordered = [...read.messages].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  for (const m of ordered) {
    const text = m.value.toString();
    if (seen.has(text)) duplicates++;
    seen.add(text);
    const [id, key, s] = text.split(':');
    if (key === 'hot') hotSpread.add(m.partition);
    if (headerOf(m) === undefined && m.partition !== partitionForKey(key, N, 'murmur2_random')) misplaced++;
    const at = `${id}:${key}:${m.partition}`;
    if (Number(s) <= (last.get(at) ?? 0)) misordered++;
    last.set(at, Number(s));
  }
  t.equal(seen.size, PROCESSES * PER_PROCESS, 'every message read once');
  t.equal(duplicates, 0, 'none twice');
  t.equal(misplaced, 0, "every message without an order header is where Kafka's partitioner puts its key");
  t.equal(misordered, 0, 'per process, key and partition, sequences rise with the offset');
  t.ok(hotSpread.size > 1, `the hot key was spread (${hotSpread.size} partitions)`);
  let unmatched = 0;
  for (const list of reports) for (const [partition, offset] of list) if (!where.has(`${partition}/${offset}`)) unmatched++;
  t.equal(unmatched, 0, "every report names a message the log holds");
});
