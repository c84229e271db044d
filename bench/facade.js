'use strict';
// npm run bench:facade — what DynamicProducer itself costs per message, without librdkafka:
// produce() with the native produce call replaced by a no-op (the message is not sent), with
// order headers on (default) and off, beside one DynamicPartitioner.decide() and one
// partitionForKey() (Kafka's hash alone), on the same keys (Zipf 1.0 over 10k, 4 partitions).
// Rounds interleave the four; each figure is the median over rounds of the process's CPU time
// per call (less sensitive than wall time to the machine's other work), and the ratio to
// partitionForKey in the same round. The raw client's produce() costs ~2 µs per message on the
// mock cluster (npm run bench:produce's CPU column): these are what DynamicProducer adds to it.
//
// Options: --rounds=N (default 15), --messages=N per round (default 200000).

const { DynamicProducer, DynamicPartitioner, partitionForKey } = require('..');
const { KeyStream, parseWorkload } = require('../build/tools/workload');

const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [k, v] = a.replace(/^--/, '').split('=');
  return [k, v === undefined ? true : v];
}));
const M = Number(args.messages ?? 200000);
const ROUNDS = Number(args.rounds ?? 15);
const VALUE = Buffer.alloc(100, 'v');
const stream = new KeyStream(parseWorkload('zipf:1.0'), 10000, 11);
const names = Array.from({ length: 10000 }, (_, i) => `customer-${i}`);
const KEYS = Array.from({ length: M }, () => names[stream.next()]);

/** A connected DynamicProducer (mock cluster) whose native produce() is a no-op from now on. */
async function producer(orderHeaders) {
  const p = new DynamicProducer({ 'test.mock.num.brokers': 1, 'log_level': 3, dr_cb: false }, {}, { orderHeaders });
  await p.connect(10000, { topics: ['bench'] });
  // The native binding DynamicProducer calls (src/producer/client.ts): replaced, nothing is sent.
  p.native = { produce: () => 0 };
  return p;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function main() {
  const spread = await producer('spread');
  const none = await producer('none');
  const partitioner = new DynamicPartitioner();
  const runs = {
    partitionForKey: () => { let x = 0; for (let i = 0; i < M; i++) x += partitionForKey(KEYS[i], 4); return x; },
    'decide()': () => { let x = 0; for (let i = 0; i < M; i++) x += partitioner.decide('bench', KEYS[i], 4); return x; },
    "produce(), orderHeaders 'none'": () => { for (let i = 0; i < M; i++) none.produce('bench', VALUE, KEYS[i]); },
    'produce(), order headers': () => { for (let i = 0; i < M; i++) spread.produce('bench', VALUE, KEYS[i]); },
  };
  const ns = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, run] of Object.entries(runs)) {
      const c0 = process.cpuUsage();
      run();
      const c = process.cpuUsage(c0);
      ns[name].push(((c.user + c.system) * 1000) / M);
    }
  }
  const base = ns.partitionForKey;
  console.log(`${M} calls per round, ${ROUNDS} rounds, Zipf 1.0 keys over 10k, 4 partitions; CPU ns per call (median), and its ratio to partitionForKey in the same round`);
  for (const [name, xs] of Object.entries(ns)) {
    const ratio = median(xs.map((x, i) => x / base[i]));
    console.log(`${name.padEnd(32)} ${median(xs).toFixed(0).padStart(5)} ns   ${ratio.toFixed(2)}×`);
  }
  await Promise.all([spread.disconnect(), none.disconnect()]);
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
