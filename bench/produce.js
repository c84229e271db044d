'use strict';
// npm run bench:produce — DynamicProducer against raw node-rdkafka with its built-in
// partitioner, same configuration, same run, each on its own librdkafka mock cluster:
// 100-byte messages with Zipf-distributed keys, timed until every delivery report has
// arrived (and, for the fire-and-forget path, until flush() returns with dr_cb off).
// Rounds alternate raw / dynamic so that machine noise hits both; the median of each is compared.
//
// Options: --messages=N (default 200000), --rounds=N (default 5), --json.

const Kafka = require('node-rdkafka');
const { DynamicProducer } = require('..');
const { KeyStream, parseWorkload } = require('../build/workload');

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [k, v] = a.replace(/^--/, '').split('=');
  return [k, v === undefined ? true : v];
}));
const MESSAGES = Number(args.messages ?? 200000);
const ROUNDS = Number(args.rounds ?? 5);
const TOPIC = 'bench';
const VALUE = Buffer.alloc(100, 'v');
const PARTITIONER = 'murmur2_random';
const QUEUE_FULL = -184;

const stream = new KeyStream(parseWorkload('zipf:1.0'), 10000, 11);
const names = Array.from({ length: 10000 }, (_, i) => `customer-${i}`);
const KEYS = Array.from({ length: MESSAGES }, () => names[stream.next()]);

const tick = () => new Promise((resolve) => setImmediate(resolve));

function config(reports) {
  return { 'test.mock.num.brokers': 3, 'linger.ms': 5, 'log_level': 3, ...(reports ? { dr_cb: true } : { dr_cb: false }) };
}

/** Raw node-rdkafka: produce(); on "queue full" poll and retry; librdkafka partitions. */
async function raw(reports) {
  const p = new Kafka.Producer(config(reports), { partitioner: PARTITIONER });
  await new Promise((resolve, reject) => p.connect({}, (err) => (err ? reject(err) : resolve())));
  let delivered = 0;
  if (reports) p.on('delivery-report', () => delivered++);
  p.setPollInterval(5);
  const warm = async () => {
    for (let i = 0; i < 1000; i++) p.produce(TOPIC, null, VALUE, names[i]);
    await new Promise((r) => p.flush(10000, r));
    await new Promise((r) => setTimeout(r, 50));
  };
  await warm();
  delivered = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < MESSAGES; ) {
    try {
      p.produce(TOPIC, null, VALUE, KEYS[i]);
      i++;
    } catch (err) {
      if (err.code !== QUEUE_FULL) throw err;
      p.poll();
      await tick();
    }
  }
  await new Promise((resolve, reject) => p.flush(60000, (err) => (err ? reject(err) : resolve())));
  while (reports && delivered < MESSAGES) {
    p.poll();
    await tick();
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  p.setPollInterval(0);
  await new Promise((r) => p.disconnect(5000, r));
  return MESSAGES / seconds;
}

/** DynamicProducer: produce(); on false wait for 'drain'. */
async function dynamic(reports, orderHeaders) {
  const p = new DynamicProducer(config(reports), { partitioner: PARTITIONER }, { orderHeaders });
  await p.connect();
  let delivered = 0;
  if (reports) p.on('delivery', () => delivered++);
  for (let i = 0; i < 1000; i++) p.produce(TOPIC, VALUE, names[i]);
  await p.flush(10000);
  for (let i = 0; i < 50 && !(p.metrics().topics[TOPIC].partitions > 0); i++) {
    await p.refreshMetadata(TOPIC).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
  }
  delivered = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < MESSAGES; i++) {
    if (!p.produce(TOPIC, VALUE, KEYS[i])) await new Promise((resolve) => p.once('drain', resolve));
  }
  await p.flush(60000);
  while (reports && delivered < MESSAGES) await tick();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await p.disconnect();
  return MESSAGES / seconds;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const results = {};
  // Order headers (on by default) cost node-rdkafka a header conversion per spread message; the
  // last two rows show the price of the partitioning alone.
  const paths = [
    ['with delivery reports', true, 'spread'],
    ['fire and forget', false, 'spread'],
    ['reports, no order headers', true, 'none'],
    ['fire&forget, no headers', false, 'none'],
  ];
  for (const [path, reports, orderHeaders] of paths) {
    const r = [];
    const d = [];
    for (let round = 0; round < ROUNDS; round++) {
      r.push(await raw(reports));
      d.push(await dynamic(reports, orderHeaders));
      if (!args.json) process.stderr.write(`  ${path} round ${round + 1}: raw ${Math.round(r[round])} msg/s, dynamic ${Math.round(d[round])} msg/s\n`);
    }
    results[path] = { raw: median(r), dynamic: median(d), ratio: median(d) / median(r) };
  }
  if (args.json) {
    console.log(JSON.stringify({ messages: MESSAGES, rounds: ROUNDS, results }, null, 2));
    return;
  }
  console.log(`\n${MESSAGES} messages of 100 bytes, Zipf 1.0 keys, mock cluster (4 partitions), median of ${ROUNDS} rounds`);
  console.log('path                       raw node-rdkafka     DynamicProducer      ratio (floor 0.95)');
  for (const [path, x] of Object.entries(results)) {
    console.log(`${path.padEnd(26)} ${Math.round(x.raw).toString().padStart(9)} msg/s    ${Math.round(x.dynamic).toString().padStart(9)} msg/s      ${x.ratio.toFixed(3)} ${x.ratio >= 0.95 ? 'met' : 'NOT met'}`);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
