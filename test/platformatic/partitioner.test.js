'use strict';
// createPlatformaticPartitioner(): the partitioner hook of @platformatic/kafka's producer. Cold
// keys are checked against independent oracles: @platformatic/kafka's own compatibilityPartitioner
// reduced `% n` as its producer does (run under Node 22, test/lib/platformatic.js), KafkaJS's
// DefaultPartitioner and librdkafka's murmur2 (test/lib/librdkafka-oracle.js); never our output.
const path = require('node:path');
const t = require('tap');
const { Partitioners } = require('kafkajs');
const { createPlatformaticPartitioner, InvalidOptionError } = require('../..');
const { randomKeys, wireBytes, prng } = require('../lib/random-keys');
const { librdkafkaHashes } = require('../lib/librdkafka-oracle');
const { platformaticSkip, runPlatformatic } = require('../lib/platformatic');

const COUNTS = [1, 2, 3, 7, 12, 17, 64, 1000];
const kafkajs = Partitioners.DefaultPartitioner();
const metadataOf = (topic, n) => ({ metadata: { topics: new Map([[topic, { partitionsCount: n, partitions: [] }]]) } });

/** KafkaJS's DefaultPartitioner (Java's rule) for a keyed message among `n`. */
function kafkajsPartition(key, n) {
  return kafkajs({ topic: 't', partitionMetadata: Array.from({ length: n }, (_, partitionId) => ({ partitionId, leader: 0 })), message: { key: wireBytes(key) } });
}

// Random keys of every kind (ASCII, UTF-8, lone surrogates, Buffers), and keys whose murmur2 is negative.
// Each key once (the random ones repeat short keys, the empty one often): none of them turns hot.
const seen = new Set();
const keys = ['', Buffer.alloc(0), ...randomKeys(8000, 0x504c4154, 300).filter((k) => {
  const hex = wireBytes(k).toString('hex');
  if (hex === '' || seen.has(hex)) return false;
  seen.add(hex);
  return true;
})];
const hashes = librdkafkaHashes(keys);
const negative = keys.filter((_, i) => hashes[i].murmur2 >= 0x80000000).length;

t.test('the keys include many whose murmur2 is negative (where >>> 0 and Kafka differ)', async (t) => {
  t.ok(negative > 2000, `${negative} of ${keys.length} keys hash negative`);
});

t.test("cold keys: @platformatic/kafka's compatibilityPartitioner, KafkaJS's and librdkafka's partition, as Buffers and strings, count known or not", { skip: platformaticSkip() }, async (t) => {
  const input = JSON.stringify({ keys: keys.map((k) => wireBytes(k).toString('hex')), counts: COUNTS });
  const { result } = await runPlatformatic(path.join(__dirname, 'fixtures', 'oracle.js'), { input });
  t.match(result.node, /^v22\./, `the oracle ran on Node 22 (${result.node})`);
  for (const options of [{ spread: false }, { orderHeaders: 'none' }]) {
    const ours = createPlatformaticPartitioner(options);
    let wrong = 0;
    let wrongUnknown = 0;
    let wrongKafkajs = 0;
    let wrongLibrdkafka = 0;
    let defaultDiffers = 0;
    for (const n of COUNTS) {
      // A topic per count: each key is one message of it (twice for a string), never hot.
      const topic = `cold-${n}`;
      const context = metadataOf(topic, n);
      for (let i = 0; i < keys.length; i++) {
        const oracle = result.compatibility[n][i];
        // The producer hands its partitioner the serialized key (a Buffer); a string is accepted too.
        const key = keys[i];
        if (ours({ topic }, wireBytes(key), context) !== oracle) wrong++;
        if (typeof key === 'string' && ours({ topic }, key, context) !== oracle) wrong++;
        // No count yet (the producer's first send): what it returns, reduced as the producer does.
        if (ours({ topic }, wireBytes(key), undefined) % n !== oracle) wrongUnknown++;
        if (kafkajsPartition(key, n) !== oracle) wrongKafkajs++;
        if ((hashes[i].murmur2 & 0x7fffffff) % n !== oracle) wrongLibrdkafka++;
        if (result.byDefault[n][i] !== oracle) defaultDiffers++;
      }
    }
    const label = JSON.stringify(options);
    t.equal(wrongKafkajs + wrongLibrdkafka, 0, `${label}: the three oracles agree`);
    t.equal(wrong, 0, `${label}: every key on the oracle's partition (${keys.length} keys x ${COUNTS.length} counts)`);
    t.equal(wrongUnknown, 0, `${label}: with no count known, the hash the producer reduces to the same partition`);
    t.ok(defaultDiffers > 1000, `${label}: @platformatic/kafka's defaultPartitioner (murmur2 >>> 0) differs from Kafka on ${defaultDiffers} (key, count) pairs`);
    ours.partitioner.close();
  }
});

t.test('null keys: within the partitions, spread; under murmur2 the empty key\'s partition', async (t) => {
  const ours = createPlatformaticPartitioner({ orderHeaders: 'none' });
  const used = new Set();
  let outside = 0;
  for (let i = 0; i < 3000; i++) {
    const p = ours({ topic: 'nulls' }, undefined, metadataOf('nulls', 12));
    if (!(Number.isInteger(p) && p >= 0 && p < 12)) outside++;
    used.add(p);
  }
  t.equal(outside, 0, 'every null key within the partitions');
  t.ok(used.size >= 6, `null keys go to several partitions (${used.size})`);
  const unknown = new Set(Array.from({ length: 24 }, () => ours({ topic: 'nulls2' }, undefined, {}) % 12));
  t.ok(unknown.size > 1 && [...unknown].every((p) => p >= 0), 'with no count known: a round robin, non-negative');
  ours.partitioner.close();
  const hashed = createPlatformaticPartitioner({ spread: false, partitioner: 'murmur2' });
  const empty = (librdkafkaHashes([null])[0].murmur2 & 0x7fffffff) % 12;
  t.equal(hashed({ topic: 'n' }, undefined, metadataOf('n', 12)), empty, "'murmur2': a null key on the empty key's partition (librdkafka)");
  t.equal(hashed({ topic: 'n' }, undefined, undefined) % 12, empty, 'also with no count known');
  hashed.partitioner.close();
});

t.test('a hot key (25%) is spread over the partitions; cold keys stay on Kafka\'s; balanced', async (t) => {
  const ours = createPlatformaticPartitioner({ orderHeaders: 'none' });
  const hot = [];
  ours.partitioner.on('hot', (h) => hot.push(String(h.key)));
  const n = 12;
  const context = metadataOf('skew', n);
  const rand = prng(0x25);
  const counts = new Array(n).fill(0);
  const hotPartitions = new Set();
  let coldWrong = 0;
  const total = 60000;
  for (let i = 0; i < total; i++) {
    const key = rand() < 0.25 ? 'HOT' : `k${Math.floor(rand() * 5000)}`;
    const p = ours({ topic: 'skew' }, Buffer.from(key), context);
    counts[p]++;
    if (key === 'HOT') hotPartitions.add(p);
    else if (p !== kafkajsPartition(key, n)) coldWrong++;
  }
  t.same(hot, ['HOT'], "the hot key reported ('hot' on .partitioner)");
  t.ok(hotPartitions.size >= 3, `the hot key used ${hotPartitions.size} partitions`);
  t.equal(coldWrong, 0, "every other key on Kafka's partition (KafkaJS's DefaultPartitioner)");
  const ratio = Math.max(...counts) / (total / n);
  t.ok(ratio < 1.1, `hottest partition / mean ${ratio.toFixed(3)} (Kafka's own: ${(0.25 * n + 0.75).toFixed(2)})`);
  const stats = ours.partitioner.stats();
  t.ok(stats.topics.skew, 'stats() of the partitioner behind it');
  ours.partitioner.close();
});

t.test('spread: false detects and reports, moves nothing', async (t) => {
  const ours = createPlatformaticPartitioner({ spread: false });
  let reported = 0;
  ours.partitioner.on('hot', () => reported++);
  const context = metadataOf('x', 12);
  const own = kafkajsPartition('HOT', 12);
  let moved = 0;
  for (let i = 0; i < 20000; i++) {
    const key = i % 2 ? 'HOT' : `c${i}`;
    if (ours({ topic: 'x' }, Buffer.from(key), context) !== (key === 'HOT' ? own : kafkajsPartition(key, 12))) moved++;
  }
  t.equal(reported, 1, 'the hot key reported');
  t.equal(moved, 0, "every message on Kafka's partition, the hot key's too");
  ours.partitioner.close();
});

t.test('a topic beyond maxPartitions: Kafka\'s partition, one warning', async (t) => {
  const ours = createPlatformaticPartitioner({ orderHeaders: 'none', maxPartitions: 8, maxTopics: 4 });
  const warnings = [];
  ours.partitioner.on('warning', (e) => warnings.push(e));
  let wrong = 0;
  for (let i = 0; i < 50; i++) if (ours({ topic: 'big' }, Buffer.from(`k${i}`), metadataOf('big', 16)) % 16 !== kafkajsPartition(`k${i}`, 16)) wrong++;
  t.equal(wrong, 0, "every key on Kafka's partition (reduced % 16 by the producer)");
  t.equal(warnings.length, 1, 'one warning');
  t.equal(warnings[0].code, 'KDP_OUT_OF_RANGE');
  ours.partitioner.close();
});

t.test('bad options are refused at creation, each with a clear InvalidOptionError', async (t) => {
  const refused = (options, path, pattern) => {
    let error;
    try {
      createPlatformaticPartitioner(options);
    } catch (e) {
      error = e;
    }
    t.ok(error instanceof InvalidOptionError && error.path === path && pattern.test(error.message), `${JSON.stringify(options)}: ${error?.message}`);
  };
  refused(undefined, 'options.orderHeaders', /cannot write order headers.*wrapPlatformaticProducer/);
  refused({}, 'options.orderHeaders', /'none'/);
  refused({ orderHeaders: 'spread' }, 'options.orderHeaders', /wrapPlatformaticProducer/);
  refused({ orderHeaders: 'none', partitioner: 'fnv1a' }, 'options.partitioner', /murmur2_random/);
  refused({ orderHeaders: 'none', headerType: 'string' }, 'options.headerType', /not an option/);
  refused({ orderHeaders: 'none', hotThreshold: -1 }, 'options.hotThreshold', /number/);
  refused({ orderHeaders: 'none', metadataRefreshMs: 1000 }, 'options.metadataRefreshMs', /not an option/);
  t.throws(() => createPlatformaticPartitioner('x'), InvalidOptionError);
  const ok = createPlatformaticPartitioner({ spread: false });
  t.equal(typeof ok, 'function', 'spread: false needs no orderHeaders');
  ok.partitioner.close();
});
