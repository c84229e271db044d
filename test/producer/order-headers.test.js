'use strict';
// Order headers ('kdp-order') on the messages of spread keys, as the DynamicProducer hands
// them to librdkafka (recorded at node-rdkafka's binding, in production order) and as a
// consumer reads them back from the mock cluster. The client library is test/lib/clients.js's
// (test/kafkajs/confluent/matrix.test.js runs this file with Confluent's).
//
// A scripted workload (one topic, 4 partitions, horizon 2,000 messages): key H takes 30% of
// the traffic (hot), then 0.5% (0.02 fair shares: below the cooling line 0.05, above the
// level where it would leave the tracked-key table) for ten half-lives (it cools), then 30%
// again (hot again); key G takes 15% throughout (hot throughout); 500 background keys share
// the rest (each about 0.01 fair shares: never hot). So H's marked messages must read
// anchor, spread..., return, then (after unmarked cold messages) anchor, spread...
const t = require('tap');
const { DynamicProducer, partitionForKey, decodeOrderHeader, PARTITIONERS } = require('../..');
const { prng } = require('../lib/random-keys');
const { clientOptions } = require('../lib/clients');
const { knownPartitions, brokersOf, consumeAll, headerOf, recordHandOvers, handedHeader, trackHot } = require('./lib/helpers');

const N = 4;
const PRODUCER_ID = Buffer.from('00a1b2c3d4e5f6ff', 'hex');
const HORIZON = { messages: 2000 };

function workload(seed) {
  const rand = prng(seed);
  const keys = [];
  for (let i = 0; i < 32_000; i++) {
    const h = i < 6000 || i >= 26_000 ? 0.3 : 0.005;
    const u = rand();
    if (u < h) keys.push('H');
    else if (u < h + 0.15) keys.push('G');
    else keys.push(`bg-${Math.floor(rand() * 500)}`);
  }
  return keys;
}

async function run(t, { topic, options = {}, topicConfig = {}, userHeaders = false }) {
  // Split keys (relocate: false): the chains checked here are anchor, spread..., return.
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, topicConfig, { horizon: HORIZON, producerId: PRODUCER_ID, relocate: false, ...clientOptions(), ...options });
  t.teardown(() => p.disconnect().catch(() => {}));
  const errors = [];
  p.on('error', (e) => errors.push(e));
  const hot = trackHot(p);
  await p.connect();
  await knownPartitions(p, topic);
  const log = recordHandOvers(p.client);
  const keys = workload(0x0bde);
  for (let i = 0; i < keys.length; i++) {
    const headers = userHeaders && keys[i] === 'H' && i % 3 === 0 ? [{ app: `x${i}` }] : undefined;
    if (!p.produce(topic, String(i), keys[i], headers)) t.fail(`message ${i} held: no back-pressure expected here`);
  }
  await p.flush(10000);
  t.equal(log.length, keys.length, 'every message handed to librdkafka once');
  t.same(errors, [], "no 'error' events");
  return { p, keys, log, hot };
}

/** Decoded order headers of the hand-over log, in production order: { i, key, partition, order, raw }. */
function marked(log) {
  const out = [];
  for (const m of log) {
    const raw = handedHeader(m.headers);
    if (raw === undefined) continue;
    out.push({ i: Number(m.value.toString()), key: String(m.key), partition: m.partition, raw, order: decodeOrderHeader(raw) });
  }
  return out;
}

t.test('anchor, spread and return markers; sequences and the per-key chain', async (t) => {
  const base = 'consistent_random';
  const { p, keys, log, hot } = await run(t, { topic: 'order-main', userHeaders: true });
  const ms = marked(log);
  t.ok(ms.length > 1000, `${ms.length} marked messages`);
  t.ok(ms.every((m) => m.order !== null), 'every kdp-order header handed over decodes');
  t.same(new Set(ms.map((m) => m.order.kind)), new Set(['anchor', 'spread', 'return']), 'anchor, spread and return all appear');
  t.ok(ms.every((m) => m.order.producerId === PRODUCER_ID.toString('hex')), 'producerId is options.producerId');
  t.equal(p.producerId.toString('hex'), PRODUCER_ID.toString('hex'), 'p.producerId is options.producerId');
  t.ok(ms.every((m) => m.order.partitions === N), `partitions field = ${N}`);
  t.ok(ms.every((m) => m.order.partitioner === PARTITIONERS.indexOf(base)), `partitioner field = index of '${base}' in PARTITIONERS`);

  // Sequences: strictly increasing in production order, from 1.
  let increasing = true;
  for (let j = 1; j < ms.length; j++) if (!(ms[j].order.sequence > ms[j - 1].order.sequence)) increasing = false;
  t.ok(increasing, 'sequences strictly increase in production order');
  t.equal(ms[0].order.sequence, 1, 'the first marked message has sequence 1');
  t.equal(ms[ms.length - 1].order.sequence, ms.length, 'one sequence number per marked message, none skipped');

  // The chain per key: anchor (previous 0) → spread... (previous = the key's previous marked
  // message) → return (same) → the next marked message is an anchor again.
  const lastOf = new Map();
  let badChain = 0;
  for (const m of ms) {
    const before = lastOf.get(m.key);
    const o = m.order;
    let ok;
    if (o.kind === 'anchor') ok = o.previous === 0 && (before === undefined || before.order.kind === 'return');
    else ok = before !== undefined && before.order.kind !== 'return' && o.previous === before.order.sequence;
    if (!ok && badChain++ < 3) t.fail(`message ${m.i} (${m.key}, ${o.kind}, previous ${o.previous}) after ${before ? `${before.order.kind} ${before.order.sequence}` : 'nothing'}`);
    lastOf.set(m.key, m);
  }
  t.equal(badChain, 0, "each marker's previous is its key's previous marked message (0 for an anchor, which follows a return)");

  // H: anchor, spreads, return, then anchor, spreads; G: anchor, spreads.
  const pattern = (key) => ms.filter((m) => m.key === key).map((m) => m.order.kind[0]).join('').replace(/s+/g, 's');
  t.equal(pattern('H'), 'asras', "H's markers: anchor, spread..., return, anchor, spread...");
  t.equal(pattern('G'), 'as', "G's markers: anchor, spread...");

  // Placement and width of each kind.
  let badHome = 0;
  let badWidth = 0;
  for (const m of ms) {
    const home = partitionForKey(m.key, N, base);
    if (m.order.kind !== 'spread' && m.partition !== home && badHome++ < 3) t.fail(`${m.order.kind} of ${m.key} on ${m.partition}, home ${home}`);
    const w = m.order.width;
    const wOk = m.order.kind === 'spread' ? w >= 2 && w <= N : w === 1;
    if (!wOk && badWidth++ < 3) t.fail(`${m.order.kind} of ${m.key} with width ${w}`);
  }
  t.equal(badHome, 0, "anchors and returns on the key's own (Kafka's) partition");
  t.equal(badWidth, 0, 'width 1 for anchors and returns, 2..n for spread messages');
  const spreadH = new Set(ms.filter((m) => m.key === 'H' && m.order.kind === 'spread').map((m) => m.partition));
  t.ok(spreadH.size > 1, `H's spread messages used ${spreadH.size} partitions`);

  // Unmarked messages: every one on Kafka's partition; keys never hot never marked.
  let badCold = 0;
  let markedCold = 0;
  for (const m of log) {
    const raw = handedHeader(m.headers);
    const key = String(m.key);
    if (!hot.wasHot(key) && raw !== undefined) markedCold++;
    if (raw === undefined && m.partition !== partitionForKey(key, N, base) && badCold++ < 3) t.fail(`unmarked ${key} on ${m.partition}`);
  }
  t.equal(markedCold, 0, 'no header on the messages of keys never hot');
  t.equal(badCold, 0, "every unmarked message on Kafka's partition");
  const hCold = log.filter((m) => String(m.key) === 'H' && handedHeader(m.headers) === undefined).length;
  t.ok(hCold > 20, `H sent ${hCold} unmarked messages while cold (between its return and its next anchor)`);

  // The application's own headers are kept, the order header added after them.
  const withApp = log.filter((m) => Array.isArray(m.headers) && m.headers.some((h) => 'app' in h));
  t.equal(withApp.length, keys.filter((k, i) => k === 'H' && i % 3 === 0).length, "every message given headers keeps them");
  t.ok(withApp.every((m) => m.headers[0].app === `x${m.value}`), 'unchanged and first');
  t.ok(withApp.some((m) => m.headers.length === 2 && handedHeader(m.headers) !== undefined), 'kdp-order appended after them on spread messages');
  t.equal(hot.ever.size, 2, 'exactly H and G turned hot');
});

t.test('order headers arrive intact at a consumer (and the application headers with them)', async (t) => {
  const { p, keys, log } = await run(t, { topic: 'order-wire', userHeaders: true });
  const sent = new Map(log.map((m) => [Number(m.value.toString()), m]));
  const read = await consumeAll(await brokersOf(p.client), 'order-wire', keys.length);
  let damaged = 0;
  let lost = 0;
  let appDamaged = 0;
  let example;
  for (const m of read.messages) {
    const i = Number(m.value.toString());
    const handed = handedHeader(sent.get(i).headers);
    const got = headerOf(m);
    if (handed === undefined) {
      if (got !== undefined) lost++;
      continue;
    }
    if (got === undefined) lost++;
    else if (!Buffer.from(got).equals(Buffer.from(handed))) {
      damaged++;
      example = example ?? `message ${i}: handed ${Buffer.from(handed).toString('hex')}, read ${Buffer.from(got).toString('hex')}`;
    }
    const app = sent.get(i).headers.find((h) => 'app' in h);
    if (app && !(headerOf(m, 'app') && headerOf(m, 'app').toString() === app.app)) appDamaged++;
  }
  t.equal(lost, 0, 'a kdp-order header on exactly the messages given one');
  t.equal(damaged, 0, `every kdp-order header reads back byte for byte${example ? ` (${example})` : ''}`);
  t.equal(appDamaged, 0, 'application headers read back next to it');
});

t.test("orderHeaders: 'none' adds no header, yet spreads", async (t) => {
  const { log, hot } = await run(t, { topic: 'order-none', options: { orderHeaders: 'none' } });
  t.ok(hot.wasHot('H') && hot.wasHot('G'), 'H and G turned hot');
  t.equal(log.filter((m) => m.headers !== undefined && m.headers.length > 0).length, 0, 'no message carries headers');
  const hParts = new Set(log.filter((m) => String(m.key) === 'H').map((m) => m.partition));
  t.ok(hParts.size > 1, `H was still spread (${hParts.size} partitions)`);
});

t.test('spread: false reports hot keys but adds no header and moves nothing', async (t) => {
  const base = 'murmur2';
  const { log, hot } = await run(t, { topic: 'order-nospread', options: { spread: false }, topicConfig: { partitioner: base } });
  t.ok(hot.wasHot('H') && hot.wasHot('G'), "H and G reported 'hot'");
  t.equal(log.filter((m) => m.headers !== undefined && m.headers.length > 0).length, 0, 'no message carries headers');
  const moved = log.filter((m) => m.partition !== partitionForKey(String(m.key), N, base));
  t.equal(moved.length, 0, `every message on partitionForKey(key, ${N}, '${base}')`);
});

// A marked message that librdkafka refuses at produce() (here: larger than message.max.bytes)
// is never sent; the next marked message of its key must not name it as `previous`, or a
// consumer putting the key's messages back in order waits for it forever.
t.test("a marked message refused at produce() does not become the next one's previous", async (t) => {
  const topic = 'order-refused';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3, 'message.max.bytes': 10000 }, {}, { horizon: HORIZON, ...clientOptions() });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  await knownPartitions(p, topic);
  const log = recordHandOvers(p.client);
  const rand = prng(77);
  for (let i = 0; i < 4000; i++) p.produce(topic, String(i), rand() < 0.3 ? 'H' : `bg-${Math.floor(rand() * 500)}`);
  t.ok(p.partitioner.hotKeys(topic).some((h) => h.key === 'H'), 'H is hot');
  const error = await p.send(topic, Buffer.alloc(20000), 'H').then(() => null, (e) => e);
  t.equal(error && error.code, 'KDP_KAFKA_ERROR', 'the oversized message is refused with a KafkaError');
  await p.send(topic, 'after', 'H');
  await p.flush(10000);
  t.equal(log[log.length - 1].value.toString(), 'after', 'the message after the refusal was handed over last');
  const hs = marked(log).filter((m) => m.key === 'H');
  const last = hs[hs.length - 1];
  const before = hs[hs.length - 2];
  t.ok(Number.isNaN(last.i) && last.order.kind === 'spread', 'and it is a marked (spread) H message');
  t.equal(last.order.previous, before.order.sequence,
    `its previous (${last.order.previous}) is the last marked H message handed over (${before.order.sequence})`);
});

// A key that cooled while silent: its first message afterwards is the "return" (docs/design.md:
// "the first after it cools"), on its own partition, marked so that a consumer knows the
// spread chain ended. Here H is hot, then silent for ten half-lives ('cooled' is emitted),
// then sends again.
t.test("the first message of a key that cooled while silent is marked 'return'", async (t) => {
  const topic = 'order-silent';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, {}, { horizon: HORIZON, ...clientOptions() });
  t.teardown(() => p.disconnect().catch(() => {}));
  const cooled = [];
  p.on('cooled', (h) => cooled.push(h.key));
  await p.connect();
  await knownPartitions(p, topic);
  const log = recordHandOvers(p.client);
  const rand = prng(78);
  for (let i = 0; i < 4000; i++) p.produce(topic, String(i), rand() < 0.3 ? 'H' : `bg-${Math.floor(rand() * 500)}`);
  for (let i = 4000; i < 24000; i++) p.produce(topic, String(i), `bg-${Math.floor(rand() * 500)}`);
  t.same(cooled.filter((k) => k === 'H'), ['H'], "H was reported 'cooled' while silent");
  p.produce(topic, 'back', 'H');
  await p.flush(10000);
  const back = log[log.length - 1];
  t.equal(back.partition, partitionForKey('H', N, 'consistent_random'), "it goes to H's own partition");
  const raw = handedHeader(back.headers);
  t.equal(raw === undefined ? 'no header' : decodeOrderHeader(raw).kind, 'return', 'it is marked return');
});
