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
// --help lists the flags.

const { fork } = require('node:child_process');
const path = require('node:path');
const { flags, median } = require('./common');

const args = flags(__filename, {
  rounds: { type: 'number', integer: true, min: 1, default: 15, help: 'rounds, the four calls interleaved' },
  messages: { type: 'number', integer: true, min: 1, default: 200000, help: 'calls per round' },
  against: {
    type: 'string', arg: 'DIR',
    help: "another checkout of the package, built (e.g. a worktree of the commit before a change). This checkout and DIR each run in a process of their own, round by round in turn (the same keys, the same moments of the machine's other work); the table gives both and, per call, the median over rounds of this one's time over DIR's",
  },
  serve: { type: 'boolean', internal: true, help: 'run the calls the parent process asks for (with --against, each side is this script with --serve --root)' },
  root: { type: 'string', arg: 'DIR', internal: true, defaultText: 'this checkout', help: 'the package whose calls are measured' },
}, { usage: 'npm run bench:facade --' });

const M = args.messages;
const ROUNDS = args.rounds;
const ROOT = path.resolve(args.root ?? path.join(__dirname, '..'));
const CALLS = ['partitionForKey', 'decide()', "produce(), orderHeaders 'none'", 'produce(), order headers'];

/** The four calls of the package at ROOT, each a function running M of them. */
async function calls() {
  const { DynamicProducer, DynamicPartitioner, partitionForKey } = require(ROOT);
  // The keys from this checkout's workload, whichever package is measured: both sides get the same.
  const { KeyStream, parseWorkload } = require('../build/tools/workload');
  const VALUE = Buffer.alloc(100, 'v');
  const stream = new KeyStream(parseWorkload('zipf:1.0'), 10000, 11);
  const names = Array.from({ length: 10000 }, (_, i) => `customer-${i}`);
  const KEYS = Array.from({ length: M }, () => names[stream.next()]);
  /** A connected DynamicProducer (mock cluster) whose native produce() is a no-op from now on. */
  const producer = async (orderHeaders) => {
    const p = new DynamicProducer({ 'test.mock.num.brokers': 1, 'log_level': 3, dr_cb: false }, {}, { orderHeaders });
    await p.connect(10000, { topics: ['bench'] });
    // The binding DynamicProducer produces through (src/producer/hand-over/hand-over.ts): replaced, nothing is sent.
    p.handOver.native = { produce: () => 0 };
    return p;
  };
  const spread = await producer('spread');
  const none = await producer('none');
  const partitioner = new DynamicPartitioner();
  const runs = {
    [CALLS[0]]: () => { let x = 0; for (let i = 0; i < M; i++) x += partitionForKey(KEYS[i], 4); return x; },
    [CALLS[1]]: () => { let x = 0; for (let i = 0; i < M; i++) x += partitioner.decide('bench', KEYS[i], 4); return x; },
    [CALLS[2]]: () => { for (let i = 0; i < M; i++) none.produce('bench', VALUE, KEYS[i]); },
    [CALLS[3]]: () => { for (let i = 0; i < M; i++) spread.produce('bench', VALUE, KEYS[i]); },
  };
  return { runs, close: () => Promise.all([spread.disconnect(), none.disconnect()]) };
}

/** CPU ns per call of one run of M calls. */
function measure(run) {
  const c0 = process.cpuUsage();
  run();
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) * 1000) / M;
}

/** --serve: runs the calls its parent asks for, one message per run, and answers with the ns. */
async function serve() {
  const { runs, close } = await calls();
  process.on('message', async (name) => {
    if (name === null) {
      await close();
      process.exit(0);
    }
    process.send(measure(runs[name]));
  });
  process.send('ready');
}

/** A child process serving the package at `root`: run(name) answers with the ns of one run. */
function child(root) {
  const c = fork(__filename, ['--serve', `--root=${root}`, `--messages=${M}`]);
  let waiting;
  c.on('message', (answer) => waiting.resolve(answer));
  const exited = new Promise((resolve) => {
    c.on('exit', (code) => {
      waiting?.reject(new Error(`bench/facade.js: the process measuring ${root} exited (${code})`));
      resolve();
    });
  });
  const next = () => new Promise((resolve, reject) => {
    waiting = { resolve, reject };
  });
  const ready = next();
  return {
    ready,
    run: (name) => {
      const answer = next();
      c.send(name);
      return answer;
    },
    close: () => {
      waiting = undefined;
      c.send(null);
      return exited;
    },
  };
}

async function main() {
  let sides;
  let close;
  if (args.against) {
    const other = path.resolve(args.against);
    sides = [child(ROOT), child(other)];
    await Promise.all(sides.map((s) => s.ready));
    close = () => Promise.all(sides.map((s) => s.close()));
  } else {
    const own = await calls();
    sides = [{ run: async (name) => measure(own.runs[name]) }];
    close = own.close;
  }
  const ns = sides.map(() => Object.fromEntries(CALLS.map((k) => [k, []])));
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of CALLS) {
      // Each round in the other order: neither side always runs right after the other.
      const order = r % 2 === 0 ? sides.keys() : [...sides.keys()].reverse();
      for (const s of order) ns[s][name].push(await sides[s].run(name));
    }
  }
  console.log(`${M} calls per round, ${ROUNDS} rounds, Zipf 1.0 keys over 10k, 4 partitions; CPU ns per call (median), and its ratio to partitionForKey in the same round`);
  if (args.against) {
    console.log(`${''.padEnd(32)} ${'this checkout'.padEnd(17)}   ${path.basename(path.resolve(args.against)).padEnd(17)}   this / that (median of the rounds' ratios)`);
  }
  for (const name of CALLS) {
    const row = ns.map((side) => {
      const ratio = median(side[name].map((x, i) => x / side.partitionForKey[i]));
      return `${median(side[name]).toFixed(0).padStart(5)} ns   ${ratio.toFixed(2)}×`;
    });
    if (args.against) row.push(`${median(ns[0][name].map((x, i) => x / ns[1][name][i])).toFixed(3)}`);
    console.log(`${name.padEnd(32)} ${row.join('   ')}`);
  }
  await close();
}

if (args.serve) {
  serve().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().then(() => process.exit(0), (err) => {
    console.error(err);
    process.exit(1);
  });
}
