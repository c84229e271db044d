'use strict';
// npm run bench:tracing — what OpenTelemetry tracing costs DynamicProducer's send() and
// DynamicConsumer, on librdkafka's mock cluster: each row in a process of its own, without a
// tracer provider (tracing off), and with the SDK's BasicTracerProvider (and its
// AsyncLocalStorage context manager) sampling 1 trace in 100 or every span, through a
// BatchSpanProcessor into an exporter that drops them (the SDK's work without a network); rounds
// interleaved, medians of msg/s and each traced row's ratio to its untraced one. A last row times
// the SDK's own span alone (sdkRow()), and with it the most a row sampling every span can make.
// The producer rows send --messages messages of 100 bytes (25% on one hot key, the rest over
// 2,000 keys), a promise each, all at once; the consumer rows read topics this process filled
// once with as many messages (PER_TOPIC a topic), sent with a provider sampling 1 trace in 100,
// so that each carries a `traceparent` (1 in 100 of them sampled), with a no-op handler.
//
// --help lists the flags.

const { flags, median, start } = require('./common');

const args = flags(__filename, {
  messages: { type: 'number', integer: true, min: 1000, default: 100000, help: 'messages per row and round' },
  rounds: { type: 'number', integer: true, min: 1, default: 3, help: 'rounds, the rows interleaved' },
  json: { type: 'boolean', help: 'print the figures as JSON' },
  child: { type: 'string', arg: 'ROW', internal: true, help: 'run this row and print its figures as JSON' },
  bootstrap: { type: 'string', arg: 'LIST', internal: true, help: 'the mock cluster this process holds, with the filled topic' },
}, { usage: 'npm run bench:tracing --' });

const { spawnSync } = require('node:child_process');

const MESSAGES = args.messages;
const TOPIC = 'bench-tracing';
/**
 * librdkafka's mock cluster makes 4 partitions per topic and keeps at most 5 MB of each: the
 * consumer rows read topics of PER_TOPIC messages each (about 200 bytes with their headers), so
 * that every message sent is still there to read.
 */
const PER_TOPIC = 25000;
const CONSUMED = Array.from({ length: Math.ceil(MESSAGES / PER_TOPIC) }, (_, i) => `${TOPIC}-read-${i}`);
const VALUE = Buffer.alloc(100, 'v');
const keyOf = (i) => (i % 4 === 0 ? 'hot-tenant' : `key-${(i * 7919) % 2000}`);

/**
 * Registers the SDK's provider, spans batched into an exporter that drops them: sampling every
 * span (`ratio` 1: AlwaysOnSampler, whatever the message's traceparent says), or `ratio` of the
 * traces, a span with a parent following it (ParentBasedSampler: a consumer's span, its producer's).
 */
function registerProvider(ratio = 1) {
  const api = require('@opentelemetry/api');
  const { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } = require('@opentelemetry/sdk-trace-base');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
  const dropping = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const sampler = ratio === 1 ? new AlwaysOnSampler() : new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  api.trace.setGlobalTracerProvider(new BasicTracerProvider({ sampler, spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 1 << 20 })] }));
}

async function producerRow(bootstrap) {
  const { DynamicProducer } = require('..');
  const p = new DynamicProducer({ 'metadata.broker.list': bootstrap, 'linger.ms': 5, log_level: 3 }, { acks: 'all' }, {});
  await p.connect(30000, { topics: [TOPIC] });
  await p.send(TOPIC, VALUE, 'warm-up');
  const t0 = process.hrtime.bigint();
  const reports = await Promise.all(Array.from({ length: MESSAGES }, (_, i) => p.send(TOPIC, VALUE, keyOf(i))));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await p.disconnect();
  return { seconds, delivered: reports.length };
}

async function consumerRow(bootstrap) {
  const { DynamicConsumer } = require('..');
  const c = new DynamicConsumer({ 'metadata.broker.list': bootstrap, 'group.id': `bench-tracing-${process.pid}`, 'auto.offset.reset': 'earliest', log_level: 3 }, {}, {});
  await c.connect();
  let read = 0;
  let t0;
  let t1;
  const run = c.run(CONSUMED, () => {
    if (read++ === 0) t0 = process.hrtime.bigint();
    if (read === MESSAGES) {
      // The last message's call: stop() (its last commit, the group's leave) is not the row's work.
      t1 = process.hrtime.bigint();
      setImmediate(() => c.stop());
    }
  });
  const timer = setTimeout(() => c.stop(), 120000);
  await run;
  clearTimeout(timer);
  // From the first message to the last (the group's join is the mock cluster's, alike in every row).
  return { seconds: Number((t1 ?? process.hrtime.bigint()) - t0) / 1e9, delivered: read };
}

/**
 * The SDK's own span with nothing of this package or Kafka: per message, a CONSUMER span with the
 * conventions' four attributes, the child of a remote parent (as a message's traceparent gives
 * one), three more attributes, the handler (a no-op) run in its context, ended. What any
 * instrumentation of a handler call pays the SDK, sampling every span: the bound it puts on a
 * traced row (× untraced at most t / (t + this row's time a message), t the untraced row's).
 */
async function sdkRow() {
  registerProvider(1);
  const api = require('@opentelemetry/api');
  const tracer = api.trace.getTracer('bench');
  const attributes = { 'messaging.system': 'kafka', 'messaging.operation.type': 'process', 'messaging.destination.name': TOPIC, 'messaging.consumer.group.name': 'g' };
  const parent = api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
  const handler = () => undefined;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < MESSAGES; i++) {
    const span = tracer.startSpan(`process ${TOPIC}`, { kind: api.SpanKind.CONSUMER, attributes }, parent);
    span.setAttribute('messaging.destination.partition.id', String(i % 12));
    span.setAttribute('messaging.kafka.offset', i);
    span.setAttribute('kdp.attempt', 1);
    api.context.with(api.trace.setSpan(parent, span), handler);
    span.end();
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, delivered: MESSAGES };
}

/** `row` with the SDK's provider registered first, sampling `ratio` (registerProvider()). */
const traced = (ratio, row) => (b) => {
  registerProvider(ratio);
  return row(b);
};

const ROWS = {
  'send(), no provider': producerRow,
  'send(), sampling 1 in 100': traced(0.01, producerRow),
  'send(), sampling every span': traced(1, producerRow),
  'DynamicConsumer, no provider': consumerRow,
  'DynamicConsumer, sampling 1 in 100': traced(0.01, consumerRow),
  'DynamicConsumer, sampling every span': traced(1, consumerRow),
  'the SDK alone, a span per message': sdkRow,
};

async function child(name) {
  const r = await ROWS[name](args.bootstrap);
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exit(0);
}

/** A mock cluster held here, its topic filled with MESSAGES traced messages (each with a traceparent, 1 in 100 sampled). */
async function fill() {
  registerProvider(0.01);
  const { DynamicProducer } = require('..');
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, log_level: 3 }, {}, {});
  await p.connect();
  await p.send(TOPIC, VALUE, 'warm-up');
  for (let at = 0; at < MESSAGES; at += 10000) {
    await Promise.all(Array.from({ length: Math.min(10000, MESSAGES - at) }, (_, i) => p.send(CONSUMED[Math.floor((at + i) / PER_TOPIC)], VALUE, keyOf(at + i))));
  }
  const md = await new Promise((resolve, reject) => p.client.getMetadata({ timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m))));
  return { bootstrap: md.brokers.map((b) => `${b.host}:${b.port}`).join(','), close: () => p.disconnect() };
}

async function main() {
  const held = await fill();
  const names = Object.keys(ROWS);
  const results = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < args.rounds; round++) {
    for (const name of names) {
      // spawnSync blocks this thread, not librdkafka's, which serve the mock cluster meanwhile.
      const run = spawnSync(process.execPath, [__filename, `--child=${name}`, `--bootstrap=${held.bootstrap}`, `--messages=${MESSAGES}`], { encoding: 'utf8', timeout: 300000 });
      let r;
      try {
        r = JSON.parse(run.stdout.trim().split('\n').pop());
        results[name].push(r);
      } catch {
        console.error(`${name}: failed\n${run.stderr.slice(-2000)}`);
      }
      if (!args.json) process.stderr.write(`round ${round + 1}/${args.rounds} ${name}: ${r ? Math.round(MESSAGES / r.seconds) : '-'} msg/s\n`);
    }
  }
  await held.close();
  const rate = (name) => median(results[name].map((r) => MESSAGES / r.seconds));
  const SDK = 'the SDK alone, a span per message';
  const rows = names.map((name) => {
    const untraced = name.replace(/sampling .*$/, 'no provider');
    // A row sampling every span pays the SDK's span a message at least: its ratio to untraced is bounded by that.
    const bound = name.endsWith('every span') ? (1 / rate(untraced)) / (1 / rate(untraced) + 1 / rate(SDK)) : undefined;
    return {
      name,
      msgPerSec: Math.round(rate(name)),
      vsUntraced: name === SDK ? undefined : rate(name) / rate(untraced),
      bound,
      usPerMessage: 1e6 / rate(name),
      lost: Math.max(0, ...results[name].map((r) => MESSAGES - r.delivered)),
    };
  });
  if (args.json) {
    console.log(JSON.stringify({ messages: MESSAGES, rounds: args.rounds, rows }, null, 2));
    return;
  }
  console.log(`\n${MESSAGES} messages of 100 bytes, librdkafka's mock cluster; medians of ${args.rounds} rounds`);
  console.log('| row | msg/s | µs a message | × untraced | at most (the SDK\'s span) | lost |\n|---|---|---|---|---|---|');
  const fixed = (x) => (x === undefined ? '' : x.toFixed(2));
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.msgPerSec.toLocaleString('en-US')} | ${r.usPerMessage.toFixed(2)} | ${fixed(r.vsUntraced)} | ${fixed(r.bound)} | ${r.lost} |`);
  }
}

start(args.child, child, main);
