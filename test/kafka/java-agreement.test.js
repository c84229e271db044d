'use strict';
// Agreement with the Java producer on a real cluster: the real kafka-clients producer (its
// default partitioner, test/kafka/java/KeyedProducer.java) writes 10,000 keyed records of
// every kind of key (ASCII, multi-byte UTF-8, lone surrogates as node-rdkafka sends them,
// arbitrary bytes, the empty key); each must land on partitionForKey(key, n) (the package's
// 'murmur2_random'). Then DynamicProducer sends the same keys to the same topic: every one of
// those cold keys must land where the Java producer put it (placed by DynamicProducer itself:
// its first messages wait for the topic's count). Both are checked twice: by what
// each producer reports, and by reading the topic back with a plain consumer. node-rdkafka
// throughout, or Confluent's client with KDP_TEST_CLIENT=confluent (test/kafka/confluent.test.js).
//
// Needs KAFKA_BROKERS (npm run test:kafka), a JDK and Maven (the jars come with
// scripts/kafka.sh fetch).

const t = require('tap');
const fs = require('node:fs');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { DynamicProducer, partitionForKey } = require('../..');
const { randomKeys } = require('../lib/random-keys');
const K = require('./lib/kafka');

const PARTITIONS = 12;
const KEYS = 10000;
const SEED = process.env.KDP_KAFKA_SEED !== undefined ? Number(process.env.KDP_KAFKA_SEED) >>> 0 : 0x4a617661;
const JAVA_SOURCE = path.join(__dirname, 'java', 'KeyedProducer.java');

function libDir() {
  return path.join(process.env.KAFKA_STATE_DIR || path.join(K.ROOT, '.kafka'), 'lib');
}

/** Runs the Java producer over `wire` (Buffers); resolves with [[partition, offset]] per key. */
function runJava(topic, wire) {
  const fetched = spawnSync('bash', [K.KAFKA_SH, 'fetch'], { encoding: 'utf8' });
  if (fetched.status !== 0) throw new Error(`scripts/kafka.sh fetch failed:\n${fetched.stderr}`);
  const quiet = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'kdp-java-')), 'log4j2.properties');
  fs.writeFileSync(quiet, 'status = error\nrootLogger.level = ERROR\n');
  return new Promise((resolve, reject) => {
    const java = spawn('java', [`-Dlog4j2.configurationFile=${quiet}`, '-cp', path.join(libDir(), '*'), JAVA_SOURCE, K.brokers(), topic], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    java.stdout.setEncoding('utf8').on('data', (d) => { out += d; });
    java.stderr.setEncoding('utf8').on('data', (d) => { err += d; });
    java.on('error', reject);
    java.on('close', (code, signal) => {
      if (code !== 0) return reject(new Error(`java exited with ${code} (${signal}):\n${err}`));
      const rows = out.split('\n').filter(Boolean).map((line) => line.split(' ').map(Number));
      if (rows.length !== wire.length || rows.some((r, i) => r[0] !== i)) return reject(new Error(`java answered ${rows.length} rows for ${wire.length} keys:\n${err}`));
      resolve(rows.map((r) => [r[1], r[2]]));
    });
    java.stdin.end(wire.map((b) => (b.length ? b.toString('hex') : '-')).join('\n') + '\n');
  });
}

t.test('partitions of the Java producer = partitionForKey = DynamicProducer (cold keys)', { ...K.needsCluster(), timeout: 300000 }, async (t) => {
  const total = K.lap();
  const topic = K.topicName('java');
  await K.createTopic(topic, PARTITIONS, Math.min(3, K.brokers().split(',').length));
  const keys = randomKeys(KEYS, SEED, 256);
  keys[0] = Buffer.alloc(0); // the empty key too: hashed, unlike a null key
  keys[1] = '';
  // Cold keys: each sent once. Random keys repeat on the wire (empty ones, lone surrogates that
  // all become U+FFFD): a repeat is replaced, or a key sent hundreds of times would be hot.
  const onWire = new Set();
  keys.forEach((k, i) => {
    const w = K.wireBytes(k).toString('hex');
    if (i > 1 && onWire.has(w)) keys[i] = `once-${i}`;
    onWire.add(w);
  });
  const wire = keys.map((k) => K.wireBytes(k));
  t.comment(`topic ${topic}: ${PARTITIONS} partitions, ${KEYS} keys (seed ${SEED})`);

  // 1. The Java producer, and the package's hash.
  let lap = K.lap();
  const java = await runJava(topic, wire);
  t.comment(`the Java producer sent ${KEYS} records in ${lap()} ms (JVM start and compile included)`);
  const expected = keys.map((k) => partitionForKey(k, PARTITIONS, 'murmur2_random'));
  const differ = [];
  java.forEach(([p], i) => { if (p !== expected[i]) differ.push({ i, key: wire[i].toString('hex'), java: p, partitionForKey: expected[i] }); });
  t.equal(differ.length, 0, `each of the Java producer's ${KEYS} records is on partitionForKey(key, ${PARTITIONS})`, { first: differ.slice(0, 5) });

  // 2. DynamicProducer, the same keys, to the same topic.
  lap = K.lap();
  const p = new DynamicProducer({ 'bootstrap.servers': K.brokers(), 'linger.ms': 5, 'enable.idempotence': true, 'log_level': 3 },
    { acks: 'all', partitioner: 'murmur2_random' }, { metadataRefreshMs: 2000, ...K.clientOptions() });
  const hot = K.trackHot(p);
  await p.connect();
  let reports;
  try {
    reports = await Promise.all(keys.map((k, i) => p.send(topic, `kdp:${i}`, k)));
  } finally {
    await p.disconnect();
  }
  t.comment(`DynamicProducer sent ${KEYS} messages in ${lap()} ms`);
  t.equal(hot.ever.size, 0, 'no key was hot (each was sent once; the empty key twice)');
  // The topic's count was not known before the first message: they waited for it, none was left to librdkafka.
  t.equal(p.partitioner.stats().topics[topic]?.messages, KEYS, `DynamicProducer placed all ${KEYS} messages itself`);
  const moved = [];
  reports.forEach((r, i) => { if (r.partition !== java[i][0]) moved.push({ i, key: wire[i].toString('hex'), java: java[i][0], kdp: r.partition }); });
  t.equal(moved.length, 0, 'DynamicProducer put each key on the Java producer\'s partition (delivery reports)', { first: moved.slice(0, 5) });

  // 3. Read back: the log agrees with both producers' reports.
  lap = K.lap();
  const seenJava = new Int8Array(KEYS);
  const seenKdp = new Int8Array(KEYS);
  let wrong = 0;
  const bad = (what) => { if (wrong++ < 5) t.fail(what); };
  const read = await K.consumeAll(topic, (m) => {
    const text = m.value.toString();
    const [who, n] = text.split(':');
    const i = Number(n);
    if (!(i >= 0 && i < KEYS) || (who !== 'java' && who !== 'kdp')) return bad(`unknown message ${text}`);
    const keyBytes = m.key === null || m.key === undefined ? null : m.key;
    if (!(keyBytes && keyBytes.equals(wire[i]))) {
      bad(`${text}: key ${wire[i].toString('hex')} arrived as ${keyBytes === null ? 'null' : keyBytes.toString('hex')}`);
    }
    if (who === 'java') {
      if (seenJava[i]++) bad(`${text} read twice`);
      if (m.partition !== java[i][0] || m.offset !== java[i][1]) bad(`${text} at ${m.partition}/${m.offset}, Java reported ${java[i][0]}/${java[i][1]}`);
    } else {
      if (seenKdp[i]++) bad(`${text} read twice`);
      if (m.partition !== reports[i].partition || m.offset !== reports[i].offset) bad(`${text} at ${m.partition}/${m.offset}, reported ${reports[i].partition}/${reports[i].offset}`);
      if (m.partition !== java[i][0]) bad(`${text} on partition ${m.partition}, the Java producer's record of that key on ${java[i][0]}`);
    }
  });
  t.comment(`read back ${read.read} messages in ${read.ms} ms`);
  t.equal(read.total, 2 * KEYS, 'the topic holds exactly both producers\' messages');
  t.equal(wrong, 0, 'every message read back where its producer reported it, keys intact, Java and DynamicProducer on the same partition');
  t.equal(seenJava.indexOf(0), -1, 'every Java record read back');
  t.equal(seenKdp.indexOf(0), -1, 'every DynamicProducer message read back');
  t.comment(`java-agreement: ${total()} ms`);
});
