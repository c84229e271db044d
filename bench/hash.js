'use strict';
// npm run bench: micro-benchmarks (benchmark.js) of Kafka's murmur2 partitioning.
//
// For keys of 16, 36 and 256 bytes, as ASCII strings and as Buffers, measures ns per key of
//   ours single   partitionForKey(key, 48)                    (murmur2_random, the default)
//   ours batch    partitionForKeys(keys, 48) over 1024 keys    (reported per key)
//   ours murmur2  murmur2(key)
//   KafkaJS       (murmur2(key) & 0x7fffffff) % 48 with KafkaJS's murmur2, the hash of its
//                 DefaultPartitioner (kafkajs/src/producer/partitioners/default/murmur2.js)
//   floor         the same partition with a tight pure-JS murmur2 (bench/peers.js), reading
//                 string char codes or Buffer bytes directly. For strings the floor is
//                 ASCII-only (it hashes UTF-16 units as bytes); every string key here is ASCII.
// All of ours, KafkaJS and the floor are checked to agree on every input before timing.
//
// Each (size, kind) row runs in its own child process so that the JIT sees one key type
// per row (as a producer that always sends string keys or always Buffer keys does) and one
// row's type feedback does not slow down the next. Pass --same-process to run all rows in
// this process instead (then call sites see both strings and Buffers).
//
// Each row takes several rounds of its five measurements, interleaved, and reports for each
// measurement the round with the lowest benchmark.js mean (see runRow).
//
// --help lists the flags.

const { flags } = require('./common');

const FLAGS = {
  json: { type: 'boolean', help: 'print the figures as JSON on stdout, progress on stderr' },
  'max-time': { type: 'number', arg: 'SECONDS', min: 0.001, default: 0.25, help: 'benchmark.js maxTime per measurement and round' },
  rounds: { type: 'number', integer: true, min: 1, default: 4, help: 'rounds of each row' },
  'same-process': { type: 'boolean', help: 'run every row in this process (call sites then see both strings and Buffers)' },
  child: {
    type: 'string', arg: 'SIZE:KIND', internal: true, help: 'run this one row (e.g. 16:string) and print its figures as JSON',
    parse: (text) => ({ size: Number(text.split(':')[0]), kind: text.split(':')[1] }),
  },
};
const args = flags(__filename, FLAGS);

const { spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const { prng } = require('../build/tools/workload'); // mulberry32: every run hashes the same keys

const SIZES = [16, 36, 256];
const KINDS = ['string', 'Buffer'];
const PARTITIONS = 48;
const KEY_COUNT = 1024; // distinct keys per row; a power of two for the rotating index
const MASK = KEY_COUNT - 1;

// Targets of the final line, for partitionForKey on 16- and 36-byte string keys.
const FLOOR_SIZES = [16, 36];
const MIN_SPEEDUP_VS_KAFKAJS = 20;
const MAX_RATIO_TO_FLOOR = 1.5;

const COLUMNS = ['oursSingle', 'oursBatch', 'oursMurmur2', 'kafkajs', 'floor'];

/** The run's settings: `child`, the row to run in this process (--child), or null. */
function options() {
  return { json: args.json, sameProcess: args['same-process'], maxTime: args['max-time'], rounds: args.rounds, child: args.child ?? null };
}

// ---------------------------------------------------------------------------------------
// Inputs


const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const HEX = '0123456789abcdef';

/**
 * KEY_COUNT distinct ASCII strings of `size` characters (36: UUID-shaped). Each is made by
 * String.fromCharCode over its codes, so it is a flat (sequential) string, as a key read
 * from the network or from JSON is, rather than a rope left by concatenation.
 */
function makeStrings(size) {
  const random = prng(0x5eed0000 + size);
  const pick = (alphabet) => alphabet.charCodeAt(Math.floor(random() * alphabet.length));
  const seen = new Set();
  while (seen.size < KEY_COUNT) {
    const codes = [];
    for (let i = 0; i < size; i++) {
      if (size === 36) codes.push(i === 8 || i === 13 || i === 18 || i === 23 ? 0x2d : pick(HEX));
      else if (size > 36) codes.push(0x20 + Math.floor(random() * 95)); // printable ASCII
      else codes.push(pick(ALNUM));
    }
    seen.add(String.fromCharCode(...codes));
  }
  return [...seen];
}

function makeKeys(size, kind) {
  const strings = makeStrings(size);
  for (const s of strings) {
    if (s.length !== size || !/^[\x00-\x7f]*$/.test(s)) throw new Error('bench key is not ASCII of the intended size');
  }
  // Separate Buffers, allocated the way an application's Buffer.from would allocate them.
  return kind === 'string' ? strings : strings.map((s) => Buffer.from(s, 'utf8'));
}

// ---------------------------------------------------------------------------------------
// Verification

function check(condition, message) {
  if (!condition) throw new Error(`bench/hash.js: disagreement: ${message}`);
}

function verify(lib, peers, keys, kind) {
  const floorHash = kind === 'string' ? peers.floorMurmur2Ascii : peers.floorMurmur2Bytes;
  const floorPartition = kind === 'string' ? peers.floorPartitionAscii : peers.floorPartitionBytes;
  const show = (key) => JSON.stringify(typeof key === 'string' ? key : key.toString('latin1'));

  // Kafka's own test vectors first, so agreement below is agreement with Java.
  for (const [s, expected] of peers.JAVA_VECTORS) {
    const key = kind === 'string' ? s : Buffer.from(s, 'utf8');
    check(lib.murmur2(key) === expected, `ours murmur2(${show(key)}) = ${lib.murmur2(key)}, Java ${expected}`);
    check(peers.kafkajsMurmur2(key) === expected, `KafkaJS murmur2(${show(key)}) != Java ${expected}`);
    check(floorHash(key) === expected, `floor murmur2(${show(key)}) != Java ${expected}`);
  }

  const batch = lib.partitionForKeys(keys, PARTITIONS);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const ours = lib.murmur2(key);
    const theirs = peers.kafkajsMurmur2(key);
    const floor = floorHash(key);
    check(ours === theirs && ours === floor, `murmur2(${show(key)}): ours ${ours}, KafkaJS ${theirs}, floor ${floor}`);
    const single = lib.partitionForKey(key, PARTITIONS);
    const kafkajs = peers.kafkajsPartition(key, PARTITIONS);
    const floorP = floorPartition(key, PARTITIONS);
    check(
      single === kafkajs && single === floorP && single === batch[i],
      `partition(${show(key)}, ${PARTITIONS}): ours single ${single}, ours batch ${batch[i]}, KafkaJS ${kafkajs}, floor ${floorP}`,
    );
  }
}

// ---------------------------------------------------------------------------------------
// Measurement of one row

function runRow(size, kind, opts, log) {
  const Benchmark = require('benchmark');
  // Call the test functions rather than decompiling their source into the timing loop:
  // they are closures over the inputs and the sink.
  Benchmark.support.decompilation = false;

  const lib = require(path.join(__dirname, '..'));
  const peers = require('./peers');
  const { partitionForKey, partitionForKeys, murmur2 } = lib;
  const { kafkajsMurmur2 } = peers;
  const floorHash = kind === 'string' ? peers.floorMurmur2Ascii : peers.floorMurmur2Bytes;

  const keys = makeKeys(size, kind);
  verify(lib, peers, keys, kind);

  let i = 0;
  let sink = 0;
  const tests = {
    oursSingle() {
      sink = (sink + partitionForKey(keys[i], PARTITIONS)) | 0;
      i = (i + 1) & MASK;
    },
    oursBatch() {
      const out = partitionForKeys(keys, PARTITIONS);
      sink = (sink + out[i]) | 0;
      i = (i + 1) & MASK;
    },
    oursMurmur2() {
      sink = (sink + murmur2(keys[i])) | 0;
      i = (i + 1) & MASK;
    },
    kafkajs() {
      sink = (sink + ((kafkajsMurmur2(keys[i]) & 0x7fffffff) % PARTITIONS)) | 0;
      i = (i + 1) & MASK;
    },
    floor() {
      sink = (sink + ((floorHash(keys[i]) & 0x7fffffff) % PARTITIONS)) | 0;
      i = (i + 1) & MASK;
    },
  };
  const perCall = { oursBatch: KEY_COUNT }; // keys per call of the test function

  // Several rounds, the five measurements interleaved (in a rotated order) within each, and
  // for each measurement the round with the lowest mean kept: on a shared or virtualised
  // machine, load from elsewhere comes and goes over seconds, and this keeps one slow spell
  // from landing on one column only.
  const row = { size, kind, ns: {}, rme: {}, samples: {}, rounds: {} };
  for (const name of COLUMNS) row.rounds[name] = [];
  for (let round = 0; round < opts.rounds; round++) {
    const suite = new Benchmark.Suite(`${size} B ${kind} round ${round + 1}`);
    for (let c = 0; c < COLUMNS.length; c++) {
      const name = COLUMNS[(c + round) % COLUMNS.length];
      suite.add(name, tests[name], { maxTime: opts.maxTime, minSamples: 5, initCount: 100 });
    }
    suite.on('cycle', (event) => {
      const bench = event.target;
      if (bench.error) throw bench.error;
      const name = bench.name;
      const ns = (bench.stats.mean * 1e9) / (perCall[name] || 1);
      row.rounds[name].push(ns);
      if (!(ns >= row.ns[name])) {
        row.ns[name] = ns;
        row.rme[name] = bench.stats.rme;
        row.samples[name] = bench.stats.sample.length;
      }
      log(`  ${size} B ${kind} round ${round + 1}: ${name} ${ns.toFixed(2)} ns/key ±${bench.stats.rme.toFixed(1)}%`);
    });
    suite.run({ async: false });
  }
  row.sink = sink; // consumed, so none of the results is dead code
  row.speedupVsKafkajs = row.ns.kafkajs / row.ns.oursSingle;
  row.ratioToFloor = row.ns.oursSingle / row.ns.floor;
  return row;
}

// ---------------------------------------------------------------------------------------
// Driver

function runChild(size, kind, opts, log) {
  const argv = [__filename, `--child=${size}:${kind}`, `--max-time=${opts.maxTime}`, `--rounds=${opts.rounds}`];
  const result = spawnSync(process.execPath, [...process.execArgv, ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`bench/hash.js: the ${size} B ${kind} row failed (exit ${result.status})`);
  const lines = result.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

function fmt(x, digits) {
  return x.toFixed(digits);
}

function table(rows) {
  const header = [
    'key',
    'ours single ns',
    'ours batch ns/key',
    'ours murmur2 ns',
    'KafkaJS ns',
    'pure-JS floor ns',
    'vs KafkaJS',
    'ours/floor',
  ];
  const body = rows.map((r) => [
    `${r.size} B ${r.kind}`,
    fmt(r.ns.oursSingle, 1),
    fmt(r.ns.oursBatch, 1),
    fmt(r.ns.oursMurmur2, 1),
    fmt(r.ns.kafkajs, 1),
    fmt(r.ns.floor, 1),
    `${fmt(r.speedupVsKafkajs, 1)}x`,
    `${fmt(r.ratioToFloor, 2)}x`,
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((b) => b[c].length)));
  const line = (cells) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}

function floors(rows) {
  const targets = rows.filter((r) => r.kind === 'string' && FLOOR_SIZES.includes(r.size));
  const cases = targets.map((r) => ({
    size: r.size,
    speedupVsKafkajs: r.speedupVsKafkajs,
    ratioToFloor: r.ratioToFloor,
    speedupMet: r.speedupVsKafkajs >= MIN_SPEEDUP_VS_KAFKAJS,
    floorMet: r.ratioToFloor <= MAX_RATIO_TO_FLOOR,
  }));
  return { met: cases.length === FLOOR_SIZES.length && cases.every((c) => c.speedupMet && c.floorMet), cases };
}

function floorsLine(result) {
  const detail = result.cases
    .map((c) => `${c.size} B: ${fmt(c.speedupVsKafkajs, 1)}x vs KafkaJS${c.speedupMet ? '' : ' (MISSED)'}, ${fmt(c.ratioToFloor, 2)}x the floor${c.floorMet ? '' : ' (MISSED)'}`)
    .join('; ');
  return (
    `Floors ${result.met ? 'MET' : 'NOT MET'}: partitionForKey on 16- and 36-byte string keys ` +
    `≥ ${MIN_SPEEDUP_VS_KAFKAJS}× faster than KafkaJS's murmur2, and within ${MAX_RATIO_TO_FLOOR}× of the pure-TS hash ` +
    `[${detail}]`
  );
}

function main() {
  const opts = options();
  const log = (msg) => process.stderr.write(`${msg}\n`);

  if (opts.child) {
    const { size, kind } = opts.child;
    if (!SIZES.includes(size) || !KINDS.includes(kind)) throw new Error(`bench/hash.js: bad row ${size}:${kind}`);
    process.stdout.write(`${JSON.stringify(runRow(size, kind, opts, log))}\n`);
    return;
  }

  const started = process.hrtime.bigint();
  log(`bench: ${SIZES.length * KINDS.length} rows x ${COLUMNS.length} measurements x ${opts.rounds} rounds, maxTime ${opts.maxTime}s each` +
    (opts.sameProcess ? ', one process' : ', one process per row'));
  const rows = [];
  for (const size of SIZES) {
    for (const kind of KINDS) {
      rows.push(opts.sameProcess ? runRow(size, kind, opts, log) : runChild(size, kind, opts, log));
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const result = floors(rows);
  const cpus = os.cpus();
  const environment = {
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform} ${process.arch}`,
    cpu: cpus.length ? cpus[0].model : 'unknown',
    cpus: cpus.length,
    isolation: opts.sameProcess ? 'same-process' : 'process-per-row',
    maxTime: opts.maxTime,
    rounds: opts.rounds,
    partitions: PARTITIONS,
    keysPerRow: KEY_COUNT,
    batchSize: KEY_COUNT,
    seconds,
  };

  if (opts.json) {
    const out = {
      environment,
      unit: 'ns per key: the lowest benchmark.js mean over the rounds (rme of that round, in percent); rounds: every round\'s mean',
      rows: rows.map(({ size, kind, ns, rme, samples, rounds, speedupVsKafkajs, ratioToFloor }) => ({
        size, kind, ns, rme, samples, rounds, speedupVsKafkajs, ratioToFloor,
      })),
      floors: {
        ...result,
        minSpeedupVsKafkajs: MIN_SPEEDUP_VS_KAFKAJS,
        maxRatioToFloor: MAX_RATIO_TO_FLOOR,
        line: floorsLine(result),
      },
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }

  console.log('');
  console.log(`Node ${environment.node} (V8 ${environment.v8}), ${environment.platform}, ${environment.cpu}; ` +
    `${PARTITIONS} partitions, ${KEY_COUNT} distinct ASCII keys per row, batch of ${KEY_COUNT}; ` +
    `${environment.isolation}; ${fmt(seconds, 0)} s`);
  console.log(`ns per key: lowest benchmark.js mean of ${opts.rounds} interleaved rounds. vs KafkaJS = KafkaJS ns / ours single ns; ours/floor = ours single ns / floor ns.`);
  console.log('The pure-JS floor reads string char codes as bytes: exact for ASCII strings only.');
  console.log('');
  console.log(table(rows));
  console.log('');
  console.log(floorsLine(result));
}

main();
