'use strict';
// kdp dead-letters list and replay on librdkafka's mock cluster, called in this process (the mock cluster lives in the
// process that made it, out of a child's reach): the dead letters are written here with the header names the consumers
// write, so every expected figure comes from what was written and from the broker's delivery reports; the replayed
// records are read back from their topics. The command line's usage errors run the real bin, which needs no cluster.
const t = require('tap');
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');
const { kafka } = require('../lib/clients');
const { mockProducer, collectReports, bootstrapOf, disconnect } = require('../lib/mock-cluster');

const { listDeadLetters, replayDeadLetters, CommandError } = require('../../build/tools/dead-letters');
const { DEAD_LETTER_HEADERS: H } = require('../..');

const CLI = join(__dirname, '..', '..', 'build', 'tools', 'cli.js');
const kdp = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });

const DLQ = 'orders-dlq';
const BINARY_KEY = Buffer.from([0x00, 0xff, 0x10]);
const BINARY_VALUE = Buffer.from([0xc3, 0x28, 0x00, 0x01]);

/** What a consumer's dead letter carries besides its own headers. */
function dlt({ topic, partition, offset, errorClass, message, code, attempts, order }) {
  const out = [];
  if (topic !== undefined) out.push({ [H.topic]: topic });
  out.push({ [H.partition]: String(partition) }, { [H.offset]: String(offset) });
  if (order !== undefined) out.push({ [H.order]: order });
  out.push({ [H.errorClass]: errorClass }, { [H.errorMessage]: message });
  if (code !== undefined) out.push({ [H.errorCode]: code });
  out.push({ [H.attempts]: String(attempts) });
  return out;
}

// The dead letters written, each to a chosen partition of the dead-letter topic.
const LETTERS = [
  {
    partition: 1, key: Buffer.from('order-1'), value: Buffer.from('{"amount":-5}'),
    own: [{ trace: 'abc' }, { trace: 'def' }, { tenant: 'acme' }],
    origin: { topic: 'orders', partition: 2, offset: 17, errorClass: 'RangeError', message: 'amount is negative\nrefused', code: 'E_AMOUNT', attempts: 3, order: '7:3;2:16' },
  },
  {
    partition: 0, key: BINARY_KEY, value: BINARY_VALUE,
    own: [{ 'kdp-order': 'stale;1:1' }],
    origin: { topic: 'orders', partition: 0, offset: 4, errorClass: 'TypeError', message: 'not JSON', attempts: 1 },
  },
  {
    partition: 1, key: Buffer.from('k3'), value: Buffer.from('third'),
    own: [],
    origin: { partition: 3, offset: 9, errorClass: 'Error', message: 'no origin', attempts: 2 },
  },
  {
    partition: 0, key: null, value: Buffer.from('fourth'),
    own: [{ tenant: 'acme' }],
    origin: { topic: 'payments', partition: 1, offset: 0, errorClass: 'Error', message: 'declined', attempts: 5 },
  },
];

let producer;
let brokers;
/** LETTERS[i]'s place in the dead-letter topic, as the broker reported it. */
let placed;

t.before(async () => {
  producer = await mockProducer({ 'test.mock.num.brokers': 1, log_level: 2 });
  brokers = await bootstrapOf(producer);
  const reports = collectReports(producer, LETTERS.length);
  LETTERS.forEach((l, i) => producer.produce(DLQ, l.partition, l.value, l.key, null, i, [...l.own, ...dlt(l.origin)]));
  placed = [];
  for (const r of await reports) {
    if (r.error) throw r.error;
    placed[r.opaque] = { partition: r.partition, offset: r.offset };
  }
});
t.teardown(() => disconnect(producer));

/** LETTERS' indexes in the order the commands go: by partition, then offset. */
const inReadOrder = () => LETTERS.map((_, i) => i).sort((a, b) => placed[a].partition - placed[b].partition || placed[a].offset - placed[b].offset);

/**
 * Bytes as the JSON output carries them: the binary key and value written here as base64, the others as text (node-rdkafka
 * writes a header's value as UTF-8 text, so every header here is text).
 */
const encoded = (b) => ([BINARY_KEY, BINARY_VALUE].some((x) => x.equals(b)) ? { base64: b.toString('base64') } : { text: b.toString('utf8') });

async function run(fn, options) {
  const lines = [];
  const result = await fn({ brokers, topic: DLQ, timeoutMs: 5000, ...options }, (line) => lines.push(line));
  return { result, lines };
}

t.test('list: a line per dead letter, by partition and offset, with its origin, attempts, failure and key', async (t) => {
  const { result, lines } = await run(listDeadLetters, {});
  t.equal(result, LETTERS.length);
  t.equal(lines.length, LETTERS.length + 1, 'a line each and the count');
  t.equal(lines.at(-1), `${LETTERS.length} dead letters in ${DLQ}`);
  inReadOrder().forEach((i, n) => {
    const { origin: o, key } = LETTERS[i];
    const p = placed[i];
    const line = lines[n];
    t.ok(line.startsWith(`${p.partition}:${p.offset}  `), `${line}: its place in the dead-letter topic`);
    t.match(line, `  ${o.topic ?? '?'} [${o.partition}] ${o.offset}  attempts ${o.attempts}  `, 'where it came from and the attempts');
    t.match(line, `${o.errorClass}${o.code ? ` (code ${o.code})` : ''}: ${JSON.stringify(o.message)}`, 'the failure, its message on the one line');
    const k = key === null ? '(none)' : key.equals(BINARY_KEY) ? '0x00ff10' : JSON.stringify(key.toString());
    t.ok(line.endsWith(`  key ${k}`), 'the key: text, or hex');
  });
});

t.test('list --json: the fields, the value and every header, in order', async (t) => {
  const { lines } = await run(listDeadLetters, { json: true });
  t.equal(lines.length, LETTERS.length, 'one object per line, nothing else');
  inReadOrder().forEach((i, n) => {
    const { origin: o, key, value, own } = LETTERS[i];
    const record = JSON.parse(lines[n]);
    t.equal(record.partition, placed[i].partition);
    t.equal(record.offset, placed[i].offset);
    t.same(record.original, { topic: o.topic ?? null, partition: o.partition, offset: o.offset, order: o.order ?? null });
    t.equal(record.attempts, o.attempts);
    t.same(record.exception, { class: o.errorClass, message: o.message, code: o.code ?? null });
    t.same(record.key, key === null ? null : encoded(key));
    t.same(record.value, encoded(value));
    const written = [...own, ...dlt(o)].map((h) => {
      const [name, v] = Object.entries(h)[0];
      return { name, ...encoded(Buffer.from(v)) };
    });
    t.same(record.headers, written, 'every header as written');
  });
  t.same(JSON.parse(lines[inReadOrder().indexOf(1)]).value, { base64: BINARY_VALUE.toString('base64') }, 'a value that is not UTF-8 is base64');
});

t.test('list --limit N: the first N', async (t) => {
  const { result, lines } = await run(listDeadLetters, { limit: 2, json: true });
  t.equal(result, 2);
  t.same(lines.map((l) => JSON.parse(l).offset), inReadOrder().slice(0, 2).map((i) => placed[i].offset));
});

/** Every record of `topic` (none when it does not exist), read by assignment from offset 0 to the ends of its partitions. */
async function readBack(topic) {
  const reader = new (kafka().KafkaConsumer)({ 'bootstrap.servers': brokers, 'group.id': `read-${topic}-${Date.now()}`, 'enable.auto.commit': false, log_level: 2 }, {});
  await new Promise((resolve, reject) => reader.connect({}, (err) => (err ? reject(err) : resolve())));
  try {
    const metadata = await new Promise((r, j) => reader.getMetadata({ topic, timeout: 5000 }, (e, m) => (e ? j(e) : r(m))));
    const partitions = (metadata.topics.find((x) => x.name === topic)?.partitions ?? []).map((p) => p.id);
    let total = 0;
    for (const p of partitions) total += (await new Promise((r, j) => reader.queryWatermarkOffsets(topic, p, 5000, (e, w) => (e ? j(e) : r(w))))).highOffset;
    if (total === 0) return { total, records: [] };
    reader.assign(partitions.map((partition) => ({ topic, partition, offset: 0 })));
    const out = [];
    const deadline = Date.now() + 15_000;
    while (out.length < total && Date.now() < deadline) out.push(...(await new Promise((r, j) => reader.consume(100, (e, m) => (e ? j(e) : r(m))))));
    return { total, records: out };
  } finally {
    await new Promise((resolve) => reader.disconnect(resolve));
  }
}

const headerList = (record) => (record.headers ?? []).map((h) => Object.entries(h).map(([name, v]) => [name, Buffer.from(v).toString('hex')])[0]);

t.test('replay --dry-run sends nothing; replay --all sends each dead letter back to its topic without the dead-letter or order headers', async (t) => {
  const dry = await run(replayDeadLetters, { all: true, dryRun: true });
  t.same(dry.result, { sent: 3, skipped: 1, failed: 0 });
  t.match(dry.lines.join('\n'), /would go to orders/);
  t.equal((await readBack('orders')).total, 0, 'nothing sent to orders');

  const { result, lines } = await run(replayDeadLetters, { all: true });
  t.same(result, { sent: 3, skipped: 1, failed: 0 });
  const skipped = LETTERS.findIndex((l) => l.origin.topic === undefined);
  t.ok(lines.includes(`${placed[skipped].partition}:${placed[skipped].offset} skipped: no ${H.topic} header (--to names a topic for it)`), 'the letter without an origin: skipped, saying so');
  t.equal(lines.at(-1), '3 dead letters sent, 1 skipped');
  for (const topic of ['orders', 'payments']) {
    const { total, records } = await readBack(topic);
    const expected = LETTERS.map((l, i) => [l, i]).filter(([l]) => l.origin.topic === topic);
    t.equal(total, expected.length, `${topic}: as many records as dead letters of it`);
    for (const [l, i] of expected) {
      const r = records.find((x) => x.value.equals(l.value));
      t.ok(r, `${topic}: dead letter ${i} is back`);
      if (!r) continue;
      t.same(r.key === null || r.key === undefined ? null : Buffer.from(r.key), l.key, 'its key');
      const kept = l.own.filter((h) => !('kdp-order' in h)).map((h) => Object.entries(h).map(([name, v]) => [name, Buffer.from(v).toString('hex')])[0]);
      t.same(headerList(r), kept, 'its own headers, in order, but the order header');
      t.notOk(headerList(r).some(([name]) => name.startsWith('kdp-')), 'no kdp-dlt-* header, no kdp-order');
      const at = `${placed[i].partition}:${placed[i].offset}`;
      t.ok(lines.includes(`${at} -> ${topic} [${r.partition}] ${r.offset}`), `${at}: where it went, as read back`);
    }
  }
});

t.test('replay one record (--partition, --offset) to --to: the one without an origin goes there', async (t) => {
  const i = LETTERS.findIndex((l) => l.origin.topic === undefined);
  const { result, lines } = await run(replayDeadLetters, { ...placed[i], to: 'elsewhere' });
  t.same(result, { sent: 1, skipped: 0, failed: 0 });
  const { total, records } = await readBack('elsewhere');
  t.equal(total, 1);
  t.same(Buffer.from(records[0].key), LETTERS[i].key);
  t.same(records[0].value, LETTERS[i].value);
  t.same(headerList(records[0]), [], 'no header: it had only the dead letter\'s');
  t.equal(lines[0], `${placed[i].partition}:${placed[i].offset} -> elsewhere [${records[0].partition}] ${records[0].offset}`);
});

t.test('errors: a record, topic or cluster that is not there is a CommandError; a selection missing or doubled a UsageError', async (t) => {
  const p = placed[0].partition;
  await t.rejects(run(replayDeadLetters, { partition: p, offset: 1000 }), { name: 'CommandError', message: new RegExp(`no record at ${p}:1000`) });
  await t.rejects(run(replayDeadLetters, { partition: 9, offset: 0 }), { name: 'CommandError', message: /has no partition 9/ });
  await t.rejects(run(listDeadLetters, { topic: 'no-such-topic' }), CommandError);
  await t.rejects(run(replayDeadLetters, {}), { name: 'UsageError', message: /nothing selected/ });
  await t.rejects(run(replayDeadLetters, { all: true, partition: 0, offset: 0 }), { name: 'UsageError', message: /not both/ });
  await t.rejects(run(replayDeadLetters, { partition: 0 }), { name: 'UsageError', message: /go together/ });
  await t.rejects(run(listDeadLetters, { brokers: '' }), { name: 'UsageError', message: /--brokers is required/ });
  const started = Date.now();
  await t.rejects(listDeadLetters({ brokers: '127.0.0.1:1', topic: DLQ, timeoutMs: 1000 }, () => {}), { name: 'CommandError', message: /cannot connect to 127\.0\.0\.1:1 within 1 s/ });
  t.ok(Date.now() - started < 10_000, 'within the timeout');
});

t.test('the command line: missing flags and selections exit 2, an unreachable cluster 1, --help 0', async (t) => {
  for (const [args, message] of [
    [['dead-letters', 'list'], /^kdp: --brokers is required.*\n\(kdp dead-letters list --help lists the flags\)\n$/],
    [['dead-letters', 'list', '--brokers', '127.0.0.1:1'], /^kdp: --topic is required/],
    [['dead-letters', 'replay', '--brokers', '127.0.0.1:1', '--topic', DLQ], /^kdp: nothing selected.*\n\(kdp dead-letters replay --help lists the flags\)\n$/],
    [['dead-letters', 'replay', '--brokers', '127.0.0.1:1', '--topic', DLQ, '--all', '--offset', '3'], /not both/],
    [['dead-letters', 'list', '--brokers', '127.0.0.1:1', '--topic', DLQ, '--limit', '0'], /--limit must be an integer/],
    [['dead-letters'], /^kdp: dead-letters needs list or replay/],
  ]) {
    const r = kdp(...args);
    t.equal(r.status, 2, args.join(' '));
    t.match(r.stderr, message, args.join(' '));
    t.equal(r.stdout, '', 'nothing printed on stdout');
  }
  const down = kdp('dead-letters', 'list', '--brokers', '127.0.0.1:1', '--topic', DLQ, '--timeout', '1');
  t.equal(down.status, 1, down.stderr);
  t.match(down.stderr, /^kdp: cannot connect to 127\.0\.0\.1:1 within 1 s: /);
  t.notMatch(down.stderr, /\n\s+at /, 'no stack trace');
  for (const sub of ['list', 'replay']) {
    const help = kdp('dead-letters', sub, '--help');
    t.equal(help.status, 0);
    t.ok(help.stdout.startsWith(`usage: kdp dead-letters ${sub} [flags]\n`));
  }
  const top = kdp('--help');
  t.equal(top.status, 0);
  t.match(top.stdout, /dead-letters list/);
  t.match(top.stdout, /dead-letters replay/);
});
