'use strict';
// Several DynamicProducers (one service scaled to N replicas) spread the same hot keys into
// one topic; a Resequencer reading the topic must put each producer's messages of each key
// back in that producer's send order, and never wait on a cycle between producers.
//
// On librdkafka's in-process mock cluster (4 partitions): three DynamicProducers with
// different batching (linger.ms 0 / 5 / 50, batch.num.messages 10 / 200 / 10,000) and short,
// different horizons send, interleaved in small chunks, three shared hot keys whose shares
// change by phase (each turns hot, cools and turns hot again, at different times in each
// producer) over Zipf background keys. Each value is `<producer>:<n>`, n the message's number
// among its producer's messages of its key, from 0: the reference order, independent of
// any header.
//
// The topic is read back whole, then fed to a fresh Resequencer under several interleavings
// of its partitions (each partition in offset order, as a consumer reads it): round-robin,
// one partition withheld until the end (each in turn), seeded random, partition by
// partition. For each: every message released exactly once, none flagged outOfOrder, none
// held at the end (without flush()), each producer's messages of each key in send order.
// maxBufferedMessages is above the message count and expire() is never called, so neither
// capacity nor time can release a message: once every message is pushed, every predecessor
// is there, and a message still held waits on a cycle (or behind one).
const t = require('tap');
const { once } = require('node:events');
const { DynamicProducer, Resequencer, decodeOrderHeader } = require('../..');
const { mockProducer, disconnect } = require('../lib/mock-cluster');
const { zipf, sleep, brokersOf, knownPartitions, consumeAll, headerOf, trackHot } = require('../producer/lib/helpers');
const { prng } = require('../lib/random-keys');

const TOPIC = 'many-producers';
const N = 4;
const PER_PRODUCER = 20_000;
const CHUNK = 25; // messages per producer between turns of the event loop
const PHASE = 4000; // messages of one producer per phase of the hot keys' shares
const HOT = ['hot-a', 'hot-b', 'hot-c'];
// Share of each hot key per phase: 0.15-0.25 is far above hotThreshold (0.1 fair shares =
// 2.5% of 4 partitions), 0.003 far below coolThreshold (1.25%): each cools within a phase
// (over five horizons) and turns hot again.
const SHARES = [
  [0.25, 0.25, 0.003, 0.25, 0.25],
  [0.15, 0.003, 0.15, 0.15, 0.003],
  [0.003, 0.15, 0.15, 0.003, 0.15],
];
const PRODUCERS = [
  { config: { 'linger.ms': 0, 'batch.num.messages': 10 }, horizon: 400, offset: 0 },
  { config: { 'linger.ms': 5, 'batch.num.messages': 200 }, horizon: 600, offset: 1300 },
  { config: { 'linger.ms': 50, 'batch.num.messages': 10000 }, horizon: 800, offset: 2600 },
];

/** Producer i's key stream: hot keys by the phase table (shifted by its offset), else Zipf background keys. */
function keyStream(i) {
  const rand = prng(0x3a11 + i);
  const background = zipf(1000, 1.0, 0x3b00 + i);
  return (n) => {
    const phase = Math.floor((n + PRODUCERS[i].offset) / PHASE) % SHARES[0].length;
    let u = rand();
    for (let h = 0; h < HOT.length; h++) {
      if (u < SHARES[h][phase]) return HOT[h];
      u -= SHARES[h][phase];
    }
    return `bg-${background()}`;
  };
}

/** Sends every producer's messages, PER_PRODUCER each, CHUNK at a time from each in turn. */
async function produceAll(producers) {
  const streams = producers.map((_, i) => keyStream(i));
  const perKey = producers.map(() => new Map());
  for (let n = 0; n < PER_PRODUCER; n += CHUNK) {
    for (let i = 0; i < producers.length; i++) {
      for (let j = n; j < Math.min(n + CHUNK, PER_PRODUCER); j++) {
        const key = streams[i](j);
        const seq = perKey[i].get(key) ?? 0;
        perKey[i].set(key, seq + 1);
        if (!producers[i].produce(TOPIC, `${i}:${seq}`, key)) await once(producers[i], 'drain');
      }
    }
    await sleep(1);
  }
  await Promise.all(producers.map((p) => p.flush(30000)));
  return perKey;
}

function percentile(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;
}

/** Feeds `order` (message indexes) to a fresh Resequencer and checks what comes out. */
function replay(messages, order) {
  const r = new Resequencer({ maxBufferedMessages: messages.length + 1 });
  const indexOf = new Map(messages.map((m, i) => [m, i]));
  const pushedAt = new Int32Array(messages.length).fill(-1);
  const releases = new Uint8Array(messages.length);
  const delays = [];
  const last = new Map(); // producer:key -> last sequence released
  let flagged = 0;
  let orderErrors = 0;
  let peak = 0;
  const examples = [];
  for (let k = 0; k < order.length; k++) {
    pushedAt[order[k]] = k;
    for (const rel of r.push(messages[order[k]])) {
      const i = indexOf.get(rel.message);
      releases[i]++;
      delays.push(k - pushedAt[i]);
      if (rel.outOfOrder || rel.ordered === false) flagged++;
      const [producer, seq] = rel.message.value.toString().split(':').map(Number);
      const chain = `${producer}:${rel.message.key}`;
      const before = last.has(chain) ? last.get(chain) : -1;
      if (seq !== before + 1) {
        orderErrors++;
        if (examples.length < 3) examples.push(`producer ${producer}, key ${rel.message.key}: #${seq} released after #${before} (${rel.message.partition}/${rel.message.offset})`);
      }
      last.set(chain, Math.max(before, seq));
    }
    if (r.held > peak) peak = r.held;
  }
  const held = r.held;
  // What a wait cycle left behind, for the report only (flush() releases it flagged).
  const stuck = held ? r.flush().map((x) => x.message) : [];
  let releasedOnce = 0;
  let twice = 0;
  for (const n of releases) {
    if (n === 1) releasedOnce++;
    if (n > 1) twice++;
  }
  delays.sort((a, b) => a - b);
  return { once: releasedOnce, twice, flagged, orderErrors, examples, held, stuck, peak, delays };
}

/** Message indexes of each partition, in offset order. */
function byPartition(messages) {
  const lists = Array.from({ length: N }, () => []);
  messages.forEach((m, i) => lists[m.partition].push(i));
  for (const list of lists) list.sort((a, b) => messages[a].offset - messages[b].offset);
  return lists;
}

const interleavings = {
  'round-robin, one message per partition': (lists) => {
    const out = [];
    const at = lists.map(() => 0);
    for (let more = true; more;) {
      more = false;
      lists.forEach((list, p) => {
        if (at[p] < list.length) {
          out.push(list[at[p]++]);
          more = true;
        }
      });
    }
    return out;
  },
  ...Object.fromEntries(Array.from({ length: N }, (_, withheld) => [`partition ${withheld} withheld until the end`, (lists) => {
    const rest = interleavings['round-robin, one message per partition'](lists.map((l, p) => (p === withheld ? [] : l)));
    return rest.concat(lists[withheld]);
  }])),
  ...Object.fromEntries([0x51, 0x52, 0x53].map((seed) => [`random, seed ${seed}`, (lists) => {
    const rand = prng(seed);
    const out = [];
    const at = lists.map(() => 0);
    for (;;) {
      const open = lists.map((l, p) => p).filter((p) => at[p] < lists[p].length);
      if (open.length === 0) return out;
      // Runs of 1..64 messages from one partition, as fetches deliver them.
      const p = open[Math.floor(rand() * open.length)];
      const run = 1 + Math.floor(rand() * 64);
      for (let j = 0; j < run && at[p] < lists[p].length; j++) out.push(lists[p][at[p]++]);
    }
  }])),
  'partition by partition, 0 to 3': (lists) => lists.flat(),
  'partition by partition, 3 to 0': (lists) => lists.slice().reverse().flat(),
};

t.test('three DynamicProducers spreading the same hot keys: a Resequencer restores each one\'s order under any interleaving', { timeout: 120000 }, async (t) => {
  const host = await mockProducer();
  t.teardown(() => disconnect(host));
  const brokers = await brokersOf(host);
  const producers = [];
  const hot = [];
  const errors = [];
  for (let i = 0; i < PRODUCERS.length; i++) {
    const p = new DynamicProducer({ 'bootstrap.servers': brokers, log_level: 3, ...PRODUCERS[i].config }, {}, {
      horizon: { messages: PRODUCERS[i].horizon },
      warmupMessages: 100,
      minHotMessages: 8,
      producerId: Buffer.from(`00000000000000a${i}`, 'hex'),
      // Split keys (relocate: false): the keys are checked spread over several partitions.
      relocate: false,
    });
    t.teardown(() => p.disconnect().catch(() => {}));
    p.on('error', (e) => errors.push(e));
    hot.push(trackHot(p));
    await p.connect();
    t.equal(await knownPartitions(p, TOPIC), N, `producer ${i} sees ${N} partitions`);
    producers.push(p);
  }
  const started = Date.now();
  const perKey = await produceAll(producers);
  const producedMs = Date.now() - started;
  t.same(errors, [], "no 'error' events");
  const total = PER_PRODUCER * producers.length;
  const { messages } = await consumeAll(brokers, TOPIC, total);
  t.equal(messages.length, total, `every message read back (${total})`);

  // The run did what the test needs: each producer marked messages, each hot key was spread
  // over several partitions, turned hot and cooled, and the producers' marked messages of a
  // key share (partition, key) lanes.
  const marked = producers.map(() => 0);
  const kinds = producers.map(() => ({}));
  const spreadOver = new Map();
  const lanes = new Map();
  let unreadable = 0;
  for (const m of messages) {
    const producer = Number(m.value.toString().split(':')[0]);
    const raw = headerOf(m);
    if (raw === undefined) continue;
    const order = decodeOrderHeader(raw);
    if (order === null) {
      unreadable++;
      continue;
    }
    marked[producer]++;
    kinds[producer][order.kind] = (kinds[producer][order.kind] ?? 0) + 1;
    const key = String(m.key);
    if (order.kind === 'spread') {
      if (!spreadOver.has(key)) spreadOver.set(key, new Set());
      spreadOver.get(key).add(m.partition);
    }
    const lane = `${m.partition}/${key}`;
    if (!lanes.has(lane)) lanes.set(lane, new Set());
    lanes.get(lane).add(producer);
  }
  const shared = [...lanes.values()].filter((s) => s.size > 1).length;
  t.comment(`produced ${total} messages in ${producedMs} ms; marked per producer ${marked.join(' / ')}; kinds ${JSON.stringify(kinds)}`);
  t.comment(`spread keys and their partitions: ${[...spreadOver].map(([k, s]) => `${k}:${[...s].sort().join('')}`).join(' ')}`);
  t.equal(unreadable, 0, 'every kdp-order header decodes');
  marked.forEach((n, i) => t.ok(n > 500, `producer ${i} marked messages (${n})`));
  for (const key of HOT) {
    const used = spreadOver.get(key);
    t.ok(used && used.size >= 2, `${key}'s spread messages used ${used ? used.size : 0} partitions (>= 2)`);
  }
  hot.forEach((h, i) => {
    const cooled = new Set(h.events.filter((e) => e.type === 'cooled').map((e) => String(e.key)));
    t.ok(HOT.every((k) => h.wasHot(k)) && HOT.every((k) => cooled.has(k)), `producer ${i}: every hot key turned hot and cooled (cooled: ${[...cooled].filter((k) => HOT.includes(k)).join(', ')})`);
    t.ok(kinds[i].return > 0 && kinds[i].anchor > HOT.length, `producer ${i} sent returns (${kinds[i].return}) and anchors again (${kinds[i].anchor})`);
  });
  t.ok(shared > N, `${shared} (partition, key) lanes hold marked messages of several producers`);
  const sent = perKey.reduce((sum, m) => sum + [...m.values()].reduce((a, b) => a + b, 0), 0);
  t.equal(sent, total, 'the reference counts every message sent');

  const lists = byPartition(messages);
  for (const [name, make] of Object.entries(interleavings)) {
    const order = make(lists);
    t.test(name, async (t) => {
      t.equal(order.length, total, 'the interleaving holds every message once');
      const r = replay(messages, order);
      const d = r.delays;
      t.comment(`delay in pushes between a message's push and its release: p50 ${percentile(d, 0.5)}, p99 ${percentile(d, 0.99)}, max ${d.length ? d[d.length - 1] : '-'}; peak held ${r.peak}`);
      if (r.stuck.length) {
        const producersIn = new Set(r.stuck.map((m) => m.value.toString().split(':')[0]));
        const stuckMarked = r.stuck.filter((m) => headerOf(m) !== undefined).length;
        t.comment(`held at the end: ${r.stuck.length} (${stuckMarked} marked), on partitions ${[...new Set(r.stuck.map((m) => m.partition))].sort().join(',')}, of producers ${[...producersIn].sort().join(',')}, keys ${[...new Set(r.stuck.map((m) => String(m.key)))].slice(0, 8).join(',')}`);
      }
      t.equal(r.held, 0, 'nothing held at the end (no wait cycle)');
      t.equal(r.once, total, 'every message released');
      t.equal(r.twice, 0, 'none released twice');
      t.equal(r.flagged, 0, 'none flagged outOfOrder');
      t.equal(r.orderErrors, 0, "each producer's messages of each key released in its send order", { examples: r.examples });
    });
  }
});
