'use strict';
// npm run bench:produce — DynamicProducer against the raw client library with its built-in
// partitioner, same configuration, same run, each on its own librdkafka mock cluster:
// 100-byte messages with Zipf-distributed keys, timed until every delivery report has
// arrived (and, for the fire-and-forget path, until flush() returns with dr_cb off).
// Rounds alternate raw / dynamic so that machine noise hits both; the ratio reported is the
// median of the rounds' ratios (each a raw run and the dynamic run right after it), beside
// the median msg/s of each, and the process's CPU time per message of each with the median
// of their ratios (less sensitive to the machine's other work than throughput), and the CPU
// time of the main thread alone per message (where produce() runs, and where DynamicProducer
// adds its work: librdkafka's threads take the other core). On the paths without order headers
// a third run, "raw, partitionForKey", is the raw client given the partition computed by
// partitionForKey (Kafka's hash in WebAssembly, the least a partitioner in JavaScript does).
//
// The client library: node-rdkafka, and Confluent's @confluentinc/kafka-javascript (raw
// Confluent producer against DynamicProducer given { kafka: Confluent }). Both by default when
// Confluent's client is installed; each then runs in a child process of its own, one after
// the other, since the two cannot share a process (they would share one librdkafka).
//
// With --brokers=LIST the same runs go to a real cluster instead (e.g. scripts/kafka.sh's:
// 127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094), into one topic of 4 partitions made for the
// run (replication 3, or 1 on a smaller cluster), with librdkafka's default acks (all).
//
// --help lists the flags.

const { flags, median } = require('./common');

const args = flags(__filename, {
  messages: { type: 'number', integer: true, min: 1, default: 200000, help: 'messages per run' },
  rounds: { type: 'number', integer: true, min: 1, default: 7, help: 'rounds, the order of the runs rotating' },
  client: {
    type: 'string', choices: ['node-rdkafka', 'confluent', 'both'], defaultText: "both when Confluent's client is installed, else node-rdkafka",
    help: 'the client library: raw against DynamicProducer on it',
  },
  brokers: { type: 'string', arg: 'LIST', help: "a real cluster (e.g. scripts/kafka.sh's), a topic of 4 partitions made for the run (default: librdkafka's mock cluster)" },
  topic: { type: 'string', arg: 'NAME', defaultText: "with --brokers one made for the run, else 'bench'", help: 'the topic (with --brokers: an existing one)' },
  json: { type: 'boolean', help: 'print the figures as JSON (with each client\'s version and librdkafka\'s)' },
  path: { type: 'string', arg: 'NAME[|NAME]', help: 'only these rows, as printed: e.g. --path="fire&forget, no headers"' },
  child: { type: 'boolean', internal: true, help: 'a run of one --client for the parent process (progress on stderr, figures as JSON)' },
}, { usage: 'npm run bench:produce --' });

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { DynamicProducer, DynamicPartitioner, encodeOrderHeader, ORDER_HEADER, partitionForKey } = require('..');
const { KeyStream, parseWorkload } = require('../build/tools/workload');

const MESSAGES = args.messages;
const ROUNDS = args.rounds;
// The topic: the mock cluster makes it (4 partitions) at its first message; on a real cluster
// main() makes one for the run and passes it to the child processes (--topic).
const BROKERS = args.brokers;
let TOPIC = args.topic ?? 'bench';
const VALUE = Buffer.alloc(100, 'v');
const PARTITIONER = 'murmur2_random';
const QUEUE_FULL = -184;
const PACKAGES = { 'node-rdkafka': 'node-rdkafka', confluent: '@confluentinc/kafka-javascript' };

function installed(name) {
  try {
    require.resolve(PACKAGES[name]);
    return true;
  } catch {
    return false;
  }
}

/** The clients to measure: --client, or both when Confluent's client is installed. */
function clients() {
  const chosen = args.client ?? (installed('confluent') ? 'both' : 'node-rdkafka');
  const list = chosen === 'both' ? Object.keys(PACKAGES) : [chosen];
  for (const name of list) {
    if (!Object.hasOwn(PACKAGES, name)) throw new Error(`--client=${chosen}: expected node-rdkafka, confluent or both`);
    if (!installed(name)) {
      throw new Error(`${PACKAGES[name]} is not installed${name === 'confluent' ? ' (an optional peer dependency): bash scripts/install-confluent.sh' : ''}`);
    }
  }
  return list;
}

// The client library of this process (--client names one): set by measure().
let Kafka;
let clientOptions;

const stream = new KeyStream(parseWorkload('zipf:1.0'), 10000, 11);
const names = Array.from({ length: 10000 }, (_, i) => `customer-${i}`);
const KEYS = Array.from({ length: MESSAGES }, () => names[stream.next()]);

const tick = () => new Promise((resolve) => setImmediate(resolve));

// The main thread's CPU time (ns) from the kernel's per-thread schedstat; undefined where
// /proc does not have it (the column is then left out).
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const HAS_SCHEDSTAT = (() => {
  try {
    fs.readFileSync(SCHEDSTAT, 'utf8');
    return true;
  } catch {
    return false;
  }
})();
const mainThreadNs = () => (HAS_SCHEDSTAT ? Number(fs.readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) : NaN);

function config(reports) {
  const cluster = BROKERS !== undefined ? { 'metadata.broker.list': BROKERS } : { 'test.mock.num.brokers': 3 };
  return { ...cluster, 'linger.ms': 5, 'log_level': 3, ...(reports ? { dr_cb: true } : { dr_cb: false }) };
}

/** A topic of 4 partitions on the cluster at BROKERS, made for this run (node-rdkafka's admin client). */
async function makeTopic() {
  const Rdkafka = require('node-rdkafka');
  const topic = `bench-produce-${Date.now().toString(36)}`;
  const meta = new Rdkafka.Producer({ 'metadata.broker.list': BROKERS, 'log_level': 3 });
  await new Promise((resolve, reject) => meta.connect({ timeout: 30000 }, (err) => (err ? reject(err) : resolve())));
  const brokers = await new Promise((resolve, reject) => meta.getMetadata({ timeout: 10000 }, (err, m) => (err ? reject(err) : resolve(m.brokers.length))));
  const admin = Rdkafka.AdminClient.create({ 'metadata.broker.list': BROKERS, 'log_level': 3 });
  try {
    await new Promise((resolve, reject) => admin.createTopic({ topic, num_partitions: 4, replication_factor: Math.min(3, brokers) }, 30000,
      (err) => (err ? reject(err) : resolve())));
    // Until every partition has a leader: the first run should not wait for the topic.
    for (const deadline = Date.now() + 30000; ;) {
      const m = await new Promise((resolve) => meta.getMetadata({ topic, timeout: 10000 }, (err, md) => resolve(err ? null : md)));
      const t = m && m.topics.find((x) => x.name === topic);
      if (t && t.partitions.length === 4 && t.partitions.every((x) => x.leader >= 0)) break;
      if (Date.now() > deadline) throw new Error(`topic ${topic}: no leaders within 30 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    admin.disconnect();
    await new Promise((resolve) => meta.disconnect(() => resolve()));
  }
  return topic;
}

// The order headers DynamicProducer gives these messages (default options, 4 partitions):
// the rows "raw, same headers" send them with the raw client, to show what the client and
// librdkafka themselves charge for them.
const SAME_HEADERS = (() => {
  const partitioner = new DynamicPartitioner();
  const id = '0123456789abcdef';
  let sequence = 0;
  return KEYS.map((key) => {
    partitioner.decide(TOPIC, key, 4);
    const order = partitioner.decision.order;
    if (order === 0) return undefined;
    sequence++;
    return [{ [ORDER_HEADER]: encodeOrderHeader(order, id, sequence, sequence - 1, 2, 4, 0) }];
  });
})();

/**
 * The raw client: produce(); on "queue full" poll and retry; librdkafka partitions, or with
 * `hashed` the partition comes from partitionForKey (same partitions: murmur2 as Java's).
 */
async function raw(reports, withHeaders = false, hashed = false) {
  const p = new Kafka.Producer(config(reports), { partitioner: PARTITIONER });
  await new Promise((resolve, reject) => p.connect({}, (err) => (err ? reject(err) : resolve())));
  let delivered = 0;
  if (reports) p.on('delivery-report', () => delivered++);
  p.setPollInterval(5);
  const warm = async () => {
    for (let i = 0; i < 1000; i++) p.produce(TOPIC, null, VALUE, names[i]);
    await new Promise((r) => p.flush(10000, r));
    await new Promise((r) => setTimeout(r, 50));
  };
  await warm();
  delivered = 0;
  const start = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadNs();
  for (let i = 0; i < MESSAGES; ) {
    try {
      p.produce(TOPIC, hashed ? partitionForKey(KEYS[i], 4) : null, VALUE, KEYS[i], undefined, undefined, withHeaders ? SAME_HEADERS[i] : undefined);
      i++;
    } catch (err) {
      if (err.code !== QUEUE_FULL) throw err;
      p.poll();
      await tick();
    }
  }
  await new Promise((resolve, reject) => p.flush(60000, (err) => (err ? reject(err) : resolve())));
  while (reports && delivered < MESSAGES) {
    p.poll();
    await tick();
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const main = (mainThreadNs() - main0) / 1000 / MESSAGES;
  p.setPollInterval(0);
  await new Promise((r) => p.disconnect(5000, r));
  return { rate: MESSAGES / seconds, cpu: (cpu.user + cpu.system) / MESSAGES, main };
}

/** DynamicProducer: produce(); on false wait for 'drain'. */
async function dynamic(reports, orderHeaders) {
  const p = new DynamicProducer(config(reports), { partitioner: PARTITIONER }, { orderHeaders, ...clientOptions });
  await p.connect();
  let delivered = 0;
  if (reports) p.on('delivery', () => delivered++);
  for (let i = 0; i < 1000; i++) p.produce(TOPIC, VALUE, names[i]);
  await p.flush(10000);
  for (let i = 0; i < 50 && !(p.metrics().topics[TOPIC].partitions > 0); i++) {
    await p.refreshMetadata(TOPIC).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
  }
  delivered = 0;
  const start = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadNs();
  for (let i = 0; i < MESSAGES; i++) {
    if (!p.produce(TOPIC, VALUE, KEYS[i])) await new Promise((resolve) => p.once('drain', resolve));
  }
  await p.flush(60000);
  while (reports && delivered < MESSAGES) await tick();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const main = (mainThreadNs() - main0) / 1000 / MESSAGES;
  await p.disconnect();
  return { rate: MESSAGES / seconds, cpu: (cpu.user + cpu.system) / MESSAGES, main };
}

/** Every path's rounds on the client library `name`, in this process: { path: figures }. */
async function measure(name) {
  Kafka = require(PACKAGES[name]);
  // node-rdkafka is DynamicProducer's default; Confluent's client is given as the option kafka.
  clientOptions = name === 'node-rdkafka' ? {} : { kafka: Kafka };
  const progress = !args.json || args.child;
  const results = {};
  // Order headers (on by default) cost the client a header conversion per spread message; the
  // last two rows show the price of the partitioning alone. For the first two, the raw client
  // also runs with the same headers on the same messages: what the client and librdkafka
  // charge for the headers themselves.
  const paths = [
    ['with delivery reports', true, 'spread'],
    ['fire and forget', false, 'spread'],
    ['reports, no order headers', true, 'none'],
    ['fire&forget, no headers', false, 'none'],
  ];
  for (const [path, reports, orderHeaders] of paths) {
    if (args.path !== undefined && !args.path.split('|').includes(path)) continue;
    const withHeaders = orderHeaders === 'spread';
    const runs = [['raw', () => raw(reports)], ['dynamic', () => dynamic(reports, orderHeaders)]];
    if (withHeaders) runs.push(['rawSameHeaders', () => raw(reports, true)]);
    else runs.push(['rawHashed', () => raw(reports, false, true)]);
    const got = Object.fromEntries(runs.map(([run]) => [run, []]));
    // CPU time of the whole process per message (µs; librdkafka's and the mock brokers' threads
    // too): less sensitive than throughput to what else the machine runs. And of the main
    // thread alone, where produce() and DynamicProducer's own work run.
    const cpu = Object.fromEntries(runs.map(([run]) => [run, []]));
    const main = Object.fromEntries(runs.map(([run]) => [run, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // The order of the runs rotates, so none always gets the warmer machine.
      for (let k = 0; k < runs.length; k++) {
        const [run, fn] = runs[(round + k) % runs.length];
        const r = await fn();
        got[run].push(r.rate);
        cpu[run].push(r.cpu);
        main[run].push(r.main);
      }
      if (progress) {
        process.stderr.write(`  ${name}: ${path} round ${round + 1}: ${runs.map(([run]) => `${run} ${Math.round(got[run][round])}`).join(', ')} msg/s\n`);
      }
    }
    const ratio = (of, to) => median(got[of].map((x, i) => x / got[to][i]));
    results[path] = {
      raw: median(got.raw), dynamic: median(got.dynamic), ratio: ratio('dynamic', 'raw'),
      cpuRaw: median(cpu.raw), cpuDynamic: median(cpu.dynamic), cpuRatio: median(cpu.dynamic.map((x, i) => x / cpu.raw[i])),
      ...(HAS_SCHEDSTAT ? { mainRaw: median(main.raw), mainDynamic: median(main.dynamic), mainAdded: median(main.dynamic.map((x, i) => x - main.raw[i])) } : {}),
      ...(withHeaders ? {
        rawSameHeaders: median(got.rawSameHeaders),
        sameHeadersToRaw: ratio('rawSameHeaders', 'raw'),
        ratioToSameHeaders: ratio('dynamic', 'rawSameHeaders'),
        cpuSameHeaders: median(cpu.rawSameHeaders),
        cpuRatioToSameHeaders: median(cpu.dynamic.map((x, i) => x / cpu.rawSameHeaders[i])),
      } : {
        rawHashed: median(got.rawHashed),
        hashedToRaw: ratio('rawHashed', 'raw'),
        ...(HAS_SCHEDSTAT ? { mainHashedAdded: median(main.rawHashed.map((x, i) => x - main.raw[i])) } : {}),
      }),
    };
  }
  const version = require(`${PACKAGES[name]}/package.json`).version.replace(/^v/, '');
  return { package: PACKAGES[name], version, librdkafka: Kafka.librdkafkaVersion, results };
}

/** Runs this benchmark for client `name` in a child process; resolves with its measure(). */
function measureInChild(name) {
  return new Promise((resolve, reject) => {
    const cluster = BROKERS !== undefined ? [`--brokers=${BROKERS}`, `--topic=${TOPIC}`] : [];
    const only = args.path !== undefined ? [`--path=${args.path}`] : [];
    const child = spawn(process.execPath, [__filename, `--client=${name}`, `--messages=${MESSAGES}`, `--rounds=${ROUNDS}`, ...cluster, ...only, '--json', '--child'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) return reject(new Error(`the ${name} run exited with ${code ?? signal}`));
      try {
        resolve(JSON.parse(out).clients[name]);
      } catch (err) {
        reject(new Error(`the ${name} run printed no figures: ${err.message}`));
      }
    });
  });
}

// The floors of DynamicProducer with default options against the raw client (node-rdkafka):
// against it with no headers, and against it sending the same headers on the same messages.
const FLOORS = {
  'with delivery reports': { raw: 0.88, same: 0.95 },
  'fire and forget': { raw: 0.80, same: 0.90 },
  'reports, no order headers': {},
  'fire&forget, no headers': { raw: 0.93 },
};
const verdict = (ratio, floor) => (floor === undefined ? '' : ratio >= floor ? ` (floor ${floor}: met)` : ` (floor ${floor}: NOT met)`);

function print(name, c) {
  const label = name === 'node-rdkafka' ? 'node-rdkafka' : 'Confluent';
  console.log(`\n${c.package} ${c.version} (librdkafka ${c.librdkafka}): raw ${label} producer against DynamicProducer${name === 'node-rdkafka' ? '' : ' { kafka }'}`);
  console.log(`path                       raw ${label.padEnd(13)}    DynamicProducer      ratio                         CPU µs/msg raw, dynamic (ratio)   raw, same headers (/raw)   DynamicProducer / it`);
  // The floors are the issue's for node-rdkafka; Confluent's rows are printed beside them as they are.
  const floors = name === 'node-rdkafka' ? FLOORS : {};
  for (const [path, x] of Object.entries(c.results)) {
    const f = floors[path] ?? {};
    const same = x.rawSameHeaders === undefined ? '' :
      `   ${Math.round(x.rawSameHeaders).toString().padStart(9)} msg/s (${x.sameHeadersToRaw.toFixed(3)})      ${x.ratioToSameHeaders.toFixed(3)}${verdict(x.ratioToSameHeaders, f.same)}; CPU ${x.cpuSameHeaders.toFixed(2)} µs/msg (dynamic / it ${x.cpuRatioToSameHeaders.toFixed(3)})`;
    console.log(`${path.padEnd(26)} ${Math.round(x.raw).toString().padStart(9)} msg/s    ${Math.round(x.dynamic).toString().padStart(9)} msg/s      ` +
      `${(x.ratio.toFixed(3) + verdict(x.ratio, f.raw)).padEnd(30)}${`${x.cpuRaw.toFixed(2)}, ${x.cpuDynamic.toFixed(2)} (${x.cpuRatio.toFixed(3)})`.padEnd(34)}${same}`);
    // What a throughput floor leaves DynamicProducer on the main thread at this raw speed,
    // were the main thread all that limits it: raw's time there × (1 / floor − 1).
    const budget = f.raw === undefined || x.mainRaw === undefined ? '' : `; a ratio of ${f.raw} leaves it at most +${(x.mainRaw * (1 / f.raw - 1)).toFixed(2)}`;
    const main = x.mainRaw === undefined ? '' : `main thread µs/msg: raw ${x.mainRaw.toFixed(2)}, DynamicProducer ${x.mainDynamic.toFixed(2)} (+${x.mainAdded.toFixed(2)})${budget}`;
    const hashed = x.rawHashed === undefined ? '' :
      `raw given partitionForKey's partition: ${Math.round(x.rawHashed)} msg/s (/raw ${x.hashedToRaw.toFixed(3)})${x.mainHashedAdded === undefined ? '' : `, main thread +${x.mainHashedAdded.toFixed(2)}`}`;
    const extra = [main, hashed].filter(Boolean).join('; ');
    if (extra) console.log(`${''.padEnd(27)}${extra}`);
  }
}

async function main() {
  const list = clients();
  if (BROKERS !== undefined && args.topic === undefined) TOPIC = await makeTopic();
  const figures = {};
  if (list.length === 1) figures[list[0]] = await measure(list[0]);
  else for (const name of list) figures[name] = await measureInChild(name);
  if (args.json) {
    console.log(JSON.stringify({ messages: MESSAGES, rounds: ROUNDS, clients: figures }, null, 2));
    return;
  }
  const where = BROKERS !== undefined ? `cluster ${BROKERS}, topic ${TOPIC} (4 partitions)` : 'mock cluster (4 partitions)';
  console.log(`\n${MESSAGES} messages of 100 bytes, Zipf 1.0 keys, ${where}, medians of ${ROUNDS} rounds`);
  for (const [name, c] of Object.entries(figures)) print(name, c);
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
