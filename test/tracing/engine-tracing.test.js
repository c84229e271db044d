'use strict';
// The ordered-delivery engine's handler spans (src/delivery/tracing.ts) over a stand-in port,
// with the SDK's in-memory exporter: a spread key's message read before its predecessor is held
// by the resequencer, and its span gives the wait (at least the time its predecessor came later);
// a message's `traceparent` makes its span a child of that producer span, in any header shape a
// client gives (node-rdkafka's list, a KafkaJS-style object, @platformatic/kafka's Map on the
// stream's message); a bad `traceparent` is ignored (the active context is the parent); a
// dead-lettered message gets a PRODUCER span to the dead-letter topic, in its producer's trace; a
// batch handler's call is one span linked to its messages' producer spans.
const t = require('tap');
const api = require('@opentelemetry/api');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { Delivery } = require('../../build/delivery/delivery');
const { encodeOrderHeader, ORDER_SPREAD, ORDER_ANCHOR } = require('../..');

const TOPIC = 't';
const PID = '9f86d081884c7d65';
const HOLD_MS = 300;
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const waitFor = async (ok, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await delay(2);
  }
};

const exporter = new InMemorySpanExporter();
api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
t.teardown(() => api.trace.disable());

function standInPort() {
  return {
    name: 'a stand-in', carriesRecords: false, rejoin: 'restart', commitStuckMs: Number.POSITIVE_INFINITY,
    async commit() {},
    async committed() { return []; },
    refusal: () => 'other',
    pause() {},
    resume() {},
    async end() {},
  };
}

/** An engine (group 'g') whose handler is `handle` (with `batch`: its batch handler, calls of up to `batch` messages); the calls in order. */
async function engine(handle = () => undefined, extra = {}, batch = 0) {
  const calls = [];
  const d = new Delivery(standInPort(), {
    handlerRetries: 0, retryBackoffMs: 0, commitIntervalMs: 60_000, ordering: 'key', groupOrder: 'flag', maxPending: 1000, afterStop: 'idle',
    resequencer: { maxWaitMs: 60_000 }, groupId: 'g', ...extra,
  }, {
    handle: (m, info) => {
      calls.push(m.offset);
      return handle(m, info);
    },
    handleBatch: (ms, infos) => {
      calls.push(ms.map((m) => m.offset));
      return handle(ms, infos);
    },
    handlerError: () => {},
    emit: () => true,
    listenerCount: () => 1,
    resume: () => {},
    ended: () => {},
  });
  await d.connect(async () => {});
  d.run(4, batch);
  d.assignment.assigned([{ topic: TOPIC, partition: 0 }, { topic: TOPIC, partition: 1 }]);
  return { d, calls };
}

const spanAt = (partition, offset) => exporter.getFinishedSpans().filter((s) => s.kind === api.SpanKind.CONSUMER
  && s.attributes['messaging.destination.partition.id'] === String(partition) && s.attributes['messaging.kafka.offset'] === offset);
const parentOf = (span) => span.parentSpanContext?.spanId ?? span.parentSpanId;

t.test("a held message's span gives its wait for its predecessor", async (t) => {
  exporter.reset();
  const { d, calls } = await engine();
  const order = (sequence, previous, kind) => [{ 'kdp-order': encodeOrderHeader(kind, PID, sequence, previous, 2, 2, 0) }];
  // The key's second message (partition 1) is read first: held until its predecessor (partition 0) comes.
  t.ok(d.assignment.admit({ topic: TOPIC, partition: 1, offset: 10, key: Buffer.from('hot'), value: Buffer.from('second'), headers: order(2, 1, ORDER_SPREAD) }));
  await delay(HOLD_MS);
  t.same(calls, [], 'premise: held');
  const [blocked] = d.metrics().blockedKeys;
  t.match(blocked, { topic: TOPIC, key: 'hot', reason: 'predecessor' }, 'metrics(): the key held, for its predecessor');
  t.ok(blocked.waitedMs >= HOLD_MS - 20, `... for ${blocked.waitedMs} ms`);
  t.ok(d.assignment.admit({ topic: TOPIC, partition: 0, offset: 5, key: Buffer.from('hot'), value: Buffer.from('first'), headers: order(1, 0, ORDER_ANCHOR) }));
  await waitFor(() => calls.length === 2 && spanAt(1, 10).length === 1);
  t.same(calls, [5, 10], 'in order');
  const held = spanAt(1, 10)[0];
  const first = spanAt(0, 5)[0];
  t.ok(held.attributes['kdp.wait_ms'] >= HOLD_MS - 20, `the held one waited ${held.attributes['kdp.wait_ms']} ms (held ${HOLD_MS} ms)`);
  t.ok(first.attributes['kdp.wait_ms'] < HOLD_MS - 20, `its predecessor did not (${first.attributes['kdp.wait_ms']} ms)`);
  t.match(held.attributes, { 'kdp.order': 'spread', 'kdp.spread': true, 'kdp.order.marked': true, 'messaging.consumer.group.name': 'g', 'messaging.kafka.message.key': 'hot', 'kdp.attempt': 1 });
  t.equal(held.attributes['kdp.out_of_order'], undefined, 'in order: no out-of-order attribute');
  t.match(first.attributes, { 'kdp.order': 'anchor', 'kdp.spread': false });
  await d.stop(5000);
});

t.test('the trace context in every header shape a client gives', async (t) => {
  exporter.reset();
  const { d, calls } = await engine();
  const trace = (i) => `${String(i).padStart(32, 'a')}`;
  const parent = (i) => `00-${trace(i)}-${String(i).padStart(16, 'b')}-01`;
  const shapes = [
    ['node-rdkafka', (i) => ({ headers: [{ other: Buffer.from('x') }, { traceparent: Buffer.from(parent(i)) }] })],
    ['KafkaJS', (i) => ({ headers: { traceparent: Buffer.from(parent(i)), tracestate: 'k=v' } })],
    ['@platformatic/kafka', (i) => ({ message: { headers: new Map([[Buffer.from('traceparent'), Buffer.from(parent(i))]]) } })],
    ['a bad traceparent', () => ({ headers: [{ traceparent: 'nonsense' }] })],
  ];
  shapes.forEach(([, shape], i) => d.assignment.admit({ topic: TOPIC, partition: 0, offset: i, key: `k${i}`, value: null, ...shape(i + 1) }));
  await waitFor(() => calls.length === shapes.length && exporter.getFinishedSpans().length === shapes.length);
  shapes.forEach(([name], i) => {
    const span = spanAt(0, i)[0];
    if (name === 'a bad traceparent') {
      t.equal(parentOf(span), undefined, `${name}: a root span`);
      return;
    }
    t.equal(span.spanContext().traceId, trace(i + 1), `${name}: in its producer's trace`);
    t.equal(parentOf(span), String(i + 1).padStart(16, 'b'), `${name}: the child of its producer's span`);
  });
  t.equal(spanAt(0, 1)[0].spanContext().traceState?.get('k'), 'v', "KafkaJS's: the tracestate carried on");
  await d.stop(5000);
});

t.test('a dead-lettered message: a PRODUCER span to the dead-letter topic, in its producer\'s trace', async (t) => {
  exporter.reset();
  const written = [];
  const sink = { topic: 'dlq', write: async (messages) => { written.push(...messages); } };
  const { d } = await engine(() => {
    throw new Error('poison');
  }, { handlerRetries: 1, deadLetter: { sink } });
  const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  d.assignment.admit({ topic: TOPIC, partition: 0, offset: 3, key: 'p', value: null, headers: [{ traceparent: parent }] });
  await waitFor(() => exporter.getFinishedSpans().some((s) => s.kind === api.SpanKind.PRODUCER));
  const calls = spanAt(0, 3);
  t.same(calls.map((s) => [s.attributes['kdp.attempt'], s.status.code]), [[1, api.SpanStatusCode.ERROR], [2, api.SpanStatusCode.ERROR]], 'two attempts, both errors');
  const dead = exporter.getFinishedSpans().find((s) => s.kind === api.SpanKind.PRODUCER);
  t.match(dead, { name: 'send dlq', attributes: { 'messaging.destination.name': 'dlq', 'kdp.dead_letter': true, 'kdp.dead_letter.origin': 't/0/3', 'kdp.attempt': 2 } });
  t.equal(dead.spanContext().traceId, '0af7651916cd43dd8448eb211c80319c', "in the message's trace");
  t.equal(written.length, 1, 'premise: written to the sink');
  await d.stop(5000);
});

t.test("a batch handler's call: one span, linked to each message's producer span", async (t) => {
  exporter.reset();
  const { d, calls } = await engine(() => undefined, {}, 10);
  const parent = (i) => `00-${String(i).padStart(32, 'c')}-${String(i).padStart(16, 'd')}-01`;
  // One key: its messages go in one lane, so one call takes them together.
  for (let i = 1; i <= 4; i++) d.assignment.admit({ topic: TOPIC, partition: 0, offset: i, key: 'same', value: null, headers: i === 3 ? [] : [{ traceparent: parent(i) }] });
  await waitFor(() => calls.flat().length === 4 && exporter.getFinishedSpans().length === calls.length);
  const spans = exporter.getFinishedSpans();
  t.equal(spans.length, calls.length, `a span per call (${JSON.stringify(calls)})`);
  const all = spans.flatMap((s) => s.links.map((l) => l.context.spanId));
  t.same(all.sort(), [1, 2, 4].map((i) => String(i).padStart(16, 'd')), "linked to the producer spans of the messages that carry one");
  t.ok(spans.every((s) => s.kind === api.SpanKind.CONSUMER && s.name === 'process t' && s.attributes['messaging.batch.message_count'] >= 1), 'CONSUMER spans with the batch\'s count');
  t.equal(spans.reduce((n, s) => n + s.attributes['messaging.batch.message_count'], 0), 4, 'counting every message once');
  await d.stop(5000);
});

t.test("metrics().blockedKeys and their gauge: a key resting before its retry, a key parked on its dead letter", async (t) => {
  const { Registry } = require('prom-client');
  const registry = new Registry();
  const sink = { topic: 'dlq', write: async () => { throw new Error('no broker'); } };
  const { d } = await engine((m) => {
    throw new Error(`poison ${m.key}`);
  }, { handlerRetries: 1, retryBackoffMs: 60_000, retryBackoffMaxMs: 60_000, prometheus: registry });
  d.assignment.admit({ topic: TOPIC, partition: 0, offset: 1, key: 'r', value: null });
  await waitFor(() => d.metrics().blockedKeys.length === 1);
  t.match(d.metrics().blockedKeys, [{ topic: TOPIC, key: 'r', reason: 'retry' }], 'resting before its retry');
  t.match(await registry.metrics(), /^kdp_consumer_blocked_key_wait_ms\{topic="t",key="r",reason="retry"\} \d+$/m, 'its gauge');
  await d.stop(5000);
  const parked = await engine(() => {
    throw new Error('poison');
  }, { handlerRetries: 0, retryBackoffMs: 1000, retryBackoffMaxMs: 1000, deadLetter: { sink, maxParkMs: 60_000 } });
  parked.d.assignment.admit({ topic: TOPIC, partition: 1, offset: 4, key: 'p', value: null });
  await waitFor(() => parked.d.metrics().blockedKeys.some((b) => b.reason === 'parked'));
  t.match(parked.d.metrics().blockedKeys, [{ topic: TOPIC, key: 'p', reason: 'parked' }], 'parked: its dead letter could not be written');
  await parked.d.stop(5000);
});
