'use strict';
// Shared helpers of the broker suite (test/kafka/*.test.js): the cluster from KAFKA_BROKERS
// (npm run test:kafka sets it, starting a 3-node cluster with scripts/kafka.sh when needed),
// topics made with the client library's AdminClient, a whole topic read back with a plain
// KafkaConsumer (streamed: a million messages are never held as objects), crash control of
// the nodes scripts/kafka.sh runs, and Zipf key streams from build/tools/workload.js.
// The client library is node-rdkafka, or Confluent's client with KDP_TEST_CLIENT=confluent
// (test/lib/clients.js; test/kafka/confluent.test.js runs tests that way): clientOptions()
// gives DynamicProducer and DynamicConsumer the same one. It is required on first use only.
//
// Run directly (tap does when named), this file has no tests.

const { kafka, clientName, clientOptions } = require('../../lib/clients');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { once } = require('node:events');
const { wireBytes } = require('../../lib/random-keys');
const { metadataOf, watermarks } = require('../../lib/topic-log');

const ROOT = path.join(__dirname, '..', '..', '..');
const KAFKA_SH = path.join(ROOT, 'scripts', 'kafka.sh');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The bootstrap list, or null when KAFKA_BROKERS is not set (the suite is then skipped). */
function brokers() {
  const list = process.env.KAFKA_BROKERS;
  return list && list.trim() ? list.trim() : null;
}

/** tap options that skip a test without a cluster, with the reason in the output. */
function needsCluster() {
  return brokers() ? {} : { skip: 'KAFKA_BROKERS is not set: run the broker suite with npm run test:kafka' };
}

/** A fresh topic name (topics are never reused between runs of the suite). */
function topicName(what) {
  return `kdp-${what}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
}

function connected(client, timeout = 20000) {
  return new Promise((resolve, reject) => client.connect({ timeout }, (err) => (err ? reject(err) : resolve(client))));
}

function disconnected(client) {
  return new Promise((resolve) => client.disconnect(() => resolve()));
}


/** A connected plain producer used for metadata only. */
async function metadataClient() {
  return connected(new (kafka().Producer)({ 'metadata.broker.list': brokers(), 'log_level': 3 }));
}

/**
 * Creates `topic` and waits until every partition has a leader with all `replication`
 * replicas in sync. `config`: topic configs (strings), e.g. { 'min.insync.replicas': '2' }.
 */
async function createTopic(topic, partitions, replication, config = {}) {
  const admin = kafka().AdminClient.create({ 'metadata.broker.list': brokers(), 'log_level': 3 });
  try {
    await new Promise((resolve, reject) => admin.createTopic({
      topic, num_partitions: partitions, replication_factor: replication, config,
    }, 30000, (err) => (err ? reject(err) : resolve())));
  } finally {
    admin.disconnect();
  }
  await waitForTopic(topic, partitions, replication);
}

/** Waits until metadata shows `partitions` partitions of `topic`, each with a leader and a full ISR. */
async function waitForTopic(topic, partitions, replication, timeoutMs = 60000) {
  const client = await metadataClient();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = await metadataOf(client, { topic }).catch(() => null);
      const t = m && m.topics.find((x) => x.name === topic);
      if (t && t.partitions.length === partitions &&
        t.partitions.every((p) => p.leader >= 0 && p.isrs.length >= replication)) return t;
      if (Date.now() > deadline) throw new Error(`topic ${topic}: not ${partitions} partitions with ${replication} in-sync replicas within ${timeoutMs} ms`);
      await sleep(200);
    }
  } finally {
    await disconnected(client);
  }
}

/** Adds partitions to `topic` (AdminClient.createPartitions): `total` is the new count. */
async function createPartitions(topic, total) {
  const admin = kafka().AdminClient.create({ 'metadata.broker.list': brokers(), 'log_level': 3 });
  try {
    await new Promise((resolve, reject) => admin.createPartitions(topic, total, 30000, (err) => (err ? reject(err) : resolve())));
  } finally {
    admin.disconnect();
  }
}

/** Leader node id of each partition of `topic`. */
async function leadersOf(topic) {
  const client = await metadataClient();
  try {
    const m = await metadataOf(client, { topic });
    const t = m.topics.find((x) => x.name === topic);
    return t.partitions.slice().sort((a, b) => a.id - b.id).map((p) => p.leader);
  } finally {
    await disconnected(client);
  }
}

/**
 * Waits until every partition of each of `topics` has all `replicas` in sync (what an operator
 * waits for between two nodes of a rolling restart); resolves with how long that took (ms).
 */
async function inSync(topics, replicas, timeoutMs = 120000) {
  const started = Date.now();
  const client = await metadataClient();
  try {
    for (;;) {
      const m = await metadataOf(client, {});
      const lagging = m.topics.filter((t) => topics.includes(t.name))
        .flatMap((t) => t.partitions.filter((p) => p.isrs.length < replicas || p.leader < 0).map((p) => `${t.name}[${p.id}]`));
      const missing = topics.filter((name) => !m.topics.some((t) => t.name === name));
      if (lagging.length === 0 && missing.length === 0) return Date.now() - started;
      if (Date.now() - started > timeoutMs) throw new Error(`not in sync after ${timeoutMs} ms: ${[...lagging, ...missing].join(', ')}`);
      await sleep(500);
    }
  } finally {
    await disconnected(client);
  }
}

/**
 * Reads every message of `topic` from offset 0 of every partition and hands each to
 * `onMessage(message)`; resolves with { read, total, partitions, ms } once the log holds no
 * more (the sum of high watermarks, taken first: produce everything before reading).
 */
async function consumeAll(topic, onMessage, timeoutMs = 300000) {
  const started = Date.now();
  const consumer = new (kafka().KafkaConsumer)({
    'metadata.broker.list': brokers(),
    'group.id': `kdp-kafka-test-${process.pid}-${Math.random().toString(36).slice(2)}`,
    'enable.auto.commit': false,
    'enable.partition.eof': false,
    'fetch.wait.max.ms': 50,
    'fetch.min.bytes': 1,
    'log_level': 3,
  }, { 'auto.offset.reset': 'earliest' });
  await connected(consumer);
  try {
    const offsets = await watermarks(consumer, topic);
    const partitions = offsets.length;
    let total = 0;
    const high = [];
    offsets.forEach((w, partition) => {
      if (w.lowOffset !== 0) throw new Error(`${topic} [${partition}] starts at offset ${w.lowOffset}, not 0`);
      high.push(w.highOffset);
      total += w.highOffset - w.lowOffset;
    });
    consumer.setDefaultConsumeTimeout(200);
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
    let read = 0;
    const deadline = Date.now() + timeoutMs;
    while (read < total) {
      if (Date.now() > deadline) throw new Error(`read ${read} of ${total} messages of ${topic} within ${timeoutMs} ms`);
      const batch = await new Promise((resolve, reject) => consumer.consume(10000, (err, m) => (err ? reject(err) : resolve(m))));
      for (let i = 0; i < batch.length; i++) onMessage(batch[i]);
      read += batch.length;
    }
    return { read, total, partitions, high, ms: Date.now() - started };
  } finally {
    await disconnected(consumer);
  }
}

/** The kdp-order header of a consumed message (both clients: headers = [{ name: Buffer }]), or undefined. */
function headerOf(message, name = 'kdp-order') {
  if (!Array.isArray(message.headers)) return undefined;
  let found;
  for (const h of message.headers) {
    if (Object.hasOwn(h, name)) {
      if (found !== undefined) throw new Error(`two ${name} headers on one message`);
      found = h[name];
    }
  }
  return found;
}

/** Collects a DynamicProducer's 'hot' / 'cooled' events: `ever` holds the keys (wire hex) ever hot. */
function trackHot(p) {
  const events = [];
  const ever = new Set();
  const hex = (key) => (key === null || key === undefined ? 'null' : wireBytes(key).toString('hex'));
  p.on('hot', (h) => {
    events.push({ type: 'hot', key: h.key, share: h.share, partitions: h.partitions, reason: h.reason, at: Date.now() });
    ever.add(hex(h.key));
  });
  p.on('cooled', (h) => events.push({ type: 'cooled', key: h.key, at: Date.now() }));
  return { events, ever, wasHot: (key) => ever.has(hex(key)) };
}

/**
 * Crash control of the cluster scripts/kafka.sh runs, when KAFKA_BROKERS is that cluster:
 * { nodes, kill(i), start(i) }; null otherwise (another cluster: its nodes are not ours).
 */
function clusterControl() {
  const run = (...args) => spawnSync('bash', [KAFKA_SH, ...args], { encoding: 'utf8', cwd: ROOT });
  const status = run('status');
  const listed = run('brokers');
  if (status.status !== 0 || listed.status !== 0 || listed.stdout.trim() !== brokers()) return null;
  const nodes = listed.stdout.trim().split(',').length;
  const command = (args) => {
    const r = run(...args);
    if (r.status !== 0) throw new Error(`scripts/kafka.sh ${args.join(' ')} failed (${r.status}):\n${r.stderr}`);
    return r.stderr.trim();
  };
  const script = (args) => new Promise((resolve, reject) => {
    const { spawn } = require('node:child_process');
    const child = spawn('bash', [KAFKA_SH, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.resume();
    child.on('close', (code) => (code === 0 ? resolve(err.trim()) : reject(new Error(`scripts/kafka.sh ${args.join(' ')} failed (${code}):\n${err}`))));
  });
  return {
    nodes,
    kill: (i) => command(['kill-node', String(i)]),
    // Asynchronous: the start of a JVM and the wait for it to rejoin, or a controlled shutdown,
    // must not block the event loop.
    start: (i) => script(['start-node', String(i)]),
    stop: (i) => script(['stop-node', String(i)]),
    logs: (i) => run('logs', String(i)).stdout,
  };
}

/**
 * Values of the suite's messages: 16 bytes, [0..3] message id, [4..7] key id, [8..11] the
 * message's sequence number within its key (from 0), [12..15] a marker.
 */
const MARK = 0x6b647030; // 'kdp0'
function value(id, keyId, seq) {
  const b = Buffer.allocUnsafe(16);
  b.writeUInt32BE(id, 0);
  b.writeUInt32BE(keyId, 4);
  b.writeUInt32BE(seq, 8);
  b.writeUInt32BE(MARK, 12);
  return b;
}
function parseValue(b) {
  if (!Buffer.isBuffer(b) || b.length !== 16 || b.readUInt32BE(12) !== MARK) return null;
  return { id: b.readUInt32BE(0), keyId: b.readUInt32BE(4), seq: b.readUInt32BE(8) };
}

/**
 * Produces messages 0 .. count-1 through DynamicProducer `p` to `topic`, starting at time
 * `started`: message id's key id is keyOf[id] = nextKey(id), its key keys[keyId] and its value
 * value(id, keyId, its number within the key, counted in perKey). Waits for 'drain' when a
 * message is held; every 1,000 messages keeps to o.ratePerSec (when > 0: sleeps while ahead
 * of it, else yields a turn) and awaits o.onProgress(sent), then stops there if o.stop(sent)
 * is true; every 20,000 it yields a turn. o.idBase (default 0) is added to each value's id
 * (producers of one topic apart). Resolves with the number of messages produced.
 */
async function produceMessages(p, topic, count, { keys, nextKey, keyOf, perKey, started }, o = {}) {
  const idBase = o.idBase ?? 0;
  for (let id = 0; id < count; id++) {
    const keyId = nextKey(id);
    keyOf[id] = keyId;
    if (!p.produce(topic, value(idBase + id, keyId, perKey[keyId]++), keys[keyId])) await once(p, 'drain');
    if ((id + 1) % 1000 === 0) {
      if (o.ratePerSec > 0) {
        const ahead = started + ((id + 1) * 1000) / o.ratePerSec - Date.now();
        if (ahead > 0) await sleep(ahead);
        else await new Promise((resolve) => setImmediate(resolve));
      }
      if (o.onProgress) await o.onProgress(id + 1);
      if (o.stop && o.stop(id + 1)) return id + 1;
      if ((id + 1) % 20000 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return count;
}

/** Times a phase: `done()` returns the milliseconds since `lap()` was made. */
function lap() {
  const started = Date.now();
  return () => Date.now() - started;
}

module.exports = {
  ROOT, KAFKA_SH, sleep, brokers, needsCluster, topicName, connected, disconnected, metadataOf, createTopic,
  waitForTopic, createPartitions, leadersOf, inSync, consumeAll, headerOf, trackHot, clusterControl, value, parseValue,
  lap, wireBytes, produceMessages, clientName, clientOptions,
};
