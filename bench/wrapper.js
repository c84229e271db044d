'use strict';
// npm run bench:wrapper — what a consumer wrapper adds per message to its client's stream,
// without Kafka: a stand-in of @platformatic/kafka's consumer whose stream emits --messages
// pre-made messages (12 partitions, every fourth on one hot key, no order headers, offsets as
// bigints, as that client gives them) in batches of 500 a turn of the event loop, read by a bare
// 'data' listener (the stream's own cost) and through wrapPlatformaticConsumer with a no-op
// handler (timed to the last handler call). Rounds interleave the rows; the figures are medians
// of ns per message, and the wrapper's cost is its row less the bare listener's.
//
// --against=DIR measures another built checkout of the package beside this one (e.g. a worktree
// of the commit before a change), in the same process and rounds.
//
// --help lists the flags.

const { EventEmitter } = require('node:events');
const path = require('node:path');
const { flags, median } = require('./common');

const args = flags(__filename, {
  messages: { type: 'number', integer: true, min: 1000, default: 1_000_000, help: 'messages per round and row' },
  rounds: { type: 'number', integer: true, min: 1, default: 7, help: 'rounds, the rows interleaved' },
  against: { type: 'string', arg: 'DIR', help: 'another checkout of the package, built: its wrapper measured in the same rounds' },
}, { usage: 'npm run bench:wrapper --' });

const N = args.messages;
const PARTITIONS = 12;
const BATCH = 500;

/** The messages, made once: @platformatic/kafka's shape (the fields the wrapper reads, and a few it passes on). */
function messages() {
  let seed = 7;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const keys = Array.from({ length: 4096 }, (_, i) => Buffer.from(i % 4 === 0 ? 'hot-tenant' : `key-${Math.floor(20000 * random() ** 3)}`));
  const value = Buffer.alloc(100, 46);
  const next = new Array(PARTITIONS).fill(0);
  return Array.from({ length: N }, (_, i) => {
    const partition = i % PARTITIONS;
    return { topic: 't', partition, offset: BigInt(next[partition]++), timestamp: 0n, key: keys[i & 4095], value, headers: new Map(), headerEntries: [], metadata: {} };
  });
}

/** A stand-in of @platformatic/kafka's Consumer: its assignment, commits that resolve, and a stream that emits only when driven. */
function standIn() {
  const consumer = new EventEmitter();
  consumer.assignments = [{ topic: 't', partitions: [...Array(PARTITIONS).keys()] }];
  consumer.commit = async () => {};
  consumer.listCommittedOffsets = async () => new Map();
  consumer.consume = async () => {
    const stream = new EventEmitter();
    stream.paused = false;
    stream.pause = () => {
      stream.paused = true;
    };
    stream.resume = () => {
      stream.paused = false;
    };
    stream.close = async () => {};
    consumer.stream = stream;
    return stream;
  };
  return consumer;
}

/** Emits every message on `stream`, BATCH a turn of the event loop, waiting while it is paused. */
function drive(stream, all) {
  let i = 0;
  return new Promise((resolve) => {
    const step = () => {
      if (stream.paused) return setImmediate(step);
      const end = Math.min(N, i + BATCH);
      for (; i < end; i++) stream.emit('data', all[i]);
      if (i < N) setImmediate(step);
      else resolve();
    };
    step();
  });
}

async function bare(all) {
  const consumer = standIn();
  const stream = await consumer.consume({});
  let read = 0;
  stream.on('data', () => {
    read++;
  });
  const began = process.hrtime.bigint();
  await drive(stream, all);
  const ns = Number(process.hrtime.bigint() - began) / N;
  if (read !== N) throw new Error(`bench/wrapper.js: ${read} messages read of ${N}`);
  return ns;
}

async function wrapped(all, wrapPlatformaticConsumer) {
  const consumer = standIn();
  const wrapper = wrapPlatformaticConsumer(consumer);
  let calls = 0;
  await wrapper.run({ topics: ['t'], handler: () => {
    calls++;
  } });
  const began = process.hrtime.bigint();
  await drive(consumer.stream, all);
  while (calls < N) await new Promise((resolve) => setImmediate(resolve));
  const ns = Number(process.hrtime.bigint() - began) / N;
  await wrapper.stop();
  if (calls !== N) throw new Error(`bench/wrapper.js: ${calls} handler calls for ${N} messages`);
  return ns;
}

async function main() {
  const all = messages();
  const rows = [['bare stream listener', (m) => bare(m)], ['wrapPlatformaticConsumer (this checkout)', (m) => wrapped(m, require('..').wrapPlatformaticConsumer)]];
  if (args.against !== undefined) {
    const other = require(path.resolve(args.against)).wrapPlatformaticConsumer;
    rows.push([`wrapPlatformaticConsumer (${args.against})`, (m) => wrapped(m, other)]);
  }
  const times = rows.map(() => []);
  for (let round = 0; round < args.rounds; round++) {
    for (const [i, [, run]] of rows.entries()) times[i].push(await run(all));
  }
  const base = median(times[0]);
  console.log(`${N.toLocaleString('en-US')} messages, ${PARTITIONS} partitions, batches of ${BATCH}; medians of ${args.rounds} rounds; Node ${process.versions.node}`);
  console.log('| row | ns per message | the wrapper\'s own |');
  console.log('|---|---|---|');
  for (const [i, [name]] of rows.entries()) {
    const ns = median(times[i]);
    console.log(`| ${name} | ${ns.toFixed(0)} | ${i === 0 ? '—' : (ns - base).toFixed(0)} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
