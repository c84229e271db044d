'use strict';
// OpenTelemetry from send to handler, on librdkafka's mock cluster, with the SDK's in-memory
// exporter (@opentelemetry/sdk-trace-base) as the application would register it. Without a
// tracer provider nothing is added to a message. With one: every message DynamicProducer sends
// (send(), sendBatch(), produce()) has a PRODUCER span whose trace its `traceparent` header
// carries, and every handler call of DynamicConsumer a CONSUMER span, the child of the span of
// the message's producer (found by the partition and offset the broker's delivery report gave
// that message), with the messaging conventions' attributes; a hot key's spread messages say
// so on both sides (checked against the order header each consumed message carries); the
// handler runs in its span's context (a span it starts is its child); a failed call's span says
// so and its retry is the next attempt; a message forwarded with its own `traceparent` keeps it.
const t = require('tap');
const api = require('@opentelemetry/api');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { producerCluster: cluster, createTopic } = require('../lib/mock-cluster');
const { DynamicConsumer, decodeOrderHeader, ORDER_HEADER } = require('../..');

t.setTimeout(180_000);

/** Reads `topic` from its start with DynamicConsumer until `count` messages were handled; `handler(m, info)` runs on each call. */
async function consume(brokers, topic, group, count, handler) {
  const c = new DynamicConsumer({ 'metadata.broker.list': brokers, 'group.id': group, 'auto.offset.reset': 'earliest', log_level: 3 }, {},
    { retryBackoffMs: 5, commitIntervalMs: 100 });
  c.on('error', () => {});
  await c.connect();
  const handled = new Map();
  const run = c.run([topic], async (m, info) => {
    await handler(m, info);
    handled.set(`${m.partition}/${m.offset}`, { m, info });
    if (handled.size === count) setImmediate(() => c.stop());
  });
  const timer = setTimeout(() => c.stop(), 60_000);
  await run;
  clearTimeout(timer);
  return handled;
}

function headerOf(m, name) {
  for (const h of m.headers ?? []) if (h[name] !== undefined) return Buffer.from(h[name]).toString();
  return undefined;
}

const parentOf = (span) => span.parentSpanContext?.spanId ?? span.parentSpanId;

t.test('without a tracer provider nothing is added to a message', async (t) => {
  const { p, brokers } = await cluster(t);
  await createTopic(p, 'untraced');
  await p.send('untraced', 'v', 'k');
  const handled = await consume(brokers, 'untraced', 'untraced-group', 2, () => undefined);
  t.equal(handled.size, 2, 'both messages handled');
  for (const { m } of handled.values()) t.equal(headerOf(m, 'traceparent'), undefined, `${m.offset}: no traceparent`);
});

t.test('a trace from send to handler, with what the partitioner decided', async (t) => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.trace.setGlobalTracerProvider(provider);
  t.teardown(() => {
    api.trace.disable();
    api.context.disable();
  });
  const tracer = api.trace.getTracer('the-application');
  const { p, brokers } = await cluster(t, { warmupMessages: 50 });
  await createTopic(p, 'traced');
  const reports = [];
  // A request span around some sends: their producer spans are its children.
  const request = tracer.startSpan('request');
  await api.context.with(api.trace.setSpan(api.context.active(), request), async () => {
    for (let i = 0; i < 400; i++) reports.push(p.send('traced', `v${i}`, i % 4 === 3 ? `k${i % 20}` : 'hot'));
    await Promise.all(reports);
  });
  request.end();
  const batch = await p.sendBatch('traced', Array.from({ length: 40 }, (_, i) => ({ value: `b${i}`, key: `k${i % 7}` })));
  // A message forwarded with a traceparent of its own keeps it.
  const forwarded = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const kept = await p.send('traced', 'forwarded', 'f', [{ traceparent: forwarded }]);
  // Bad input gets the same typed error as without tracing.
  await t.rejects(p.send('traced', 'v', 'k', { not: 'a list' }), { name: 'InvalidArgTypeError' }, 'send(): headers that are not a list');
  await t.rejects(p.send('traced', 'v', 42), { name: 'InvalidArgTypeError' }, 'send(): a key that is neither a string nor bytes');
  t.throws(() => p.produce('traced', 'v', 'k', 'nope'), { name: 'InvalidArgTypeError' }, 'produce(): the same');
  await t.rejects(p.sendBatch('traced', [{ value: 'v', headers: 7 }]), { name: 'InvalidArgTypeError' }, 'sendBatch(): the same');
  p.produce('traced', 'produced', 'k-produce');
  await p.flush(10_000);
  const delivered = [...(await Promise.all(reports)), ...batch, kept];
  const total = delivered.length + 2; // and the warm-up and the produce()
  let failedOnce = false;
  const handled = await consume(brokers, 'traced', 'traced-group', total, async (m) => {
    await tracer.startActiveSpan('handler-work', async (span) => {
      span.end();
    });
    if (!failedOnce && m.value.toString() === 'v7') {
      failedOnce = true;
      throw new Error('once');
    }
  });
  t.equal(handled.size, total, 'every message handled');
  const spans = exporter.getFinishedSpans();
  const producers = spans.filter((s) => s.kind === api.SpanKind.PRODUCER);
  const consumers = spans.filter((s) => s.kind === api.SpanKind.CONSUMER);
  const at = (s) => `${s.attributes['messaging.destination.partition.id']}/${s.attributes['messaging.kafka.offset']}`;
  const producerAt = new Map(producers.map((s) => [at(s), s]));

  // The producer's side: one span per report, named by the conventions, children of the request where they were sent in it.
  for (const r of delivered) {
    const s = producerAt.get(`${r.partition}/${r.offset}`);
    if (!t.ok(s, `a producer span for ${r.partition}/${r.offset}`)) continue;
    t.equal(s.name, 'send traced');
    t.match(s.attributes, { 'messaging.system': 'kafka', 'messaging.operation.type': 'send', 'messaging.destination.name': 'traced' });
  }
  const inRequest = producers.filter((s) => parentOf(s) === request.spanContext().spanId);
  t.equal(inRequest.length, 400, "the 400 sends made in the request's context are its children");
  const hotSpans = producers.filter((s) => s.attributes['kdp.spread'] === true);
  t.ok(hotSpans.length > 0, `premise: the hot key spread (${hotSpans.length} producer spans say so)`);
  for (const s of hotSpans) t.same([s.attributes['kdp.hot'], s.attributes['messaging.kafka.message.key'], s.attributes['kdp.order.marked']], [true, 'hot', true]);

  // The consumer's side: each handled message's span is the child of its producer's span.
  let spread = 0;
  for (const [where, { m, info }] of handled) {
    const mine = consumers.filter((s) => at(s) === where);
    if (!t.ok(mine.length >= 1, `a consumer span for ${where}`)) continue;
    const last = mine[mine.length - 1];
    t.match(last.attributes, { 'messaging.system': 'kafka', 'messaging.operation.type': 'process', 'messaging.destination.name': 'traced', 'messaging.consumer.group.name': 'traced-group' });
    t.equal(typeof mine[0].attributes['kdp.wait_ms'], 'number', `${where}: its wait from read to its first call`);
    const value = m.value.toString();
    if (value === 'forwarded') {
      t.equal(headerOf(m, 'traceparent'), forwarded, 'the forwarded message kept its own traceparent');
      t.equal(last.spanContext().traceId, '0af7651916cd43dd8448eb211c80319c', "its consumer span is in the forwarded message's trace");
      continue;
    }
    // produce()'s span ends at its hand-over, before its offset is known: found by its key.
    const producer = value === 'produced' ? producers.find((s) => s.attributes['messaging.kafka.message.key'] === 'k-produce') : producerAt.get(where);
    t.ok(producer, `${where}: its producer span`);
    t.equal(last.spanContext().traceId, producer.spanContext().traceId, `${where}: the trace of its producer`);
    t.equal(parentOf(last), producer.spanContext().spanId, `${where}: the child of its producer span`);
    const order = headerOf(m, ORDER_HEADER);
    const kind = order === undefined ? null : decodeOrderHeader(order).kind;
    t.equal(info.order?.kind ?? null, kind, `${where}: premise, the engine read its order header`);
    t.equal(last.attributes['kdp.order'], kind ?? undefined, `${where}: its order header's kind`);
    t.equal(last.attributes['kdp.spread'], kind === null ? undefined : kind === 'spread', `${where}: spread or not`);
    t.equal(producer.attributes['kdp.spread'] === true, kind === 'spread', `${where}: its producer span says the same`);
    t.equal(producer.attributes['kdp.order'], kind ?? undefined, `${where}: the same order marker on its producer span`);
    if (kind === 'spread') spread++;
    const work = spans.find((s) => s.name === 'handler-work' && parentOf(s) === last.spanContext().spanId);
    t.ok(work, `${where}: the handler's own span is the child of its consumer span`);
  }
  t.ok(spread > 0, `spread messages read (${spread})`);
  const v7 = consumers.filter((s) => s.attributes['messaging.kafka.offset'] === [...handled.values()].find((h) => h.m.value.toString() === 'v7').m.offset
    && s.attributes['messaging.destination.partition.id'] === String([...handled.values()].find((h) => h.m.value.toString() === 'v7').m.partition));
  t.same(v7.map((s) => [s.attributes['kdp.attempt'], s.status.code]), [[1, api.SpanStatusCode.ERROR], [2, api.SpanStatusCode.UNSET]],
    'a failed call: its span is an error, the retry the second attempt');
  t.ok(producers.some((s) => s.attributes['messaging.kafka.message.key'] === 'k-produce'), 'produce() has its span too');
});
