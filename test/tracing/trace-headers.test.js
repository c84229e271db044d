'use strict';
// The option traceHeaders, on every producer that traces: by default ('keep') a message that
// carries a `traceparent` of its own keeps it (test/tracing/tracing.test.js and
// wrappers-tracing.test.js say so); with 'replace' the producer span's `traceparent` replaces
// it, the message's `tracestate` goes with it, its other headers stay, and the span is linked to
// the trace the message came with. DynamicProducer on librdkafka's mock cluster (the headers as
// a consumer reads them back), wrapKafkaJsProducer and wrapPlatformaticProducer over stand-ins
// of their clients. A value of the option other than 'keep' or 'replace' is refused, naming it.
// The forwarded context is the W3C Trace Context Recommendation's example.
const t = require('tap');
const api = require('@opentelemetry/api');
const { inMemoryTracing } = require('./lib/in-memory');
const Kafka = require('node-rdkafka');
const { producerCluster: cluster, createTopic } = require('../lib/mock-cluster');
const { DynamicProducer, InvalidOptionError, wrapKafkaJsProducer, wrapPlatformaticProducer } = require('../..');
const { fakeProducer } = require('../platformatic/lib/fakes');

t.setTimeout(120_000);

const FORWARDED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const [, FORWARDED_TRACE, FORWARDED_SPAN] = FORWARDED.split('-');
const STATE = 'congo=t61rcWkgMzE';

const exporter = inMemoryTracing(t);

const text = (v) => (v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v.toString('latin1') : String(v));

/** The producer span whose id the `traceparent` names (it must be one of this test's). */
function spanOf(traceparent) {
  return exporter.getFinishedSpans().find((s) => s.kind === api.SpanKind.PRODUCER && s.spanContext().spanId === traceparent?.split('-')[2]);
}

/** A message sent with the forwarded trace: its traceparent now names its own span, which is linked to the forwarded one. */
function replaced(t, what, headerOf) {
  const parent = headerOf('traceparent');
  t.not(parent, FORWARDED, `${what}: the forwarded traceparent replaced`);
  const span = spanOf(parent);
  if (!t.ok(span, `${what}: its traceparent names its producer span`)) return;
  t.equal(parent.split('-')[1], span.spanContext().traceId, `${what}: in its span's trace`);
  t.same(span.links.map((l) => [l.context.traceId, l.context.spanId]), [[FORWARDED_TRACE, FORWARDED_SPAN]], `${what}: its span linked to the trace it came with`);
  t.equal(headerOf('tracestate'), undefined, `${what}: the forwarded tracestate gone with it`);
  t.equal(headerOf('app'), 'a', `${what}: its other headers kept`);
}

t.test('DynamicProducer, traceHeaders replace: the message carries its own span', async (t) => {
  exporter.reset();
  const { p, brokers } = await cluster(t, { traceHeaders: 'replace' });
  await createTopic(p, 'replaced');
  const headers = [{ traceparent: FORWARDED }, { app: 'a', tracestate: STATE }];
  const sent = await p.send('replaced', 'sent', 'k', headers);
  const [batched] = await p.sendBatch('replaced', [{ value: 'batched', key: 'k', headers }]);
  const plain = await p.send('replaced', 'plain', 'k', [{ app: 'a' }]);
  t.same(headers, [{ traceparent: FORWARDED }, { app: 'a', tracestate: STATE }], "the caller's headers unchanged");
  // Read back as a consumer gets them.
  const c = new Kafka.KafkaConsumer({ 'metadata.broker.list': brokers, 'group.id': 'replaced-group', log_level: 3 }, { 'auto.offset.reset': 'earliest' });
  await new Promise((resolve, reject) => c.connect({}, (err) => (err ? reject(err) : resolve())));
  t.teardown(() => new Promise((resolve) => c.disconnect(resolve)));
  c.assign([...new Set([sent, batched, plain].map((r) => r.partition))].map((partition) => ({ topic: 'replaced', partition, offset: 0 })));
  const read = new Map();
  const deadline = Date.now() + 30_000;
  while (read.size < 3 && Date.now() < deadline) {
    const messages = await new Promise((resolve, reject) => c.consume(10, (err, m) => (err ? reject(err) : resolve(m))));
    for (const m of messages) if (['sent', 'batched', 'plain'].includes(m.value.toString())) read.set(m.value.toString(), m);
  }
  t.equal(read.size, 3, 'the three messages read back');
  for (const value of ['sent', 'batched']) {
    const m = read.get(value);
    if (m === undefined) continue;
    const all = (name) => (m.headers ?? []).filter((h) => name in h).map((h) => text(h[name]));
    t.equal(all('traceparent').length, 1, `${value}: one traceparent`);
    replaced(t, value, (name) => all(name)[0]);
  }
  const plainParent = (read.get('plain')?.headers ?? []).find((h) => 'traceparent' in h)?.traceparent;
  t.same(spanOf(text(plainParent))?.links, [], 'a message without a trace of its own: its span has no link');
});

t.test('wrapKafkaJsProducer, traceHeaders replace', async (t) => {
  exporter.reset();
  const sent = [];
  const producer = { connect: async () => {}, disconnect: async () => {}, send: async (record) => { sent.push(...record.messages); return []; } };
  const admin = { fetchTopicMetadata: async ({ topics }) => topics.map((name) => ({ name, partitions: [{ partitionId: 0 }, { partitionId: 1 }] })) };
  const p = wrapKafkaJsProducer(producer, { admin, traceHeaders: 'replace' });
  await p.connect(['t']);
  const headers = { traceparent: FORWARDED, tracestate: STATE, app: 'a' };
  await p.send({ topic: 't', messages: [{ key: 'k', value: 'v', headers }] });
  await p.disconnect();
  t.same(headers, { traceparent: FORWARDED, tracestate: STATE, app: 'a' }, "the caller's headers unchanged");
  replaced(t, 'the message', (name) => text(sent[0].headers[name]));
});

for (const headerType of ['string', 'buffer']) {
  t.test(`wrapPlatformaticProducer, headerType ${headerType}, traceHeaders replace`, async (t) => {
    exporter.reset();
    const sent = [];
    const p = wrapPlatformaticProducer(fakeProducer(sent, 2), { headerType, traceHeaders: 'replace' });
    t.teardown(() => p.close());
    // With headerType 'buffer' the caller's headers are a Map of Buffers, as the producer takes them then.
    const given = headerType === 'buffer'
      ? new Map([['traceparent', FORWARDED], ['tracestate', STATE], ['app', 'a']].map(([k, v]) => [Buffer.from(k), Buffer.from(v)]))
      : { traceparent: FORWARDED, tracestate: STATE, app: 'a' };
    await p.send({ messages: [{ topic: 't', key: 'k', value: 'v', headers: given }] });
    const headerOf = (name) => {
      const h = sent[0].headers;
      if (!(h instanceof Map)) return text(h[name]);
      const found = [...h].filter(([k]) => text(k) === name);
      t.ok(found.length <= 1, `at most one ${name}`);
      return text(found[0]?.[1]);
    };
    replaced(t, 'the message', headerOf);
  });
}

t.test('traceHeaders other than keep or replace: refused, naming it', async (t) => {
  const admin = { fetchTopicMetadata: async () => [] };
  const cases = [
    ['DynamicProducer', () => new DynamicProducer({ 'metadata.broker.list': '127.0.0.1:1' }, {}, { traceHeaders: 'overwrite' })],
    ['wrapKafkaJsProducer', () => wrapKafkaJsProducer({ connect: async () => {}, send: async () => [], disconnect: async () => {} }, { admin, traceHeaders: true })],
    ['wrapPlatformaticProducer', () => wrapPlatformaticProducer({ send: async () => ({}), metadata: async () => ({}), close: async () => {} }, { traceHeaders: 'Replace' })],
  ];
  for (const [name, make] of cases) {
    let thrown;
    try {
      make();
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof InvalidOptionError, `${name}: an InvalidOptionError`);
    t.match(thrown?.message, /traceHeaders.*'keep'.*'replace'/, `${name}: naming the option and its values (${thrown?.message})`);
  }
});
