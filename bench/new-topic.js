'use strict';
// node bench/new-topic.js — what a new topic's first messages pay for waiting in DynamicProducer
// for the topic's partition count (src/producer/place/unplaced.ts), against leaving them to librdkafka
// unassigned (maxQueued 2: none can wait), which keeps them in its queue until it has the
// topic's metadata. Each round, each way: a new producer, connected, sends MESSAGES messages
// (20 keys) to a topic never used before; the figures are the time from the first send() to its
// delivery report and to the last one's, medians over the rounds, the two ways alternating.
//
// --help lists the flags.

const { flags, median } = require('./common');

const args = flags(__filename, {
  rounds: { type: 'number', integer: true, min: 1, default: 8, help: 'rounds, the two ways alternating' },
  messages: { type: 'number', integer: true, min: 1, default: 200, help: 'messages per round and way' },
  brokers: {
    type: 'string', arg: 'LIST',
    help: "a real cluster with auto.create.topics.enable, e.g. scripts/kafka.sh's (default: librdkafka's mock cluster)",
  },
});

const { DynamicProducer } = require('..');

const ROUNDS = args.rounds;
const MESSAGES = args.messages;
const BROKERS = args.brokers;
const CLUSTER = BROKERS ? { 'bootstrap.servers': BROKERS } : { 'test.mock.num.brokers': 3 };
const WAYS = { 'waits for the count': 100_000, 'left to librdkafka': 2 };

async function round(maxQueued, r) {
  const p = new DynamicProducer({ ...CLUSTER, log_level: 0, 'linger.ms': 5 }, {}, { maxQueued });
  await p.connect();
  const topic = `kdp-new-topic-${r}-${maxQueued}-${Date.now().toString(36)}`;
  const t0 = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
  const sends = [];
  for (let i = 0; i < MESSAGES; i++) sends.push(p.send(topic, String(i), `k${i % 20}`));
  await sends[0];
  const first = ms();
  await Promise.all(sends);
  const last = ms();
  await p.disconnect();
  return { first, last };
}

async function main() {
  const results = Object.fromEntries(Object.keys(WAYS).map((w) => [w, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [way, maxQueued] of Object.entries(WAYS)) results[way].push(await round(maxQueued, r));
  }
  console.log(`${MESSAGES} messages to a new topic, ${BROKERS ? `cluster ${BROKERS}` : "librdkafka's mock cluster"}, medians of ${ROUNDS} rounds`);
  for (const [way, runs] of Object.entries(results)) {
    const first = median(runs.map((x) => x.first));
    const last = median(runs.map((x) => x.last));
    console.log(`${way.padEnd(22)} first delivered after ${first.toFixed(1)} ms, last after ${last.toFixed(1)} ms`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
