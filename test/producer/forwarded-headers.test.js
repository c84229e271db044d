'use strict';
// A consume-transform-produce app copies a consumed message's headers into produce()/send():
// a `kdp-order` header among them (another producer's, or an earlier hop's) must never go
// out as ours. On a spread key's message ours replaces it (exactly one kdp-order, ours); on
// a message we do not mark (cold key, null key, orderHeaders: 'none', topic not known yet)
// it is removed. Every other header is kept, in its order — including a case variant of the
// name, which is not the order header. Checked on what a consumer reads back from the mock
// cluster, through DynamicProducer.produce and send, wrapProducer, and a KafkaJS producer
// with createKafkaJsPartitioner.
//
// Workload (horizon 2,000 messages, 4 partitions): key H takes 30% of the traffic (hot from
// early on, hot throughout), 400 background keys share the rest (never hot), and one message
// in 50 has a null key. So H's messages read: unmarked, then an anchor, then spread messages
// each naming the one before; nothing else is marked.
const t = require('tap');
const { Kafka, logLevel } = require('kafkajs');
const { DynamicProducer, wrapProducer, createKafkaJsPartitioner, decodeOrderHeader } = require('../..');
const { prng } = require('../lib/random-keys');
const { mockProducer, disconnect } = require('../lib/mock-cluster');
const { knownPartitions, brokersOf, consumeAll, trackHot } = require('./lib/helpers');

const PRODUCER_ID = Buffer.from('0123456789abcdef', 'hex');
const HORIZON = { messages: 2000 };
const COUNT = 6000;
// Headers as another producer wrote them (the format in docs/ordering.md).
const STALE = '1;s;fedcba9876543210;7;6;3;4;0';
const STALE_2 = '1;a;fedcba9876543210;9;0;1;4;0';

function workload(seed) {
  const rand = prng(seed);
  const keys = [];
  for (let i = 0; i < COUNT; i++) {
    const u = rand();
    if (i % 50 === 7) keys.push(null);
    else if (u < 0.3) keys.push('H');
    else keys.push(`bg-${Math.floor(rand() * 400)}`);
  }
  return keys;
}

/**
 * node-rdkafka headers copied from a consumed message, four layouts in turn: none; the order
 * header between two others; as a Buffer, first; two of them (as an earlier hop that
 * appended its own sent) around a case variant of the name.
 */
function rdkafkaHeaders(i) {
  switch (i % 4) {
    case 0: return undefined;
    case 1: return [{ trace: `t${i}` }, { 'kdp-order': STALE }, { app: `a${i}` }];
    case 2: return [{ 'kdp-order': Buffer.from(STALE) }, { trace: `t${i}` }];
    default: return [{ trace: `t${i}` }, { 'kdp-order': STALE }, { 'KDP-Order': `c${i}` }, { 'kdp-order': STALE_2 }, { app: `a${i}` }];
  }
}

/** The same for KafkaJS (an object; a value may be a string, a Buffer or an array of them). */
function kafkaJsHeaders(i) {
  switch (i % 4) {
    case 0: return undefined;
    case 1: return { trace: `t${i}`, 'kdp-order': STALE, app: `a${i}` };
    case 2: return { 'kdp-order': Buffer.from(STALE), trace: `t${i}` };
    default: return { trace: `t${i}`, 'kdp-order': [STALE, Buffer.from(STALE_2)], 'KDP-Order': `c${i}`, app: `a${i}` };
  }
}

/** [name, value text] of each header of a KafkaJS headers object, in the order KafkaJS writes them (arrays in place). */
function kafkaJsWire(headers) {
  const out = [];
  for (const name of Object.keys(headers ?? {})) {
    for (const v of [].concat(headers[name])) out.push([name, Buffer.from(v).toString()]);
  }
  return out;
}

/** [name, value text] of each header of a consumed node-rdkafka message ([{ name: Buffer }]). */
function readWire(message) {
  return (message.headers ?? []).map((h) => {
    const name = Object.keys(h)[0];
    return [name, Buffer.from(h[name]).toString()];
  });
}

/**
 * What a consumer read, against what was sent: `sent[i]` = { key, wire } where wire is the
 * [name, value] list the caller passed. Checks the rule on every message and the chain of our
 * markers; `producerId` (hex) when known, else our markers must agree on one.
 */
function checkRead(t, read, sent, producerId, { marks = true } = {}) {
  t.equal(read.total, sent.length, `the log holds the ${sent.length} messages once`);
  const byIndex = new Array(sent.length);
  for (const m of read.messages) byIndex[Number(m.value.toString())] = m;
  let twice = 0;
  let otherHeaders = 0;
  let unmarkedWithOne = 0;
  let foreign = 0;
  let replaced = 0;
  let removed = 0;
  let example;
  const marked = [];
  for (let i = 0; i < sent.length; i++) {
    const m = byIndex[i];
    const wire = readWire(m);
    const orders = wire.filter(([name]) => name === 'kdp-order');
    const others = wire.filter(([name]) => name !== 'kdp-order');
    const expected = sent[i].wire.filter(([name]) => name !== 'kdp-order');
    const copied = sent[i].wire.length !== expected.length;
    if (JSON.stringify(others) !== JSON.stringify(expected)) {
      otherHeaders++;
      example = example ?? `message ${i}: sent ${JSON.stringify(sent[i].wire)}, read ${JSON.stringify(wire)}`;
    }
    if (orders.length > 1) twice++;
    if (orders.length === 0) {
      if (copied) removed++;
      continue;
    }
    const order = decodeOrderHeader(orders[0][1]);
    if (sent[i].key !== 'H' || order === null) unmarkedWithOne++;
    else {
      if (order.producerId === 'fedcba9876543210' || (producerId !== undefined && order.producerId !== producerId)) foreign++;
      if (copied) replaced++;
      marked.push({ i, order });
    }
  }
  t.equal(otherHeaders, 0, `every other header kept, values and order${example ? ` (${example})` : ''}`);
  t.equal(twice, 0, 'no message carries two kdp-order headers');
  t.equal(unmarkedWithOne, 0, 'no kdp-order on a cold or null key\'s message (the copied one removed)');
  t.ok(removed > 1000, `${removed} messages given a copied kdp-order arrived without one`);
  if (!marks) {
    t.equal(marked.length, 0, 'no message marked');
    return;
  }
  t.equal(foreign, 0, 'every kdp-order read is ours (our producer id, never the copied one)');
  t.ok(replaced > 500, `${replaced} of H's messages given a copied kdp-order arrived with ours instead`);
  t.ok(marked.length > 1000, `${marked.length} of H's messages marked`);
  if (producerId === undefined) t.equal(new Set(marked.map((x) => x.order.producerId)).size, 1, 'all with one producer id');

  // H is hot throughout once hot: every H message from the first marked one on is marked,
  // the first an anchor, each next naming the one before, sequences 1, 2, 3... without gaps
  // (messages with and without copied headers form one chain).
  const h = sent.map((s, i) => i).filter((i) => sent[i].key === 'H');
  const first = h.indexOf(marked[0].i);
  t.same(marked.map((x) => x.i), h.slice(first), 'every H message from its first marked one on is marked');
  t.match(marked[0].order, { kind: 'anchor', previous: 0, sequence: 1 }, 'the first an anchor, sequence 1');
  let broken = 0;
  for (let j = 1; j < marked.length; j++) {
    const o = marked[j].order;
    if ((o.kind !== 'spread' || o.sequence !== j + 1 || o.previous !== j) && broken++ < 3) {
      t.fail(`message ${marked[j].i}: ${o.kind} ${o.sequence} naming ${o.previous}, after sequence ${j}`);
    }
  }
  t.equal(broken, 0, 'then spread messages, sequences 2, 3, ..., each naming the one before');
}

/** Produces the workload through `p` (a DynamicProducer) with `how`: 'produce' or 'send'. */
async function produceAll(t, p, topic, how) {
  const keys = workload(0xf0d);
  const sent = [];
  const pending = [];
  const hot = trackHot(p);
  for (let i = 0; i < keys.length; i++) {
    const headers = rdkafkaHeaders(i);
    const copy = headers && headers.map((x) => ({ ...x }));
    sent.push({ key: keys[i], wire: (headers ?? []).map((x) => { const [name] = Object.keys(x); return [name, Buffer.from(x[name]).toString()]; }) });
    if (how === 'send') pending.push(p.send(topic, String(i), keys[i], headers));
    else if (!p.produce(topic, String(i), keys[i], headers)) t.fail(`message ${i} held: no back-pressure expected here`);
    if (headers && JSON.stringify(headers) !== JSON.stringify(copy)) t.fail(`message ${i}: the caller's headers were changed`);
  }
  const settled = await Promise.allSettled(pending);
  t.equal(settled.filter((s) => s.status !== 'fulfilled').length, 0, 'every send() resolved');
  await p.flush(10000);
  t.same([...hot.ever], [Buffer.from('H').toString('hex')], 'exactly H turned hot');
  return sent;
}

for (const how of ['produce', 'send']) {
  t.test(`DynamicProducer.${how}: a copied kdp-order is replaced on a spread key's message, removed elsewhere`, async (t) => {
    const topic = `forwarded-${how}`;
    const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, {}, { horizon: HORIZON, producerId: PRODUCER_ID });
    t.teardown(() => p.disconnect().catch(() => {}));
    const errors = [];
    p.on('error', (e) => errors.push(e));
    await p.connect();
    await knownPartitions(p, topic);
    const sent = await produceAll(t, p, topic, how);
    checkRead(t, await consumeAll(await brokersOf(p.client), topic, sent.length), sent, PRODUCER_ID.toString('hex'));
    t.same(errors, [], "no 'error' events");
  });
}

for (const how of ['produce', 'send']) {
  t.test(`wrapProducer, ${how}: the same on a wrapped node-rdkafka Producer`, async (t) => {
    const app = await mockProducer({ log_level: 3 });
    t.teardown(() => disconnect(app));
    app.setPollInterval(5);
    const w = wrapProducer(app, { horizon: HORIZON, producerId: PRODUCER_ID });
    t.teardown(() => w.disconnect().catch(() => {}));
    const topic = `forwarded-wrapped-${how}`;
    await knownPartitions(w, topic);
    const sent = await produceAll(t, w, topic, how);
    checkRead(t, await consumeAll(await brokersOf(app), topic, sent.length), sent, PRODUCER_ID.toString('hex'));
  });
}

t.test("orderHeaders: 'none': a copied kdp-order is removed from every message", async (t) => {
  const topic = 'forwarded-none';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, {}, { horizon: HORIZON, orderHeaders: 'none' });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  await knownPartitions(p, topic);
  const sent = await produceAll(t, p, topic, 'produce');
  checkRead(t, await consumeAll(await brokersOf(p.client), topic, sent.length), sent, undefined, { marks: false });
});

// The first message to a topic goes out before its partition count is known: librdkafka
// places it, we do not mark it, so a copied header goes.
t.test('a message produced before the topic\'s partition count is known loses a copied kdp-order', async (t) => {
  const topic = 'forwarded-unknown';
  const p = new DynamicProducer({ 'test.mock.num.brokers': 3, log_level: 3 }, {}, { producerId: PRODUCER_ID });
  t.teardown(() => p.disconnect().catch(() => {}));
  await p.connect();
  t.notOk(p.metrics().topics[topic], 'the topic is not known yet');
  await p.send(topic, '0', 'H', [{ 'kdp-order': STALE }, { app: 'x' }]);
  await p.send(topic, '1', 'H', [{ 'kdp-order': STALE }]);
  const read = await consumeAll(await brokersOf(p.client), topic, 2);
  const wires = read.messages.sort((a, b) => Number(a.value) - Number(b.value)).map(readWire);
  t.same(wires, [[['app', 'x']], []], 'both arrive without it, the other header kept');
});

t.test('createKafkaJsPartitioner: the same through a KafkaJS producer', async (t) => {
  const holder = await mockProducer({ log_level: 3 });
  t.teardown(() => disconnect(holder));
  const brokers = await brokersOf(holder);
  const kafka = new Kafka({ clientId: 'kdp-forwarded', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const factory = createKafkaJsPartitioner({ horizon: HORIZON });
  const ever = new Set();
  factory.partitioner.on('hot', (h) => ever.add(String(h.key)));
  const producer = kafka.producer({ createPartitioner: factory, allowAutoTopicCreation: true });
  await producer.connect();
  t.teardown(() => producer.disconnect());
  const topic = 'forwarded-kafkajs';
  const keys = workload(0xf0d);
  const sent = [];
  const given = [];
  for (let start = 0; start < keys.length; start += 500) {
    const messages = [];
    for (let i = start; i < Math.min(keys.length, start + 500); i++) {
      const headers = kafkaJsHeaders(i);
      given.push(headers);
      sent.push({ key: keys[i], wire: kafkaJsWire(headers) });
      messages.push({ key: keys[i], value: String(i), headers });
    }
    await producer.send({ topic, messages });
  }
  t.same([...ever], ['H'], 'exactly H turned hot');
  t.ok(given.every((h, i) => h === undefined || JSON.stringify(kafkaJsWire(h)) === JSON.stringify(kafkaJsWire(kafkaJsHeaders(i)))),
    "the caller's headers objects are not changed");
  checkRead(t, await consumeAll(brokers, topic, sent.length), sent, undefined);
});

t.test('createKafkaJsPartitioner: an explicit partition or orderHeaders: \'none\' drops a copied kdp-order too', async (t) => {
  const pm = Array.from({ length: 4 }, (_, partitionId) => ({ partitionId }));
  const explicit = { key: 'k', partition: 2, headers: { a: '1', 'kdp-order': STALE, b: '2' } };
  t.equal(createKafkaJsPartitioner()()({ topic: 'x', partitionMetadata: pm, message: explicit }), 2, 'the explicit partition kept');
  t.same(kafkaJsWire(explicit.headers), [['a', '1'], ['b', '2']], 'its kdp-order removed, the others kept in order');
  const quiet = createKafkaJsPartitioner({ orderHeaders: 'none', horizon: HORIZON })();
  let left = 0;
  for (let i = 0; i < 3000; i++) {
    const message = { key: i % 2 ? 'H' : `k${i}`, headers: { 'kdp-order': [STALE, STALE_2], z: 'z' } };
    quiet({ topic: 'x', partitionMetadata: pm, message });
    if (JSON.stringify(kafkaJsWire(message.headers)) !== JSON.stringify([['z', 'z']])) left++;
  }
  t.equal(left, 0, "orderHeaders: 'none': every message left with its other header only (H, hot, included)");
});
