'use strict';
// One member process of the dead-letter broker test (test/kafka/dead-letters.test.js), forked: a DynamicConsumer (native
// engine where built, `concurrency`, a handler that awaits 2-5 ms) of `group` reading `input`, whose handler always throws
// on the message ids in `poison`; `deadLetter` is the consumer's option (a producer it makes, or one made here from
// `deadLetterProducer`: its extra librdkafka settings). What it handled and dead-lettered is appended to the file `log`
// as each happens, with a write the kernel keeps through a SIGKILL: lines `h <id> <seq> <ms> <flagged>` and
// `d <id> <ms> <attempts>` (ms: performance.timeOrigin + performance.now(), one clock for every process of the machine).
// Protocol over the IPC channel:
//   parent → { type: 'start', bootstrap, group, input, dlq, poison, concurrency, groupProtocol, maxParkMs, deadLetterProducer, log }
//   worker → { type: 'ready' }
//   worker → { type: 'progress', handled, metrics }  every 200 ms (handled: how many so far)
//   worker → { type: 'ended', code, message, offset, partition }  the run ended by itself (rejected)
//   parent → { type: 'stop' } → worker → { type: 'done', ... } after a clean stop
// A SIGKILL may come at any time.
//
// Run directly (tap does when named), this file has no tests: it waits for a parent.

const fs = require('node:fs');
const { DynamicProducer, DynamicConsumer } = require('../../..');
const { serveWorker } = require('./worker');
const { parseValue } = require('./kafka');

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(o) {
  let producer;
  if (o.deadLetterProducer) {
    producer = new DynamicProducer({ 'bootstrap.servers': o.bootstrap, log_level: 2, ...o.deadLetterProducer }, {}, { spread: false });
    producer.on('error', () => {});
    await producer.connect();
  }
  const poison = new Set(o.poison);
  const consumer = new DynamicConsumer({
    'bootstrap.servers': o.bootstrap,
    'group.id': o.group,
    'auto.offset.reset': 'earliest',
    'fetch.wait.max.ms': 50,
    ...(o.groupProtocol === 'consumer' ? { 'group.protocol': 'consumer' } : { 'session.timeout.ms': 6000 }),
    'log_level': 2,
  }, {}, {
    // The resequencer's default wait (30 s): a member SIGKILLed is replaced (session 6 s, a rejoin) well within it.
    concurrency: o.concurrency, handlerRetries: 2, retryBackoffMs: 50,
    deadLetter: { topic: o.dlq, ...(producer ? { producer } : {}), ...(o.maxParkMs ? { maxParkMs: o.maxParkMs } : {}) },
  });
  const warnings = [];
  let parkWarnings = 0;
  consumer.on('warning', (e) => {
    if (e.code === 'KDP_DEAD_LETTER') parkWarnings++;
    else if (warnings.length < 20) warnings.push(String(e.message));
  });
  consumer.on('error', (e) => warnings.length < 20 && warnings.push(`error: ${e.message}`));
  const log = fs.openSync(o.log, 'a');
  let handled = 0;
  consumer.on('deadLettered', (m, err) => {
    const v = parseValue(m.value);
    fs.writeSync(log, `d ${v.id} ${now()} ${err.attempts}\n`);
  });
  await consumer.connect();
  const done = consumer.run([o.input], async (m, info) => {
    const v = parseValue(m.value);
    await sleep(2 + Math.random() * 3);
    if (poison.has(v.id)) throw Object.assign(new Error(`poison ${v.id}`), { code: 'E_POISON' });
    fs.writeSync(log, `h ${v.id} ${v.seq} ${now()} ${info.outOfOrder ? 1 : 0}\n`);
    handled++;
  });
  let ended = null;
  done.catch((err) => {
    ended = { code: err.code, message: err.message, offset: err.offset, partition: err.partition, topic: err.topic };
    process.send({ type: 'ended', ...ended });
  });
  process.send({ type: 'ready' });
  const metrics = () => ({ consumer: consumer.metrics(), warnings, parkWarnings });
  const flush = () => process.send({ type: 'progress', handled, metrics: metrics() });
  const timer = setInterval(flush, 200);
  await new Promise((resolve) => process.on('message', (m) => m.type === 'stop' && resolve()));
  clearInterval(timer);
  if (ended === null) await consumer.stop().catch(() => undefined);
  await done.catch(() => undefined);
  flush();
  if (producer) await producer.disconnect();
  fs.closeSync(log);
  process.send({ type: 'done', metrics: metrics() });
}

serveWorker(module, run, (stack) => ({ type: 'failed', stack }));
