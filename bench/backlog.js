'use strict';
// npm run bench:backlog — a group catching up on a backlog of a spread key, against one member
// alone: the rate of each, what went out flagged, the longest a message waited, and the handled
// records' sizes (the broker keeps 4,096 characters of a commit's metadata).
//
// One DynamicProducer sends --messages messages in a burst, --hot-share of them on one key (which
// it spreads: the key changes partition many times) and the rest over --cold-keys keys. Then, for
// each of --rounds rounds, one member alone and a group of --members DynamicConsumers (native
// engine, groupOrder 'wait', --concurrency, a handler of 1–3 ms) each read the whole backlog
// under a group of their own; the two alternate so that the machine's noise falls on both.
//
// Counted from the messages' values (the key's sequence number, written by the producer): every
// message handled once (duplicates are re-reads, counted), the hot key's order, the flagged ones
// by reason. The rate is messages over the time from the first member's run to the last message
// handled. Printed: a row per run, and the group's rate as a multiple of one member's (medians).
//
// Cluster: librdkafka's in-process mock cluster (4 partitions) by default; --brokers=host:port,...
// runs against a real cluster (a topic of --partitions partitions made for the run and deleted
// after it).

const { flags, median } = require('./common');

const count = (fallback, help, more = {}) => ({ type: 'number', integer: true, min: 0, default: fallback, help, ...more });

const args = flags(__filename, {
  messages: count(40_000, 'messages in the backlog'),
  'hot-share': { type: 'number', arg: 'F', min: 0, max: 1, default: 0.1, help: 'share of the messages on the hot key' },
  'cold-keys': count(1000, 'keys of the other messages'),
  members: count(2, 'members of the group'),
  concurrency: count(32, 'handler calls at once per member'),
  rounds: count(1, 'rounds of (one member, the group)'),
  'max-wait-ms': count(30_000, "the resequencer's maxWaitMs"),
  brokers: { type: 'string', arg: 'host:port,...', help: "a real cluster (default: librdkafka's mock cluster)" },
  partitions: count(6, 'with --brokers: partitions of the topic'),
  'consumer-options': { type: 'string', arg: 'JSON', help: 'options for the DynamicConsumers, over the run\'s' },
  'producer-options': { type: 'string', arg: 'JSON', help: 'options for the DynamicProducer (e.g. {"splitRunMs":0}: runs of hotRun messages)' },
  json: { type: 'boolean', help: 'print the rows as JSON on stdout' },
}, { usage: 'npm run bench:backlog --' });

const Kafka = require('node-rdkafka');
const { DynamicProducer, DynamicConsumer } = require('..');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (text) => process.stderr.write(`${text}\n`);
const TOPIC = `backlog-${Date.now().toString(36)}`;

async function admin(brokers, act) {
  const a = Kafka.AdminClient.create({ 'bootstrap.servers': brokers, log_level: 3 });
  try {
    return await act(a);
  } finally {
    a.disconnect();
  }
}

/** The producer (holding the mock cluster when there is no --brokers) and the bootstrap list. */
async function cluster() {
  const global = args.brokers ? { 'bootstrap.servers': args.brokers, log_level: 3 } : { 'test.mock.num.brokers': 3, log_level: 3 };
  if (args.brokers) {
    await admin(args.brokers, (a) => new Promise((resolve, reject) => a.createTopic(
      { topic: TOPIC, num_partitions: args.partitions, replication_factor: Math.min(3, args.brokers.split(',').length) }, 30000,
      (err) => (err ? reject(err) : resolve()))));
  }
  const p = new DynamicProducer(global, {}, args['producer-options'] ? JSON.parse(args['producer-options']) : {});
  await p.connect();
  const md = await new Promise((resolve, reject) => p.client.getMetadata({ timeout: 5000 }, (e, m) => (e ? reject(e) : resolve(m))));
  return { p, brokers: args.brokers ?? md.brokers.map((b) => `${b.host}:${b.port}`).join(',') };
}

/** Sends the backlog in a burst; the hot key's partitions in send order. */
async function produce(p) {
  await p.send(TOPIC, 'warm-up', null);
  for (let i = 0; i < 200 && !(p.metrics().topics[TOPIC]?.partitions > 0); i++) {
    await p.refreshMetadata(TOPIC).catch(() => undefined);
    await sleep(20);
  }
  const every = Math.max(1, Math.round(1 / args['hot-share']));
  const sequence = new Map();
  const sends = [];
  const hot = [];
  for (let i = 0; i < args.messages; i++) {
    const key = args['hot-share'] > 0 && i % every === 0 ? 'hot' : `cold-${i % args['cold-keys']}`;
    const s = (sequence.get(key) ?? 0) + 1;
    sequence.set(key, s);
    const sent = p.send(TOPIC, String(s), key);
    sends.push(sent);
    if (key === 'hot') hot.push(sent);
    if (i % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(sends);
  const partitions = (await Promise.all(hot)).map((r) => r.partition);
  let moves = 0;
  for (let i = 1; i < partitions.length; i++) if (partitions[i] !== partitions[i - 1]) moves++;
  return { hot: partitions.length, moves, spreadOver: new Set(partitions).size };
}

/** One run: `members` consumers of a fresh group read the backlog; its figures. */
let runCount = 0;

async function run(brokers, members, round) {
  const group = `${TOPIC}-${members}-${round}-${runCount++}`;
  const extra = args['consumer-options'] ? JSON.parse(args['consumer-options']) : {};
  const consumers = Array.from({ length: members }, () => new DynamicConsumer(
    { 'metadata.broker.list': brokers, 'group.id': group, 'auto.offset.reset': 'earliest', log_level: 3,
      ...(args.brokers ? {} : { 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500 }) },
    {}, { engine: 'native', groupOrder: 'wait', concurrency: args.concurrency, resequencer: { maxWaitMs: args['max-wait-ms'] }, ...extra }));
  const seen = new Set();
  const flagged = {};
  let handled = 0;
  let duplicates = 0;
  let inverted = 0;
  let top = 0;
  let last = Date.now();
  // Per hot message (by its sequence number): when its handler call began and ended, and which member made it.
  const hotStart = new Map();
  const hotEnd = new Map();
  const hotMember = new Map();
  const handlerOf = (member) => async (m, info) => {
    if (m.key === null) return;
    const key = m.key.toString();
    const id = `${key}:${m.value}`;
    if (seen.has(id)) {
      duplicates++;
    } else {
      seen.add(id);
      handled++;
      if (!info.ordered) flagged[info.reason] = (flagged[info.reason] ?? 0) + 1;
      if (key === 'hot') {
        const s = Number(m.value.toString());
        if (s < top) inverted++;
        else top = s;
        hotStart.set(s, performance.now());
        hotMember.set(s, member);
      }
    }
    last = Date.now();
    await sleep(1 + Math.floor(Math.random() * 3));
    if (key === 'hot') hotEnd.set(Number(m.value.toString()), performance.now());
  };
  let most = 0;
  const sampler = setInterval(() => {
    for (const c of consumers) {
      const r = c.metrics().records;
      if (r) most = Math.max(most, r.committedCharsMax ?? 0);
    }
  }, 200);
  await Promise.all(consumers.map((c) => c.connect()));
  const started = Date.now();
  const runs = consumers.map((c, i) => c.run([TOPIC], handlerOf(i)));
  const deadline = started + 10 * 60_000;
  while (handled < args.messages && Date.now() < deadline) await sleep(50);
  const ms = last - started;
  clearInterval(sampler);
  const records = consumers.map((c) => c.metrics().records);
  await Promise.all(consumers.map((c) => c.stop()));
  await Promise.all(runs);
  // A hop of the hot key's chain: from its message's end to the next one's start, within a member or across.
  const gaps = { same: [], cross: [] };
  for (const [s, end] of hotEnd) {
    const next = hotStart.get(s + 1);
    if (next === undefined) continue;
    gaps[hotMember.get(s) === hotMember.get(s + 1) ? 'same' : 'cross'].push(next - end);
  }
  const hop = (xs) => ({ n: xs.length, meanMs: xs.length ? +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2) : 0, p99Ms: xs.length ? +xs.sort((a, b) => a - b)[Math.floor(xs.length * 0.99)].toFixed(1) : 0 });
  const sum = (f) => records.reduce((a, r) => a + (r ? f(r) : 0), 0);
  return {
    members, round, handled, ms, rate: Math.round((handled / ms) * 1000), duplicates, inverted, flagged,
    tooLarge: sum((r) => r.tooLarge), mostChars: most, hops: { same: hop(gaps.same), cross: hop(gaps.cross) }, commits: sum((r) => r.committed), meanChars: Math.round(sum((r) => r.committedChars) / Math.max(1, sum((r) => r.committed))),
  };
}

async function main() {
  const { p, brokers } = await cluster();
  try {
    const sent = await produce(p);
    log(`backlog: ${args.messages} messages, ${sent.hot} on the hot key over ${sent.spreadOver} partitions, ${sent.moves} moves`);
    const rows = [];
    for (let round = 0; round < args.rounds; round++) {
      for (const members of [1, args.members]) {
        const row = await run(brokers, members, round);
        rows.push(row);
        log(`${members} member(s): ${row.handled} handled in ${row.ms} ms (${row.rate}/s), flagged ${JSON.stringify(row.flagged)}, inverted ${row.inverted}, duplicates ${row.duplicates}, commits ${row.commits} (mean ${row.meanChars} chars, most ${row.mostChars}, ${row.tooLarge} too large); hot key's hops within a member ${JSON.stringify(row.hops.same)}, across ${JSON.stringify(row.hops.cross)}`);
      }
    }
    const one = median(rows.filter((r) => r.members === 1).map((r) => r.rate));
    const many = median(rows.filter((r) => r.members === args.members).map((r) => r.rate));
    log(`group of ${args.members}: ${(many / one).toFixed(2)}x one member's rate`);
    if (args.json) process.stdout.write(`${JSON.stringify({ sent, rows, ratio: many / one })}\n`);
  } finally {
    await p.disconnect();
    if (args.brokers) await admin(args.brokers, (a) => new Promise((resolve) => a.deleteTopic(TOPIC, 30000, () => resolve())));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
