'use strict';
// Micro-benchmark (benchmark.js) of Resequencer.push(), ns per message, for
//   cold            unmarked messages (no order header: Zipf keys on their hashed partition),
//                   partitions interleaved round-robin
//   spread ordered  marked messages of hot keys spread over every partition by three
//                   producers (anchor, then spread messages naming their predecessor), pushed
//                   in the order they were produced: each one's predecessor is already out
//   spread shuffled the same messages, each partition in offset order but the partitions
//                   interleaved at random (runs of 1..32 messages): many wait for a
//                   predecessor on another partition and go when it comes
// beside the peer
//   Map set+get     per message one Map.set and one Map.get of its key in a fresh Map: the
//                   least any per-key reorder buffer does
// printed as a ratio (push ns / Map ns). Headers are Buffers, as node-rdkafka hands them over.
//
// Each timed call feeds one batch of BATCH messages to a fresh Resequencer (the figure is per
// message); the messages are built, and checked to come out once each, in order, none flagged
// and none left held, before timing. Several rounds, the measurements interleaved, the lowest
// mean kept (as bench/hash.js does).
//
// --help lists the flags.

const { flags } = require('./common');

const args = flags(__filename, {
  json: { type: 'boolean', help: 'print the figures as JSON (progress goes to stderr either way)' },
  'max-time': { type: 'number', arg: 'SECONDS', min: 0.001, default: 0.2, help: 'benchmark.js maxTime per measurement and round' },
  rounds: { type: 'number', integer: true, min: 1, default: 3, help: 'rounds, the measurements interleaved' },
});

const os = require('node:os');
const path = require('node:path');
const Benchmark = require('benchmark');

const { Resequencer, encodeOrderHeader, ORDER_HEADER, ORDER_ANCHOR, ORDER_SPREAD } = require(path.join(__dirname, '..'));
const { prng } = require('../build/tools/workload'); // mulberry32: every run feeds the same messages

const PARTITIONS = 6;
const BATCH = 4096;
const TOPIC = 'bench';
const PRODUCERS = ['00000000000000a0', '00000000000000a1', '00000000000000a2'];
const HOT_KEYS = ['hot-a', 'hot-b', 'hot-c', 'hot-d'];

/** Assigns offsets in partition order; returns the messages of each partition. */
function place(produced) {
  const lists = Array.from({ length: PARTITIONS }, () => []);
  for (const m of produced) {
    m.offset = lists[m.partition].length;
    m.size = m.value.length;
    lists[m.partition].push(m);
  }
  return lists;
}

function roundRobin(lists) {
  const out = [];
  for (let i = 0; out.length < BATCH; i++) for (const list of lists) if (i < list.length) out.push(list[i]);
  return out;
}

/** BATCH unmarked messages of Zipf(1.0) keys over 10,000 keys, each on a partition by its rank (cold keys stay put). */
function coldBatch() {
  const rand = prng(0xc01d);
  const cdf = [];
  let sum = 0;
  for (let r = 1; r <= 10000; r++) cdf.push((sum += 1 / r));
  const produced = [];
  for (let i = 0; i < BATCH; i++) {
    const u = rand() * sum;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    produced.push({ topic: TOPIC, partition: lo % PARTITIONS, key: Buffer.from(`k${lo}`), value: Buffer.from(`cold-${i}`) });
  }
  return roundRobin(place(produced));
}

/**
 * BATCH marked messages: three producers in turn, each sending the hot keys, an anchor on the
 * key's own partition first, then spread messages on random partitions, each naming its
 * producer's previous message of that key. Returns { produced (in production order), lists }.
 */
function spreadMessages() {
  const rand = prng(0x5b7e);
  const sequence = PRODUCERS.map(() => 0);
  const previous = PRODUCERS.map(() => new Map()); // key -> { sequence, partition }
  const produced = [];
  for (let i = 0; i < BATCH; i++) {
    const p = i % PRODUCERS.length;
    const k = Math.floor(rand() * HOT_KEYS.length);
    const key = HOT_KEYS[k];
    const before = previous[p].get(key);
    const seq = ++sequence[p];
    const partition = before ? Math.floor(rand() * PARTITIONS) : k % PARTITIONS;
    const header = before
      ? encodeOrderHeader(ORDER_SPREAD, PRODUCERS[p], seq, before.sequence, PARTITIONS, PARTITIONS, 0, before.partition)
      : encodeOrderHeader(ORDER_ANCHOR, PRODUCERS[p], seq, 0, 1, PARTITIONS, 0);
    previous[p].set(key, { sequence: seq, partition });
    produced.push({ topic: TOPIC, partition, key: Buffer.from(key), value: Buffer.from(`${p}:${key}:${seq}`), headers: [{ [ORDER_HEADER]: Buffer.from(header) }] });
  }
  return { produced, lists: place(produced) };
}

/** Each partition in offset order, the partitions interleaved in random runs of 1..32. */
function shuffled(lists) {
  const rand = prng(0x5f1e);
  const at = lists.map(() => 0);
  const out = [];
  while (out.length < BATCH) {
    const open = [];
    for (let p = 0; p < lists.length; p++) if (at[p] < lists[p].length) open.push(p);
    const p = open[Math.floor(rand() * open.length)];
    const run = 1 + Math.floor(rand() * 32);
    for (let j = 0; j < run && at[p] < lists[p].length; j++) out.push(lists[p][at[p]++]);
  }
  return out;
}

/**
 * Feeds `batch` to a fresh Resequencer and checks that every message comes out once, none
 * flagged, none held at the end, and each producer's messages of each key in production order
 * (from the values, not the headers). Returns the peak held count.
 */
function verify(name, batch) {
  const r = new Resequencer();
  const out = new Set();
  const last = new Map();
  let peak = 0;
  for (const m of batch) {
    for (const rel of r.push(m)) {
      if (out.has(rel.message)) throw new Error(`bench/resequencer.js: ${name}: a message released twice`);
      if (rel.outOfOrder) throw new Error(`bench/resequencer.js: ${name}: a message flagged out of order (${rel.reason})`);
      out.add(rel.message);
      const [p, key, seq] = rel.message.value.toString().split(':');
      if (seq !== undefined) {
        const chain = `${p}:${key}`;
        if (Number(seq) <= (last.get(chain) ?? 0)) throw new Error(`bench/resequencer.js: ${name}: ${chain} #${seq} after #${last.get(chain)}`);
        last.set(chain, Number(seq));
      }
    }
    peak = Math.max(peak, r.held);
  }
  if (out.size !== batch.length || r.held !== 0) throw new Error(`bench/resequencer.js: ${name}: ${out.size} of ${batch.length} released, ${r.held} held`);
  return peak;
}

const CASES = ['cold', 'spreadOrdered', 'spreadShuffled'];
const LABELS = { cold: 'cold (unmarked)', spreadOrdered: 'spread, produce order', spreadShuffled: 'spread, shuffled partitions' };

function main() {
  const opts = { json: args.json, maxTime: args['max-time'], rounds: args.rounds };
  const log = (msg) => process.stderr.write(`${msg}\n`);
  Benchmark.support.decompilation = false;
  const started = process.hrtime.bigint();

  const spread = spreadMessages();
  const batches = { cold: coldBatch(), spreadOrdered: spread.produced, spreadShuffled: shuffled(spread.lists) };
  const peaks = {};
  for (const name of CASES) peaks[name] = verify(name, batches[name]);

  let sink = 0;
  const push = (batch) => () => {
    const r = new Resequencer();
    for (let i = 0; i < batch.length; i++) sink += r.push(batch[i]).length;
  };
  const mapOf = (batch) => {
    const keys = batch.map((m) => m.key.toString('latin1'));
    return () => {
      const map = new Map();
      for (let i = 0; i < keys.length; i++) {
        map.set(keys[i], batch[i]);
        if (map.get(keys[i]) === batch[i]) sink++;
      }
    };
  };
  const tests = {};
  for (const name of CASES) {
    tests[name] = push(batches[name]);
    tests[`${name}Map`] = mapOf(batches[name]);
  }
  const columns = Object.keys(tests);
  const ns = {};
  const rme = {};
  for (let round = 0; round < opts.rounds; round++) {
    const suite = new Benchmark.Suite(`round ${round + 1}`);
    for (let c = 0; c < columns.length; c++) {
      const name = columns[(c + round) % columns.length];
      suite.add(name, tests[name], { maxTime: opts.maxTime, minSamples: 5 });
    }
    suite.on('cycle', (event) => {
      const bench = event.target;
      if (bench.error) throw bench.error;
      const per = (bench.stats.mean * 1e9) / BATCH;
      if (!(per >= ns[bench.name])) {
        ns[bench.name] = per;
        rme[bench.name] = bench.stats.rme;
      }
      log(`  round ${round + 1}: ${bench.name} ${per.toFixed(1)} ns/message ±${bench.stats.rme.toFixed(1)}%`);
    });
    suite.run({ async: false });
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const rows = CASES.map((name) => ({
    case: name,
    pushNs: ns[name],
    mapNs: ns[`${name}Map`],
    ratio: ns[name] / ns[`${name}Map`],
    rme: rme[name],
    peakHeld: peaks[name],
  }));
  const cpus = os.cpus();
  const environment = {
    node: process.version, v8: process.versions.v8, cpu: cpus.length ? cpus[0].model : 'unknown', cpus: cpus.length,
    partitions: PARTITIONS, batch: BATCH, producers: PRODUCERS.length, hotKeys: HOT_KEYS.length, maxTime: opts.maxTime, rounds: opts.rounds, seconds,
  };
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ environment, unit: 'ns per message: the lowest benchmark.js mean over the rounds / batch', rows, sink }, null, 2)}\n`);
    return;
  }
  console.log('');
  console.log(`Node ${environment.node} (V8 ${environment.v8}), ${environment.cpu}; ${PARTITIONS} partitions, ` +
    `batches of ${BATCH} messages (spread: ${PRODUCERS.length} producers x ${HOT_KEYS.length} hot keys); ${seconds.toFixed(0)} s`);
  console.log('ns per message: lowest benchmark.js mean of the rounds. ratio = push ns / Map set+get ns on the same messages.');
  console.log('');
  const header = ['messages', 'push() ns', 'Map set+get ns', 'ratio', 'peak held'];
  const body = rows.map((r) => [LABELS[r.case], r.pushNs.toFixed(1), r.mapNs.toFixed(1), `${r.ratio.toFixed(1)}x`, String(r.peakHeld)]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const line = (cells) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ');
  console.log([line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n'));
  if (sink === -1) console.log(''); // the results are consumed
}

main();
