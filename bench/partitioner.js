'use strict';
// npm run bench (second part): the cost of one DynamicPartitioner decision (hash + sketch +
// choice) for 16-byte string keys of a Zipf 1.0 stream, single and batch, printed beside
// KafkaJS's murmur2 alone and bloom-filters' CountMinSketch.update; then the balance figures
// of the simulator (default options, 100k keys, 1M messages, windows of 100k).
//
// Each case is measured in several interleaved rounds (benchmark.js, maxTime per round) and
// reported by its best round, as bench/hash.js does: the machine's neighbours come and go,
// and the best round is the one least disturbed by them.
//
// --help lists the flags.

const { flags } = require('./common');

const args = flags(__filename, {
  json: { type: 'boolean', help: 'print the figures as JSON on stdout, progress on stderr' },
  'max-time': { type: 'number', arg: 'SECONDS', min: 0.001, default: 0.5, help: 'benchmark.js maxTime per round' },
  rounds: { type: 'number', integer: true, min: 1, default: 4, help: 'rounds, the cases interleaved' },
  'no-balance': { type: 'boolean', help: "skip the simulator's balance figures" },
});

const Benchmark = require('benchmark');
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2');
const { CountMinSketch } = require('bloom-filters');
const { DynamicPartitioner, partitionForKey, partitionForKeys } = require('..');
const { KeyStream, parseWorkload } = require('../build/tools/workload');
const { simulate } = require('../build/tools/simulate');

const MAX_TIME = args['max-time'];
const ROUNDS = args.rounds;
Benchmark.support.decompilation = false; // call the closures, do not inline their source
const log = (...x) => (args.json ? process.stderr.write(x.join(' ') + '\n') : console.log(...x));

// A Zipf 1.0 stream over 100k distinct 16-byte keys, built outside the timed functions.
const K = 100000;
const names = Array.from({ length: K }, (_, i) => `k${String(i).padStart(15, '0')}`);
const ks = new KeyStream(parseWorkload('zipf:1.0'), K, 5);
const STREAM = 1 << 16;
const MASK = STREAM - 1;
const stream = Array.from({ length: STREAM }, () => Buffer.from(names[ks.next()]).toString('latin1'));
const BATCH = 1024;
const batches = Array.from({ length: STREAM / BATCH }, (_, b) => stream.slice(b * BATCH, (b + 1) * BATCH));

const partitioner = new DynamicPartitioner();
for (let i = 0; i < 500000; i++) partitioner.partition('bench', stream[i & MASK], 48); // warm: hot keys found
const sketch = new CountMinSketch(16384, 4);

let sink = 0;
let i = 0;
let b = 0;
const cases = {
  'decision, single': () => { sink += partitioner.partition('bench', stream[i++ & MASK], 48); },
  'decision with its record, decide()': () => { sink += partitioner.decide('bench', stream[i++ & MASK], 48) + partitioner.decision.order; },
  'decision, batch of 1024 (per key)': () => { sink += partitioner.partitionBatch('bench', batches[b++ & 63], 48)[0]; },
  'partitionForKey alone (no detection)': () => { sink += partitionForKey(stream[i++ & MASK], 48); },
  'partitionForKeys, batch of 1024 (per key)': () => { sink += partitionForKeys(batches[b++ & 63], 48)[0]; },
  "KafkaJS's murmur2 alone": () => { sink += kafkajsMurmur2(stream[i++ & MASK]); },
  "bloom-filters' CountMinSketch.update": () => { sketch.update(stream[i++ & MASK], 1); sink++; },
};
const perOp = { 'decision, batch of 1024 (per key)': BATCH, 'partitionForKeys, batch of 1024 (per key)': BATCH };

const results = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(cases)) {
    const bench = new Benchmark(name, fn, { maxTime: MAX_TIME, minSamples: 10 });
    bench.run();
    const ns = (bench.stats.mean * 1e9) / (perOp[name] ?? 1);
    results[name] = Math.min(results[name] ?? Infinity, ns);
  }
}
const single = results['decision, single'];
const batch = results['decision, batch of 1024 (per key)'];
log(`\nOne decision (hash + sketch + choice), 16-byte string keys, Zipf 1.0 over 100k keys, 48 partitions (best of ${ROUNDS} rounds):`);
for (const [name, ns] of Object.entries(results)) {
  log(`  ${name.padEnd(40)} ${ns.toFixed(1).padStart(8)} ns   ${(ns / single).toFixed(2).padStart(6)}x a single decision`);
}
// Floors as ratios to Kafka-exact hashing alone in the same run (absolute ns depend on the machine).
const singleRatio = results['decision with its record, decide()'] / results['partitionForKey alone (no detection)'];
const batchRatio = batch / results['partitionForKeys, batch of 1024 (per key)'];
log(`  floors: decide() <= 2.5x partitionForKey: ${singleRatio <= 2.5 ? 'met' : 'NOT met'} (${singleRatio.toFixed(2)}x); ` +
  `batch <= 3x partitionForKeys per key: ${batchRatio <= 3 ? 'met' : 'NOT met'} (${batchRatio.toFixed(2)}x)`);
log(`  a decision is ${(results["KafkaJS's murmur2 alone"] / single).toFixed(1)}x faster than KafkaJS's murmur2 alone and ` +
  `${(results["bloom-filters' CountMinSketch.update"] / single).toFixed(1)}x faster than bloom-filters' sketch update`);

const balance = [];
if (!args['no-balance']) {
  log('\nBalance (hottest partition / mean), default options, 100k keys, 1M messages, windows of 100k:');
  log('  workload            n   static  (worst window)   dynamic (worst window)  after shift   keys spread  partitions/key  cold moved');
  const workloads = ['zipf:0.8', 'zipf:1.0', 'zipf:1.2', 'zipf:1.5', 'zipf:2.0', 'shift:1.0:200000', 'uniform'];
  for (const workload of workloads) {
    for (const partitions of [12, 48]) {
      const r = simulate({ workload, partitions });
      const row = {
        workload, partitions,
        static: r.static.maxOverMean, staticWorst: r.static.worstWindow,
        dynamic: r.dynamic.maxOverMean, dynamicWorst: r.dynamic.worstWindow,
        afterShift: r.dynamic.windowAfterShift, keysSpread: r.dynamic.keysSpread,
        partitionsPerKey: r.dynamic.meanPartitionsPerSpreadKey, coldMoved: r.dynamic.coldMessagesMoved,
        detection: r.detection,
      };
      balance.push(row);
      log(`  ${workload.padEnd(18)} ${String(partitions).padStart(3)}   ${row.static.toFixed(2).padStart(6)}  (${row.staticWorst.toFixed(2)})          ` +
        `${row.dynamic.toFixed(3)}   (${row.dynamicWorst.toFixed(3)})        ${row.afterShift.length ? Math.max(...row.afterShift).toFixed(3) : '  -  '}        ` +
        `${String(row.keysSpread).padStart(5)}        ${row.partitionsPerKey.toFixed(1).padStart(5)}        ${row.coldMoved}`);
    }
  }
}
if (args.json) console.log(JSON.stringify({ decisionNs: results, ratios: { single: singleRatio, batch: batchRatio }, balance }, null, 2));
if (sink === 0.5) console.log(sink);
