'use strict';
// npm run bench:transactions -- --brokers host:port,... — consume-transform-produce on a real cluster: a group of two
// processor processes (bench/ctp-processor.js) reads a backlog of `in` and writes each message, transformed, to
// `out`, exactly once (DynamicConsumer's `transaction` option over a transactional DynamicProducer), at least once
// (the same pipeline without transactions), and through KafkaJS 2.2.4's transactions (one per batch). Rows
// alternate over --rounds rounds so that the machine's noise falls on all of them.
//
// The backlog: two DynamicProducers write --messages messages, --hot-share of them on one key (spread over the
// partitions of `in`), the rest over --cold-keys keys. A row's rate is the messages over the time from the first
// message handled (the group's join left out: the same for every row) until the group's committed offsets reach
// the end of every partition of `in` (read every 100 ms). Printed: a row per run (rate, transactions committed, their commit's p50 / p99), then the medians and
// the ratios the transactional pipeline is held to.

const { fork } = require('node:child_process');
const path = require('node:path');
const { flags, median } = require('./common');

const count = (fallback, help, more = {}) => ({ type: 'number', integer: true, min: 0, default: fallback, help, ...more });
const args = flags(__filename, {
  brokers: { type: 'string', arg: 'host:port,...', help: 'the cluster (required)' },
  messages: count(40_000, 'messages in the backlog'),
  partitions: count(6, 'partitions of in and out'),
  'hot-share': { type: 'number', arg: 'F', min: 0, max: 1, default: 0.1, help: 'share of the messages on the hot key' },
  'cold-keys': count(1000, 'keys of the other messages'),
  concurrency: count(16, 'handler calls at once per processor (KafkaJS: keys at once per batch)'),
  'interval-ms': count(100, "the transaction option's intervalMs"),
  rounds: count(1, 'rounds of every row'),
  rows: { type: 'string', arg: 'a,b,...', default: 'transactions,transactions-await,at-least-once,kafkajs', help: 'rows to run: transactions (produce, not awaited), transactions-await (send() awaited), at-least-once, kafkajs' },
  json: { type: 'boolean', help: 'print the rows as JSON on stdout' },
}, { usage: 'npm run bench:transactions --' });

const Kafka = require('node-rdkafka');
const { DynamicProducer } = require('..');

const log = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const RUN = Date.now().toString(36);

function admin(act) {
  const a = Kafka.AdminClient.create({ 'bootstrap.servers': args.brokers, log_level: 3 });
  return act(a).finally(() => a.disconnect());
}

function createTopic(topic) {
  return admin((a) => new Promise((resolve, reject) => a.createTopic({
    topic, num_partitions: args.partitions, replication_factor: Math.min(3, args.brokers.split(',').length), config: { 'min.insync.replicas': '2' },
  }, 30000, (err) => (err ? reject(err) : resolve()))));
}

async function fill(topic) {
  const hot = `hot-${RUN}`;
  const per = Math.ceil(args.messages / 2);
  await Promise.all([0, 1].map(async (i) => {
    const p = new DynamicProducer({ 'bootstrap.servers': args.brokers, 'enable.idempotence': true, 'linger.ms': 5, log_level: 3 }, { acks: 'all' }, {});
    await p.connect(30000, { topics: [topic] });
    const sent = [];
    for (let n = 0; n < per && i * per + n < args.messages; n++) {
      const id = i * per + n;
      const key = Math.random() < args['hot-share'] ? hot : `k${Math.floor(Math.random() * args['cold-keys'])}`;
      sent.push(p.send(topic, Buffer.from(`v${id}`), key));
      if (sent.length >= 5000) await Promise.all(sent.splice(0));
    }
    await Promise.all(sent);
    await p.disconnect();
  }));
}

/** A reader of `group`'s committed offsets and of `topic`'s ends, made once per row: read(), close(). */
async function progressReader(group, topic) {
  const c = new Kafka.KafkaConsumer({ 'bootstrap.servers': args.brokers, 'group.id': group, log_level: 3 }, {});
  await new Promise((resolve, reject) => c.connect({ timeout: 10000 }, (err) => (err ? reject(err) : resolve())));
  const tps = Array.from({ length: args.partitions }, (_, partition) => ({ topic, partition }));
  const ends = await Promise.all(tps.map(({ partition }) => new Promise((resolve, reject) => c.queryWatermarkOffsets(topic, partition, 10000, (err, w) => (err ? reject(err) : resolve(w.highOffset))))));
  return {
    /** Whether the group's committed offsets reached the end of every partition (the backlog is written: the ends stay). */
    done: () => new Promise((resolve, reject) => c.committed(tps, 10000, (err, x) => (err ? reject(err) : resolve(x.every((o, i) => typeof o.offset === 'number' && o.offset >= ends[i]))))),
    close: () => new Promise((resolve) => c.disconnect(() => resolve())),
  };
}

async function row(name, input, round) {
  const mode = name === 'transactions-await' ? 'transactions' : name;
  const group = `ctp-${name}-${RUN}-${round}`;
  const output = `ctp-out-${name}-${RUN}-${round}`;
  await createTopic(output);
  const started = Date.now();
  const children = [0, 1].map((i) => {
    const child = fork(path.join(__dirname, 'ctp-processor.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const c = { child, handled: 0, seen: 0, report: null };
    c.ready = new Promise((resolve, reject) => child.on('message', (m) => {
      if (m.type === 'ready') resolve();
      else if (m.type === 'progress') {
        c.handled = m.handled;
        c.seen = m.seen;
      }
      else if (m.type === 'done') c.report = m;
      else if (m.type === 'failed') reject(new Error(m.stack));
    }));
    c.exited = new Promise((resolve) => child.on('exit', resolve));
    child.send({
      mode, brokers: args.brokers, group, input, output, transactionalId: `${group}-${i}`,
      concurrency: args.concurrency, intervalMs: args['interval-ms'], awaitSend: name === 'transactions-await',
    });
    return c;
  });
  while (children.every((c) => c.seen === 0) && Date.now() - started < 120_000) await sleep(2);
  const first = Date.now();
  await Promise.all(children.map((c) => c.ready));
  let ms = NaN;
  const reader = await progressReader(group, input);
  for (const deadline = Date.now() + 30 * 60_000; Date.now() < deadline; await sleep(100)) {
    if (await reader.done()) {
      ms = Date.now() - first;
      break;
    }
  }
  await reader.close();
  for (const c of children) c.child.send({ type: 'stop' });
  await Promise.all(children.map((c) => c.exited));
  const commits = children.map((c) => c.report?.commits).filter(Boolean);
  const handled = children.reduce((n, c) => n + (c.report?.handled ?? c.handled), 0);
  const r = {
    row: name, round, ms, rate: Math.round(args.messages / (ms / 1000)), handled,
    transactions: commits.reduce((n, c) => n + (c.committed ?? 0), 0),
    commitP50: Math.max(0, ...commits.map((c) => c.commitMsP50 ?? 0)), commitP99: Math.max(0, ...commits.map((c) => c.commitMsP99 ?? 0)),
  };
  const commitTimes = r.transactions > 0 ? `, commit p50 ${r.commitP50.toFixed(1)} ms, p99 ${r.commitP99.toFixed(1)} ms (the slower processor's)` : '';
  log(`${name.padEnd(20)} round ${round}: ${r.rate} msg/s (${ms} ms), handled ${handled}, ${r.transactions} transactions${commitTimes}`);
  return r;
}

async function main() {
  if (!args.brokers) throw new Error('--brokers host:port,... is required: transactions need a real cluster (the mock cluster keeps no offsets sent to one)');
  const rows = args.rows.split(',');
  const results = [];
  for (let round = 0; round < args.rounds; round++) {
    for (const name of rows) {
      // Each row reads a backlog of its own, written the same way.
      const input = `ctp-in-${name}-${RUN}-${round}`;
      await createTopic(input);
      await fill(input);
      results.push(await row(name, input, round));
    }
  }
  const rate = (name) => median(results.filter((r) => r.row === name).map((r) => r.rate));
  log('');
  for (const name of rows) log(`${name.padEnd(20)} median ${rate(name)} msg/s`);
  if (rows.includes('at-least-once')) {
    for (const name of ['transactions', 'transactions-await']) {
      if (rows.includes(name)) log(`${name} / at-least-once: ${(rate(name) / rate('at-least-once')).toFixed(2)}x (floor 0.7x)`);
    }
  }
  if (rows.includes('kafkajs')) {
    for (const name of ['transactions', 'transactions-await']) {
      if (rows.includes(name)) log(`${name} / kafkajs: ${(rate(name) / rate('kafkajs')).toFixed(2)}x (floor 2x)`);
    }
  }
  if (args.json) console.log(JSON.stringify(results));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
