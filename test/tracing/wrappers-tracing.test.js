'use strict';
// The producer wrappers' spans (wrapKafkaJsProducer, wrapPlatformaticProducer) over stand-ins of
// the clients, with the SDK's in-memory exporter: a PRODUCER span per message, named and
// attributed by the messaging conventions, its partition the one the message is sent to; its
// trace in the message's headers in the client's own form (a KafkaJS headers object; an
// @platformatic/kafka object of strings, or a Map of Buffers with headerType 'buffer'); a hot
// key's messages say so, as their order header does; a message that carries a `traceparent`
// keeps it; a send that fails ends its spans as errors. Then wrapKafkaJsConsumer's handler calls
// in its producer's trace (the engine's spans, tracing.ts, through a stand-in KafkaJS consumer).
const t = require('tap');
const api = require('@opentelemetry/api');
const { inMemoryTracing } = require('./lib/in-memory');
const { wrapKafkaJsProducer, wrapKafkaJsConsumer, wrapPlatformaticProducer, decodeOrderHeader, ORDER_HEADER } = require('../..');
const { fakeKafkaJs } = require('../kafkajs/lib/fake-kafkajs');
const { fakeProducer } = require('../platformatic/lib/fakes');

const exporter = inMemoryTracing(t);

const text = (v) => (v === undefined ? undefined : Buffer.isBuffer(v) ? v.toString('latin1') : String(v));
const FORWARDED = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const skewed = (count) => Array.from({ length: count }, (_, i) => ({ key: i % 3 === 0 ? `k${i % 101}` : 'HOT', value: String(i) }));

/** Each sent message against its span: the traceparent names the span, the partition and the hot key's marks agree. */
function check(t, sent, headerOf) {
  const spans = exporter.getFinishedSpans().filter((s) => s.kind === api.SpanKind.PRODUCER);
  t.equal(spans.length, sent.length, 'a span per message');
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  let spread = 0;
  for (const m of sent) {
    const parent = headerOf(m, 'traceparent');
    if (parent === FORWARDED) continue;
    const span = byId.get(parent?.split('-')[2]);
    if (!t.ok(span, `message ${m.value}: its traceparent names its span`)) continue;
    t.equal(parent.split('-')[1], span.spanContext().traceId);
    t.equal(span.attributes['messaging.destination.partition.id'], String(m.partition), `message ${m.value}: its partition`);
    const order = headerOf(m, ORDER_HEADER);
    const kind = order === undefined ? undefined : decodeOrderHeader(order).kind;
    t.equal(span.attributes['kdp.order'], kind, `message ${m.value}: the order marker as its header says`);
    if (kind === 'spread') spread++;
  }
  t.ok(spread > 0, `premise: the hot key spread (${spread} messages)`);
  t.ok(spans.every((s) => s.name === 'send t'), 'named send <topic>');
  t.ok(spans.every((s) => s.attributes['messaging.system'] === 'kafka' && s.attributes['messaging.operation.type'] === 'send'), 'the conventions');
}

t.test('wrapKafkaJsProducer: a span per message, its trace in the KafkaJS headers', async (t) => {
  exporter.reset();
  const sent = [];
  let fail;
  const producer = {
    connect: async () => {},
    disconnect: async () => {},
    send: async (record) => {
      if (fail) throw fail;
      sent.push(...record.messages);
      return [];
    },
  };
  const admin = { fetchTopicMetadata: async ({ topics }) => topics.map((name) => ({ name, partitions: Array.from({ length: 12 }, (_, partitionId) => ({ partitionId })) })) };
  const p = wrapKafkaJsProducer(producer, { admin });
  await p.connect(['t']);
  const messages = skewed(3000);
  for (let i = 0; i < messages.length; i += 300) await p.send({ topic: 't', messages: messages.slice(i, i + 300) });
  await p.send({ topic: 't', messages: [{ key: 'f', value: 'forwarded', headers: { traceparent: FORWARDED } }] });
  check(t, sent, (m, name) => text(m.headers?.[name]));
  t.equal(sent[sent.length - 1].headers.traceparent, FORWARDED, 'a forwarded message keeps its traceparent');
  exporter.reset();
  fail = new Error('refused');
  await t.rejects(p.send({ topic: 't', messages: [{ key: 'x', value: 'y' }] }), /refused/);
  t.same(exporter.getFinishedSpans().map((s) => s.status.code), [api.SpanStatusCode.ERROR], 'a failed send: its span an error');
  await p.disconnect();
});

for (const headerType of ['string', 'buffer']) {
  t.test(`wrapPlatformaticProducer, headerType ${headerType}: a span per message, its trace in the message's headers`, async (t) => {
    exporter.reset();
    const sent = [];
    const p = wrapPlatformaticProducer(fakeProducer(sent, 12), { headerType });
    t.teardown(() => p.close());
    const messages = skewed(3000).map((m) => ({ topic: 't', ...m }));
    for (let i = 0; i < messages.length; i += 300) await p.send({ messages: messages.slice(i, i + 300) });
    const headerOf = (m, name) => {
      if (!(m.headers instanceof Map)) return text(m.headers?.[name]);
      for (const [k, v] of m.headers) if (text(k) === name) return text(v);
      return undefined;
    };
    check(t, sent, headerOf);
    t.ok(sent.every((m) => (headerType === 'buffer' ? m.headers instanceof Map : !(m.headers instanceof Map))), `headers as ${headerType === 'buffer' ? 'a Map of Buffers' : 'an object of strings'}`);
  });
}

t.test("wrapKafkaJsConsumer: each handler call in its producer's trace, the handler in its span's context", async (t) => {
  exporter.reset();
  // Messages as wrapKafkaJsProducer sent them (their headers as its spans wrote them), read back as KafkaJS batches carry them.
  const sent = [];
  const producer = { connect: async () => {}, disconnect: async () => {}, send: async (record) => { sent.push(...record.messages); return []; } };
  const admin = { fetchTopicMetadata: async ({ topics }) => topics.map((name) => ({ name, partitions: [{ partitionId: 0 }] })) };
  const p = wrapKafkaJsProducer(producer, { admin });
  await p.connect(['t']);
  await p.send({ topic: 't', messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i % 3}`, value: `v${i}` })) });
  await p.disconnect();
  const producerSpans = new Map(exporter.getFinishedSpans().map((s) => [s.spanContext().spanId, s]));
  const f = fakeKafkaJs({ topic: 't', partitions: 1 });
  const c = wrapKafkaJsConsumer(f.consumer, { admin: f.admin, commitIntervalMs: 10 });
  await c.connect();
  await c.subscribe({ topic: 't' });
  const inside = [];
  await c.run({ eachMessage: async () => { inside.push(api.trace.getSpan(api.context.active())?.spanContext().spanId); } });
  f.consumer.join([0]);
  const messages = sent.map((m, offset) => ({ key: Buffer.from(m.key), value: Buffer.from(m.value), offset: String(offset), headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, Buffer.from(String(v))])), size: 0 }));
  await f.consumer.eachBatch({ batch: { topic: 't', partition: 0, messages }, resolveOffset: () => {}, heartbeat: async () => {} });
  const deadline = Date.now() + 5000;
  while (inside.length < messages.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  await c.stop();
  const consumerSpans = exporter.getFinishedSpans().filter((s) => s.kind === api.SpanKind.CONSUMER);
  t.equal(consumerSpans.length, messages.length, 'a span per handler call');
  for (const span of consumerSpans) {
    const offset = span.attributes['messaging.kafka.offset'];
    const parent = producerSpans.get(span.parentSpanContext?.spanId ?? span.parentSpanId);
    t.ok(parent, `offset ${offset}: the child of a producer span`);
    t.equal(parent?.attributes['messaging.kafka.message.key'], sent[offset].key, `offset ${offset}: its own message's`);
    t.equal(span.spanContext().traceId, parent?.spanContext().traceId, `offset ${offset}: in its trace`);
  }
  t.same(new Set(inside), new Set(consumerSpans.map((s) => s.spanContext().spanId)), "each call ran in its span's context");
});
