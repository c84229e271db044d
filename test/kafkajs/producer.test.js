'use strict';
// createKafkaJsPartitioner() through KafkaJS's partitioner interface, against KafkaJS's own
// DefaultPartitioner for the same inputs; then a real KafkaJS producer (createPartitioner)
// against librdkafka's mock cluster, read back with node-rdkafka.
const t = require('tap');
const { Kafka, Partitioners, logLevel } = require('kafkajs');
const { createKafkaJsPartitioner, decodeOrderHeader, partitionForKey, InvalidArgTypeError } = require('../..');
const { randomKeys, prng } = require('../lib/random-keys');
const { mockProducer, disconnect } = require('../lib/mock-cluster');
const { brokersOf, consumeAll, headerOf } = require('../producer/lib/helpers');

/** partitionMetadata as KafkaJS passes it (cluster.findTopicPartitionMetadata). */
function metadata(n) {
  return Array.from({ length: n }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: partitionId % 3, replicas: [partitionId % 3], isr: [partitionId % 3], offlineReplicas: [] }));
}

const hex = (k) => Buffer.from(k).toString('hex');

for (const n of [4, 12]) {
  t.test(`${n} partitions: cold keys where KafkaJS's DefaultPartitioner puts them; the dominant key spread and marked`, async (t) => {
    const factory = createKafkaJsPartitioner();
    const ours = factory();
    const theirs = Partitioners.DefaultPartitioner();
    const ever = new Set();
    factory.partitioner.on('hot', (h) => ever.add(hex(h.key)));
    const partitionMetadata = metadata(n);
    const rand = prng(n);
    const pool = randomKeys(3000, 0x6b6a + n, 200);
    pool.push('', Buffer.alloc(0));
    const sent = [];
    for (let i = 0; i < 20_000; i++) {
      const key = rand() < 0.3 ? 'DOMINANT' : pool[Math.floor(rand() * pool.length)];
      const message = { key, value: String(i) };
      const want = theirs({ topic: 'kj', partitionMetadata, message: { key, value: String(i) } });
      const got = ours({ topic: 'kj', partitionMetadata, message });
      sent.push({ key, want, got, headers: message.headers });
    }
    t.ok(ever.has(hex('DOMINANT')), 'the dominant key (30%) turned hot');
    let wrong = 0;
    let coldMarked = 0;
    let cold = 0;
    for (const s of sent) {
      if (ever.has(hex(s.key))) continue;
      cold++;
      if (s.got !== s.want && wrong++ < 3) t.fail(`key ${hex(s.key)}: ours ${s.got}, KafkaJS ${s.want}`);
      if (s.headers !== undefined) coldMarked++;
    }
    t.equal(wrong, 0, `all ${cold} messages of keys never hot on DefaultPartitioner's partition`);
    t.equal(coldMarked, 0, 'and their message.headers left alone');
    const dom = sent.filter((s) => s.key === 'DOMINANT');
    const parts = new Set(dom.map((s) => s.got));
    t.ok(parts.size > 1, `the dominant key used ${parts.size} partitions`);
    const orders = dom.map((s) => s.headers && decodeOrderHeader(s.headers['kdp-order']));
    const firstMarked = orders.findIndex((o) => o);
    t.ok(firstMarked >= 0 && orders.slice(firstMarked).every((o) => o !== null && o !== undefined), 'from turning hot on, every message of it has a kdp-order header in message.headers');
    t.equal(orders[firstMarked].kind, 'anchor', 'the first an anchor');
    t.equal(dom[firstMarked].got, dom[firstMarked].want, "on KafkaJS's partition for the key");
    t.ok(orders.slice(firstMarked + 1).every((o, j) => o.kind === 'spread' && o.previous === orders[firstMarked + j].sequence && o.partitions === n && o.partitioner === 0),
      "then spread messages, each naming the previous one, with the partition count and murmur2_random's code (0)");
  });
}

t.test("a message with an explicit partition keeps it (as KafkaJS's DefaultPartitioner does)", async (t) => {
  const ours = createKafkaJsPartitioner()();
  const theirs = Partitioners.DefaultPartitioner();
  const partitionMetadata = metadata(6);
  const cases = [{ key: 'a', partition: 5 }, { key: null, partition: 2 }, { key: 'b', partition: 0 }];
  for (const message of cases) {
    const want = theirs({ topic: 'p', partitionMetadata, message: { ...message } });
    t.equal(want, message.partition, `KafkaJS: key ${message.key}, partition ${message.partition} → ${want}`);
    t.equal(ours({ topic: 'p', partitionMetadata, message: { ...message } }), want, `ours: the same, ${want}`);
  }
});

t.test('partitionMetadata empty or missing is an InvalidArgTypeError; options', async (t) => {
  const ours = createKafkaJsPartitioner()();
  t.throws(() => ours({ topic: 'x', partitionMetadata: [], message: { key: 'k' } }), InvalidArgTypeError, 'empty: InvalidArgTypeError');
  t.throws(() => ours({ topic: 'x', partitionMetadata: undefined, message: { key: 'k' } }), { code: 'KDP_INVALID_ARG_TYPE' }, 'missing: InvalidArgTypeError');
  t.throws(() => createKafkaJsPartitioner({ orderHeaders: 'all' }), { code: 'KDP_INVALID_OPTION' }, "orderHeaders 'all': InvalidOptionError");
  t.throws(() => createKafkaJsPartitioner({ partitioner: 'random' }), { code: 'KDP_INVALID_OPTION' }, "partitioner 'random': InvalidOptionError");
  // orderHeaders: 'none' and application headers.
  const quiet = createKafkaJsPartitioner({ orderHeaders: 'none' })();
  const loud = createKafkaJsPartitioner()();
  const pm = metadata(4);
  let quietHeaders = 0;
  let kept = true;
  let loudMarked = 0;
  for (let i = 0; i < 5000; i++) {
    const key = i % 2 ? 'H' : `k${i}`;
    const a = { key, headers: i % 2 ? { app: 'x' } : undefined };
    quiet({ topic: 't', partitionMetadata: pm, message: a });
    if (a.headers && Object.keys(a.headers).some((h) => h !== 'app')) quietHeaders++;
    const b = { key, headers: i % 2 ? { app: 'x' } : undefined };
    loud({ topic: 't', partitionMetadata: pm, message: b });
    if (i % 2 && b.headers.app !== 'x') kept = false;
    if (i % 2 && decodeOrderHeader(b.headers['kdp-order'])) loudMarked++;
  }
  t.equal(quietHeaders, 0, "orderHeaders: 'none' adds no header");
  t.ok(loudMarked > 1000, `with the default, ${loudMarked} of H's messages got kdp-order`);
  t.ok(kept, 'application headers are kept next to it');
});

t.test('a real KafkaJS producer with createPartitioner against the mock cluster', async (t) => {
  const holder = await mockProducer({ log_level: 3 });
  t.teardown(() => disconnect(holder));
  const brokers = await brokersOf(holder);
  const kafka = new Kafka({ clientId: 'kdp-test', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const factory = createKafkaJsPartitioner();
  const ever = new Set();
  factory.partitioner.on('hot', (h) => ever.add(String(h.key)));
  const producer = kafka.producer({ createPartitioner: factory, allowAutoTopicCreation: true });
  await producer.connect();
  t.teardown(() => producer.disconnect());
  const topic = 'kafkajs-e2e';
  const rand = prng(99);
  const keys = [];
  for (let batch = 0; batch < 10; batch++) {
    const messages = [];
    for (let j = 0; j < 500; j++) {
      const key = rand() < 0.3 ? 'DOMINANT' : `c-${Math.floor(rand() * 1000)}`;
      messages.push({ key, value: String(keys.length) });
      keys.push(key);
    }
    await producer.send({ topic, messages });
  }
  t.ok(ever.has('DOMINANT'), 'the dominant key turned hot');
  const read = await consumeAll(brokers, topic, keys.length);
  t.equal(read.total, keys.length, 'every message in the log once');
  let wrongCold = 0;
  let damaged = 0;
  let marked = 0;
  const domParts = new Set();
  for (const m of read.messages) {
    const key = keys[Number(m.value.toString())];
    if (m.key.toString() !== key) damaged++;
    const raw = headerOf(m);
    if (key === 'DOMINANT') domParts.add(m.partition);
    if (raw !== undefined) {
      marked++;
      if (decodeOrderHeader(raw) === null) damaged++;
    }
    if (!ever.has(key) && m.partition !== partitionForKey(key, 4, 'murmur2_random')) wrongCold++;
  }
  t.equal(wrongCold, 0, "cold keys on murmur2_random's (KafkaJS's) partition");
  t.equal(damaged, 0, 'keys and kdp-order headers arrive intact');
  t.ok(marked > 1000, `${marked} messages carry a decodable kdp-order header`);
  t.ok(domParts.size > 1, `the dominant key is spread over ${domParts.size} partitions`);
});
