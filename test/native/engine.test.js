'use strict';
// The native engine (native/) under DynamicProducer, on librdkafka's mock cluster: which engine
// a producer runs on, sendBatch() (reports in input order, checked against the log read back
// with a plain node-rdkafka consumer; a bad message refuses the whole call up front; a refused
// one makes a BatchError carrying every outcome), what librdkafka refuses at produce() (an
// answer, not a report), a bad setting refused at construction, and nothing left unsettled by
// a disconnect with messages in flight. The producer suite's other files run on the engine
// the default ('auto') picks; CI requires that to be this one (KDP_NATIVE_REQUIRED).
const t = require('tap');
const { nativeBuilt } = require('../lib/native-built');
const { DynamicProducer, BatchError, KafkaError, InvalidArgTypeError, StateError, UndeliveredError } = require('../..');
const { brokersOf, consumeAll, headerOf } = require('../producer/lib/helpers');

const native = nativeBuilt();

t.test('the native engine is built (CI requires it)', { skip: process.env.KDP_NATIVE_REQUIRED === '1' ? false : !native && 'not built here' }, async (t) => {
  t.ok(native, 'native/build holds the addon');
});

const opts = { skip: !native && 'the native engine is not built here' };
const CONFIG = { 'test.mock.num.brokers': 3, log_level: 0, 'linger.ms': 2 };

t.test('engine: auto picks the native engine, client the client library; metrics() says which', opts, async (t) => {
  const auto = new DynamicProducer(CONFIG, {}, { engine: 'auto' });
  const client = new DynamicProducer(CONFIG, {}, { engine: 'client' });
  t.teardown(() => Promise.all([auto.disconnect(), client.disconnect()]));
  await Promise.all([auto.connect(), client.connect()]);
  t.equal(auto.metrics().engine, 'native');
  t.equal(client.metrics().engine, 'client');
  const [a, c] = await Promise.all([auto.send('native-engine-which', 'v', 'k'), client.send('native-engine-which', 'v', 'k')]);
  t.equal(a.partition, c.partition, 'both put a key on the same partition (their own clusters, same count)');
  t.throws(() => new DynamicProducer(CONFIG, {}, { engine: 'turbo' }), { code: 'KDP_INVALID_OPTION' }, 'an unknown engine is refused');
});

t.test('KDP_ENGINE in the environment sets the default engine; a bad one is refused naming it', opts, async (t) => {
  const { spawnSync } = require('node:child_process');
  const run = (env) => spawnSync(process.execPath, ['-e', `
    const { DynamicProducer } = require(${JSON.stringify(require('node:path').join(__dirname, '..', '..'))});
    try { const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 0 }); console.log(p.metrics().engine); p.disconnect(); }
    catch (e) { console.log(e.code + ' ' + e.message); }`], { env: { ...process.env, KDP_ENGINE: env }, encoding: 'utf8' }).stdout.trim();
  t.equal(run('client'), 'client');
  t.equal(run('native'), 'native');
  t.match(run('fast'), /^KDP_INVALID_OPTION KDP_ENGINE must be/);
});

t.test('a bad librdkafka setting is refused at construction, naming it', opts, async (t) => {
  t.throws(() => new DynamicProducer({ ...CONFIG, 'no.such.property': 1 }), /no\.such\.property/);
  t.throws(() => new DynamicProducer({ ...CONFIG, 'compression.codec': 'zip' }), { code: 'KDP_INVALID_OPTION', message: /compression\.codec/ });
  // librdkafka names linger.ms by the property it is an alias of.
  t.throws(() => new DynamicProducer({ ...CONFIG, 'linger.ms': 'soon' }), /linger\.ms|queue\.buffering\.max\.ms/);
});

t.test('sendBatch(): one promise, the reports in input order, every message in the log once', opts, async (t) => {
  const topic = 'native-engine-batch';
  const p = new DynamicProducer(CONFIG);
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  const messages = [];
  for (let i = 0; i < 3000; i++) {
    // Keys written byte by byte when ASCII and short, else by Buffer's UTF-8 encoder: both kinds,
    // a non-ASCII character at the start, in the middle and at the end, and a long ASCII key.
    const odd = [`é${i % 5}`, `k${i % 5}日本`, `k${i % 5}é`, `${'x'.repeat(70)}${i % 5}`, '😀'][i % 5];
    const key = i % 3 === 0 ? 'hot' : i % 7 === 0 ? null : i % 11 === 0 ? odd : `k${i % 50}`;
    messages.push({ value: String(i), key, headers: i % 10 === 0 ? [{ app: `h${i}` }] : undefined });
  }
  const batches = [];
  for (let i = 0; i < messages.length; i += 500) batches.push(p.sendBatch(topic, messages.slice(i, i + 500)));
  const reports = (await Promise.all(batches)).flat();
  t.equal(reports.length, messages.length, 'a report per message');
  let badKey = 0;
  for (let i = 0; i < reports.length; i++) if (reports[i].key !== messages[i].key || reports[i].topic !== topic) badKey++;
  t.equal(badKey, 0, "each report is its message's (key and topic, input order)");
  const read = await consumeAll(await brokersOf(p.client), topic, messages.length);
  t.equal(read.messages.length, messages.length, 'the log holds exactly the messages sent');
  const seen = new Map();
  for (const m of read.messages) seen.set(Number(m.value.toString()), m);
  t.equal(seen.size, messages.length, 'each once');
  let misplaced = 0;
  let badHeaders = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = seen.get(i);
    if (!m || m.partition !== reports[i].partition || m.offset !== reports[i].offset) misplaced++;
    const app = m?.headers?.find((h) => 'app' in h)?.app;
    if ((messages[i].headers ? `h${i}` : undefined) !== (app === undefined ? undefined : app.toString())) badHeaders++;
    const wantKey = messages[i].key === null ? null : Buffer.from(messages[i].key);
    if (!(wantKey === null ? m?.key == null : wantKey.equals(m?.key ?? Buffer.alloc(0)))) misplaced++;
  }
  t.equal(misplaced, 0, 'where each report says, with its key');
  t.equal(badHeaders, 0, "the application's headers arrive as given");
  const marked = read.messages.filter((m) => headerOf(m) !== undefined).length;
  t.ok(marked > 0, `the hot key spread with order headers (${marked} marked)`);
});

t.test('produce() with dr_cb off: every message in the log, and none holds a slot (librdkafka reports only failures)', opts, async (t) => {
  const topic = 'native-engine-fire-and-forget';
  const p = new DynamicProducer({ ...CONFIG, dr_cb: false }, {}, { engine: 'native' });
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  const N = 30000;
  for (let i = 0; i < N; i++) {
    if (!p.produce(topic, String(i), i % 4 === 0 ? 'hot' : `k${i % 300}`)) await new Promise((resolve) => p.once('drain', resolve));
  }
  await p.flush(30000);
  const slots = p.adapter.native.slots;
  t.equal(slots.count, 0, 'no slot taken: a success is never reported, so none would be freed');
  const read = await consumeAll(await brokersOf(p.client), topic, N);
  t.equal(new Set(read.messages.map((m) => String(m.value))).size, N, 'every message in the log');
  t.equal(read.total, N, 'once');
});

t.test('sendBatch(): a bad message refuses the call with nothing sent', opts, async (t) => {
  const topic = 'native-engine-bad';
  const p = new DynamicProducer(CONFIG);
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  await t.rejects(p.sendBatch(topic, [{ value: 'a' }, { value: 42 }]), InvalidArgTypeError);
  await t.rejects(p.sendBatch(topic, [{ value: 'a', key: {} }]), InvalidArgTypeError);
  await t.rejects(p.sendBatch(topic, [{ value: 'a' }, null]), { name: 'InvalidArgTypeError', message: /messages\[1\]/ });
  await t.rejects(p.sendBatch(topic, 'x'), InvalidArgTypeError);
  t.same(await p.sendBatch(topic, []), [], 'an empty batch resolves with no reports');
  await p.flush(5000);
  t.equal(p.metrics().topics[topic]?.produced ?? 0, 0, 'nothing was produced');
});

t.test('sendBatch(): a message librdkafka refuses makes a BatchError with every outcome; the rest are written', opts, async (t) => {
  const topic = 'native-engine-refused';
  const p = new DynamicProducer({ ...CONFIG, 'message.max.bytes': 10000 });
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  const err = await p.sendBatch(topic, [{ value: 'a', key: 'k' }, { value: Buffer.alloc(20000), key: 'k' }, { value: 'c', key: 'k' }]).then(() => null, (e) => e);
  t.ok(err instanceof BatchError, `rejects with a BatchError (got ${err && err.name})`);
  t.equal(err.code, 'KDP_BATCH_FAILED');
  t.equal(err.failed, 1);
  t.ok(err.outcomes[1] instanceof KafkaError && err.outcomes[1].librdkafkaCode === 10, 'message 1: MSG_SIZE_TOO_LARGE (10, rdkafka.h)');
  t.ok(err.outcomes[0].offset >= 0 && err.outcomes[2].offset === err.outcomes[0].offset + 1, 'messages 0 and 2 written, in order, one after the other');
});

t.test('produce(): a message librdkafka refuses is its answer (thrown), not a report', opts, async (t) => {
  const topic = 'native-engine-produce-refused';
  const p = new DynamicProducer({ ...CONFIG, 'message.max.bytes': 10000 });
  t.teardown(() => p.disconnect());
  await p.connect(10000, { topics: [topic] });
  const errors = [];
  p.on('delivery', (e) => e && errors.push(e));
  t.throws(() => p.produce(topic, Buffer.alloc(20000), 'k'), { librdkafkaCode: 10 });
  t.ok(p.produce(topic, 'small', 'k'), 'the next one is taken');
  await p.flush(5000);
  t.equal(errors.length, 0, "no 'delivery' error for the refused one");
});

t.test('disconnect() with messages in flight: every send() settles, none is left hanging', opts, async (t) => {
  const topic = 'native-engine-disconnect';
  const p = new DynamicProducer({ ...CONFIG, 'linger.ms': 50 });
  await p.connect(10000, { topics: [topic] });
  const sends = Array.from({ length: 20000 }, (_, i) => p.send(topic, 'v', `k${i % 100}`).then(() => 'ok', (e) => e));
  const batch = p.sendBatch(topic, Array.from({ length: 500 }, () => ({ value: 'b' }))).then(() => 'ok', (e) => e);
  await p.disconnect(1).catch(() => {});
  const outcomes = await Promise.all([...sends, batch]);
  const bad = outcomes.filter((o) => o !== 'ok' && !(o instanceof UndeliveredError || o instanceof StateError || o instanceof BatchError));
  t.equal(bad.length, 0, `each settled: delivered, or told it was not (${outcomes.filter((o) => o === 'ok').length} delivered)`);
  await t.rejects(p.send(topic, 'late'), StateError, 'a send after disconnect is refused');
});
