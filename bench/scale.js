'use strict';
// npm run bench:scale: how the partitioner scales with the producer's work. Side by side in
// one run, with default options and a Zipf 1.0 stream over 100k keys per topic:
// - 1, 16, 64, 256 and 1,000 topics of 48 partitions, their messages interleaved at random
//   (each topic the same share); past maxTopics (64) topics are partitioned without state;
// - one topic of 12, 48, 256 and 1,024 partitions;
// - 64 topics with the shared tables (maxTrackedKeys, sketch.width) four times the default.
// For each: the cost of a decision (partition(), JS loop included, over the measured part),
// the per-topic imbalance (hottest partition / mean over the messages after each topic's
// warm-up, mean and worst over the topics with state) beside random-placement noise
// 1 + 2.5 sqrt(n / W) (W the topic's measured messages), the topics without state and
// evictions (stats()), the table of tracked keys' size, and the WebAssembly memory in bytes
// beside its bound (stats().memoryBoundBytes). The machine may be shared: every row is run
// in several interleaved rounds and its decision cost is the best round's (the one least
// disturbed by the neighbours), printed as a ratio to the 1-topic 48-partition row's. Each
// row's stream is seeded alike, so its balance figures are the same in every round and run.
//
// --help lists the flags.

const { flags, median } = require('./common');

const args = flags(__filename, {
  json: { type: 'boolean', help: 'print the rows as JSON' },
  quick: { type: 'boolean', help: 'a quarter of the messages' },
  only: { type: 'string', arg: 'I[,I]', help: 'the first row (the reference of the cost ratios, always run) and these rows, by index 1..8 (default: every row)' },
  rounds: { type: 'number', integer: true, min: 1, default: 3, help: 'rounds, the rows interleaved' },
  options: { type: 'string', arg: 'JSON', parse: JSON.parse, help: 'DynamicPartitioner options for every row, e.g. \'{"maxTopics":1000}\'' },
}, { usage: 'npm run bench:scale --' });

const { DynamicPartitioner } = require('..');
const { KeyStream, parseWorkload } = require('../build/tools/workload');

const QUICK = args.quick;
const K = 100_000;
const names = Array.from({ length: K }, (_, i) => `k${String(i).padStart(15, '0')}`);
const stream = new KeyStream(parseWorkload('zipf:1.0'), K, 7);
const STREAM = 1 << 18;
const keys = Array.from({ length: STREAM }, () => names[stream.next()]);
let seed;
const random = () => {
  seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
};
const scale = QUICK ? 0.25 : 1;
const OPTIONS = args.options ?? {};
const ONLY = args.only === undefined ? null : args.only.split(',');
const ROUNDS = args.rounds;
/** One configuration: `topics` topics of `n` partitions, `warm` then `measured` messages per topic. */
function run(label, topics, n, warm, measured, options = {}) {
  warm = Math.round(warm * scale);
  measured = Math.round(measured * scale);
  const p = new DynamicPartitioner({ ...OPTIONS, ...options });
  seed = 0x2545f491;
  const names = Array.from({ length: topics }, (_, i) => `topic-${i}`);
  const order = new Uint16Array(STREAM);
  for (let i = 0; i < STREAM; i++) order[i] = Math.floor(random() * topics);
  const total = topics * (warm + measured);
  const counts = Array.from({ length: topics }, () => new Float64Array(n));
  const seen = new Float64Array(topics);
  const perChunk = [];
  let j = 0;
  const CHUNK = 4096;
  const out = new Int32Array(CHUNK);
  for (let done = 0; done < total; done += CHUNK) {
    const size = Math.min(CHUNK, total - done);
    const from = j;
    const start = process.hrtime.bigint();
    for (let i = 0; i < size; i++, j++) out[i] = p.partition(names[order[j & (STREAM - 1)]], keys[j & (STREAM - 1)], n);
    const spent = Number(process.hrtime.bigint() - start);
    for (let i = 0; i < size; i++) {
      const topic = order[(from + i) & (STREAM - 1)];
      if (++seen[topic] > warm) counts[topic][out[i]]++;
    }
    if (done >= total / 4 && size === CHUNK) perChunk.push(spent / size);
  }
  const s = p.stats();
  const imbalances = [];
  let measuredMessages = 0;
  for (let t = 0; t < topics; t++) {
    if (s.topics[names[t]] === undefined) continue; // without state: Kafka's placement
    let sum = 0;
    let max = 0;
    for (const c of counts[t]) { sum += c; if (c > max) max = c; }
    if (sum > 0) { imbalances.push((max * n) / sum); measuredMessages += sum; }
  }
  const W = measuredMessages / Math.max(1, imbalances.length);
  return {
    label, topics, partitions: n,
    // The median of the per-chunk costs: the chunks least disturbed by the machine's neighbours weigh as much as the rest.
    nsPerDecision: median(perChunk),
    imbalanceMean: imbalances.reduce((a, b) => a + b, 0) / Math.max(1, imbalances.length),
    imbalanceWorst: Math.max(...imbalances),
    noise: 1 + 2.5 * Math.sqrt(n / W),
    measuredPerTopic: Math.round(W),
    topicsWithState: Object.keys(s.topics).length,
    topicsWithoutState: s.topicsWithoutState,
    evictions: s.evictions,
    trackedKeysCapacity: s.trackedKeys.capacity,
    memoryBytes: s.memoryBytes,
    memoryBoundBytes: s.memoryBoundBytes,
  };
}

const cases = [
  ['1 topic, 48 partitions', 1, 48, 100_000, 1_000_000],
  ['16 topics', 16, 48, 40_000, 150_000],
  ['64 topics', 64, 48, 40_000, 150_000],
  ['256 topics', 256, 48, 10_000, 20_000],
  ['1000 topics', 1000, 48, 5_000, 10_000],
  ['12 partitions', 1, 12, 100_000, 1_000_000],
  ['256 partitions', 1, 256, 100_000, 1_000_000],
  ['1024 partitions', 1, 1024, 200_000, 1_000_000],
  // The tracked-key table and the sketch, shared by the topics, grow with them (x4 at 64 topics
  // with the defaults); here they start four times larger (x16 at 64 topics).
  ['64 topics, shared x4', 64, 48, 40_000, 150_000, { maxTrackedKeys: 4096, sketch: { width: 65536 } }],
];
// The first row is the reference of the cost ratios: always run. --only=INDEXES picks the others (1..8).
const chosen = cases.filter((_, i) => i === 0 || !ONLY || ONLY.includes(String(i)));
const rows = chosen.map((c) => run(...c));
for (let round = 1; round < ROUNDS; round++) {
  chosen.forEach((c, i) => { rows[i].nsPerDecision = Math.min(rows[i].nsPerDecision, run(...c).nsPerDecision); });
}
const base = rows[0].nsPerDecision;
for (const r of rows) r.costRatio = r.nsPerDecision / base;
if (args.json) {
  console.log(JSON.stringify(rows, null, 2));
} else {
  const pad = (x, w) => String(x).padStart(w);
  console.log(`${'case'.padEnd(24)}${pad('ns/decision', 12)}${pad('x 1-topic', 10)}${pad('imbalance', 10)}${pad('worst', 8)}${pad('noise', 8)}${pad('W/topic', 9)}${pad('state', 7)}${pad('without', 8)}${pad('evicted', 8)}${pad('tracked', 8)}${pad('memory', 11)}${pad('bound', 11)}`);
  for (const r of rows) {
    console.log(`${r.label.padEnd(24)}${pad(r.nsPerDecision.toFixed(0), 12)}${pad(r.costRatio.toFixed(2), 10)}${pad(r.imbalanceMean.toFixed(3), 10)}${pad(r.imbalanceWorst.toFixed(3), 8)}${pad(r.noise.toFixed(3), 8)}${pad(r.measuredPerTopic, 9)}${pad(r.topicsWithState, 7)}${pad(r.topicsWithoutState, 8)}${pad(r.evictions, 8)}${pad(r.trackedKeysCapacity, 8)}${pad(r.memoryBytes, 11)}${pad(r.memoryBoundBytes, 11)}`);
  }
  console.log(`ns/decision: the best of ${ROUNDS} interleaved rounds; tracked: the table of tracked keys' size; memory and bound: bytes (stats().memoryBytes, memoryBoundBytes)`);
}
