'use strict';
// npm run bench:dead-letters -- --brokers host:port,... — what a message that keeps failing costs the other keys, on a
// real cluster. A DynamicProducer writes a backlog of --messages Zipf-keyed messages, --hot-share of them on one key
// too hot for a partition (spread). A group of two member processes (test/kafka/lib/dead-letter-member.js:
// DynamicConsumer, --concurrency calls at once, a handler that awaits 2-5 ms, a dead-letter topic) reads it twice, each
// time as a new group: 'clean', nothing failing; 'poison', the handler always throwing on one cold-key message (at 10% of
// the backlog) and one message of the spread key (at 30%), each dead-lettered after two retries. Rows alternate over
// --rounds rounds.
//
// A row's figure: the other keys' throughput, their messages (those of neither poisoned key) over the time from the
// group's first message handled to the last of theirs. Printed: a row per run, the medians, and poison / clean (the
// floor: 0.9x).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { fork } = require('node:child_process');
const { flags, median } = require('./common');

const count = (fallback, help, more = {}) => ({ type: 'number', integer: true, min: 0, default: fallback, help, ...more });
const args = flags(__filename, {
  brokers: { type: 'string', arg: 'host:port,...', help: 'the cluster (required)' },
  messages: count(200_000, 'messages in the backlog'),
  partitions: count(6, 'partitions of the topic read'),
  'hot-share': { type: 'number', arg: 'F', min: 0, max: 1, default: 0.2, help: 'share of the messages on the hot key' },
  'cold-keys': count(5000, 'keys of the other messages (Zipf 1.0)'),
  concurrency: count(32, 'handler calls at once per member'),
  rounds: count(1, 'rounds of both rows'),
  json: { type: 'boolean', help: 'print the rows as JSON on stdout' },
}, { usage: 'npm run bench:dead-letters --' });

const Kafka = require('node-rdkafka');
const { DynamicProducer } = require('..');
const { KeyStream, parseWorkload, prng } = require('../build/tools/workload');
const { value } = require('../test/kafka/lib/kafka');

const MEMBER = path.join(__dirname, '..', 'test', 'kafka', 'lib', 'dead-letter-member.js');
const log = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const RUN = Date.now().toString(36);

function createTopic(topic) {
  const a = Kafka.AdminClient.create({ 'bootstrap.servers': args.brokers, log_level: 3 });
  return new Promise((resolve, reject) => a.createTopic({
    topic, num_partitions: args.partitions, replication_factor: Math.min(3, args.brokers.split(',').length),
  }, 30000, (err) => (err ? reject(err) : resolve()))).finally(() => a.disconnect());
}

/** Writes the backlog; returns each message's key id (the hot key: cold-keys) and the two poisoned messages. */
async function fill(topic) {
  const n = args.messages;
  const hotId = args['cold-keys'];
  const keys = Array.from({ length: hotId }, (_, i) => `k${i}-${RUN}`);
  keys.push(`hot-${RUN}`);
  const stream = new KeyStream(parseWorkload('zipf:1.0'), hotId, 0xd1e);
  const rand = prng(0x5a5a);
  const keyOf = new Int32Array(n);
  const perKey = new Uint32Array(keys.length);
  const p = new DynamicProducer({ 'bootstrap.servers': args.brokers, 'enable.idempotence': true, 'linger.ms': 5, log_level: 3 }, { acks: 'all' }, {});
  await p.connect(30000, { topics: [topic] });
  const sent = [];
  for (let id = 0; id < n; id++) {
    const k = rand() < args['hot-share'] ? hotId : stream.next();
    keyOf[id] = k;
    sent.push(p.send(topic, value(id, k, perKey[k]++), keys[k]));
    if (sent.length >= 5000) await Promise.all(sent.splice(0));
  }
  await Promise.all(sent);
  await p.disconnect();
  const later = (id) => keyOf.subarray(id + 1).filter((k) => k === keyOf[id]).length;
  let cold = Math.floor(n * 0.1);
  while (keyOf[cold] === hotId || later(cold) < 3) cold++;
  let hot = Math.floor(n * 0.3);
  while (keyOf[hot] !== hotId) hot++;
  return { keyOf, poison: [cold, hot] };
}

async function row(name, topic, backlog, round) {
  const group = `dl-${name}-${RUN}-${round}`;
  const dlq = `dl-out-${name}-${RUN}-${round}`;
  await createTopic(dlq);
  const poison = name === 'poison' ? backlog.poison : [];
  const members = [0, 1].map(() => {
    const logFile = path.join(os.tmpdir(), `kdp-bench-dl-${RUN}-${Math.random().toString(36).slice(2)}.log`);
    const child = fork(MEMBER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const m = { child, log: logFile, count: 0, report: null, ended: null };
    m.ready = new Promise((resolve, reject) => child.on('message', (x) => {
      if (x.type === 'ready') resolve();
      else if (x.type === 'progress') m.count = x.handled;
      else if (x.type === 'done') m.report = x;
      else if (x.type === 'ended') m.ended = x;
      else if (x.type === 'failed') reject(new Error(x.stack));
    }));
    m.exited = new Promise((resolve) => child.on('exit', resolve));
    child.send({ type: 'start', bootstrap: args.brokers, group, input: topic, dlq, poison, groupProtocol: 'classic', concurrency: args.concurrency, log: logFile });
    return m;
  });
  await Promise.all(members.map((m) => m.ready));
  const { keyOf } = backlog;
  const poisonedKeys = new Set(backlog.poison.map((id) => keyOf[id]));
  const others = keyOf.filter((k) => !poisonedKeys.has(k)).length;
  const seen = new Uint8Array(args.messages);
  let first = Infinity;
  let lastOther = 0;
  let distinctOthers = 0;
  let lettered = 0;
  const read = () => {
    lettered = 0;
    for (const m of members) {
      if (!fs.existsSync(m.log)) continue;
      for (const line of fs.readFileSync(m.log, 'utf8').split('\n')) {
        const f = line.split(' ');
        if (f[0] === 'd') lettered++;
        if (f[0] !== 'h') continue;
        const id = Number(f[1]);
        const ms = Number(f[3]);
        first = Math.min(first, ms);
        if (poisonedKeys.has(keyOf[id])) continue;
        lastOther = Math.max(lastOther, ms);
        if (seen[id] === 0) distinctOthers++;
        seen[id] = 1;
      }
    }
  };
  for (const deadline = Date.now() + 60 * 60_000; Date.now() < deadline; await sleep(1000)) {
    if (members.reduce((n, m) => n + m.count, 0) < others) continue;
    seen.fill(0);
    distinctOthers = 0;
    read();
    if (distinctOthers >= others && lettered >= poison.length) break;
  }
  for (const m of members) m.child.send({ type: 'stop' });
  await Promise.all(members.map((m) => m.exited));
  for (const m of members) fs.rmSync(m.log, { force: true });
  const ms = lastOther - first;
  const r = { row: name, round, others, ms: Math.round(ms), rate: Math.round(others / (ms / 1000)), lettered, stopped: members.filter((m) => m.ended).length };
  log(`${name.padEnd(8)} round ${round}: other keys ${r.rate} msg/s (${others} in ${r.ms} ms), dead-lettered ${lettered}, runs stopped ${r.stopped}`);
  return r;
}

async function main() {
  if (!args.brokers) throw new Error('--brokers host:port,... is required');
  const results = [];
  for (let round = 0; round < args.rounds; round++) {
    const topic = `dl-in-${RUN}-${round}`;
    await createTopic(topic);
    const backlog = await fill(topic);
    for (const name of round % 2 === 0 ? ['clean', 'poison'] : ['poison', 'clean']) results.push(await row(name, topic, backlog, round));
  }
  const rate = (name) => median(results.filter((r) => r.row === name).map((r) => r.rate));
  log('');
  for (const name of ['clean', 'poison']) log(`${name.padEnd(8)} median ${rate(name)} msg/s (other keys)`);
  log(`poison / clean: ${(rate('poison') / rate('clean')).toFixed(2)}x (floor 0.9x)`);
  if (args.json) console.log(JSON.stringify(results));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
