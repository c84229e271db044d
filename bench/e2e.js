'use strict';
// npm run bench:e2e — the benefit end to end on a real Kafka cluster: static partitioning
// (node-rdkafka's murmur2_random and a plain KafkaConsumer) against DynamicProducer and
// DynamicConsumer, on the same schedule of Zipf-keyed messages and the same bounded consumer
// capacity. Per run: total lag over time, max lag, produce→handled latency, time to drain
// after the producers stop, messages handled per consumer, order violations per (producer,
// key) as the handlers saw them, lost and duplicated messages (from the values alone).
//
// Two scenarios (--scenario; `all`, the default, runs both): `steady`, every consumer at its
// capacity throughout; `slow-consumer`, consumer 0 drops to half its capacity halfway through
// the sending, and the dynamic run's producers each have a LagMonitor of the group attached
// (the lag becomes partition penalties, so hot keys move off the slow consumer's partitions).
//
// With --handler-ms=N every consumer's handler awaits a timer of N ms per message (a handler
// that waits on I/O) instead of the capacity delay, with --concurrency=C calls at once per
// consumer, one at a time per key in consume order: DynamicConsumer { concurrency: C } (ordering
// 'key'), and the static peer's plain KafkaConsumer through a per-key queue of its own
// (bench/e2e/key-queue.js). A closing line per scenario then gives each run's max lag, p99
// latency and unexplained order violations side by side.
//
// Producers and consumers are child processes (bench/e2e/producer.js, bench/e2e/consumer.js);
// this process creates the topics, paces the run, samples lag and prints the figures. The
// cluster is scripts/kafka.sh's (started if needed and left running: others use it) unless
// --brokers names one. --help lists the flags.

const path = require('node:path');
const fs = require('node:fs');
const { fork, execFileSync } = require('node:child_process');
const Kafka = require('node-rdkafka');
const { LagSampler } = require('./e2e/lag');
const { summarizeRun, concatRecords, unhandledAt, quantile, unexplainedOrderViolations, lagSlope } = require('./e2e/stats');
const { fmt, drainText, lastLine, resequencerLine, handlersLine, svgFile } = require('./e2e/format');
const { lagChart } = require('./e2e/svg');
const { flags } = require('./common');

const ROOT = path.join(__dirname, '..');

const SCENARIOS = ['steady', 'slow-consumer'];
// slow-consumer: this consumer's delay per message is multiplied by SLOW_FACTOR halfway through the sending.
const SLOW_CONSUMER = 0;
const SLOW_FACTOR = 2;

const args = flags(__filename, {
  brokers: { type: 'string', arg: 'LIST', help: 'bootstrap list (default: scripts/kafka.sh start 3, which reuses a running cluster)' },
  scenario: { type: 'string', choices: [...SCENARIOS, 'all'], default: 'all', help: 'slow-consumer: consumer 0 at half capacity from halfway on, a LagMonitor in the dynamic producers; all: steady, then slow-consumer' },
  producers: { type: 'number', integer: true, min: 1, max: 255, default: 3, help: 'producer processes' },
  consumers: { type: 'number', integer: true, min: 1, max: 255, default: 6, help: 'consumers in the group' },
  'consumer-procs': {
    type: 'number', integer: true, min: 1, max: (v) => Math.min(2, v.consumers), accepts: 'an integer in [1, 2], at most --consumers', default: 2,
    help: 'processes the consumers are split over (1 or 2)',
  },
  rate: { type: 'number', min: 1, default: (v) => (v.quick ? 1000 : 2000), defaultText: '2000, 1000 with --quick', help: 'total messages per second, over all producers' },
  seconds: { type: 'number', min: 1, default: (v) => (v.quick ? 20 : 60), defaultText: '60, 20 with --quick', help: 'how long the producers send after the warm-up (the measured window)' },
  warmup: {
    type: 'number', min: 0, default: (v) => (v.quick ? 5 : 10), defaultText: '10, 5 with --quick',
    help: 'seconds the producers send at the same rate before the measured window (process start-up, JIT, connections); max-lag and latencies are of the window',
  },
  zipf: { type: 'number', min: 0, default: 1.0, help: 'Zipf exponent of the keys' },
  keys: { type: 'number', integer: true, min: 1, default: 100000, help: 'key space' },
  partitions: { type: 'number', integer: true, min: 1, default: 12, help: 'partitions of the topic' },
  replication: { type: 'number', integer: true, min: 1, default: 3, help: 'replication factor of the topic' },
  capacity: { type: 'number', min: 0.01, default: 1.25, help: 'the group\'s total handling capacity over the offered rate' },
  linger: { type: 'number', arg: 'MS', min: 0, default: 20, help: 'producers\' linger.ms (both runs)' },
  'commit-ms': { type: 'number', integer: true, min: 1, default: 100, help: 'how often consumers commit (ms), both runs: auto.commit.interval.ms / commitIntervalMs (committed lag counts what was handled since the last commit: 200 messages per 100 ms at 2,000 msg/s)' },
  'fetch-wait': { type: 'number', arg: 'MS', integer: true, min: 0, default: 20, help: 'consumers\' fetch.wait.max.ms, with fetch.min.bytes 1 MiB so brokers wait that long (0: librdkafka defaults)' },
  'drain-cap': { type: 'number', arg: 'S', min: 1, default: 120, help: 'seconds to wait for the lag to reach 0 after the producers stop' },
  'lag-interval': { type: 'number', arg: 'MS', integer: true, min: 100, default: 1000, help: 'slow-consumer, dynamic: the producers\' LagMonitor intervalMs' },
  'hold-handoffs': { type: 'number', arg: 'MS', integer: true, min: 0, default: 10000, help: 'slow-consumer, dynamic: the LagMonitor\'s holdHandoffsMs (0: moves never wait in the producer)' },
  'penalty-gain': { type: 'number', min: 0, max: 100, default: 3, help: 'slow-consumer, dynamic: the LagMonitor\'s penaltyGain (0: lag gives no penalty)' },
  seed: { type: 'number', integer: true, min: 0, default: 1, help: 'seed of the key streams (producer i uses seed + i)' },
  only: { type: 'string', choices: ['static', 'dynamic'], help: 'run one side' },
  'producer-options': { type: 'string', arg: 'JSON', help: 'options for the dynamic producers, over the defaults (e.g. {"hotRun":200,"balanceTolerance":0.2})' },
  'consumer-options': { type: 'string', arg: 'JSON', help: 'options for the dynamic consumers, over the run\'s (e.g. {"groupOrder":"wait"})' },
  'group-protocol': { type: 'string', choices: ['classic', 'consumer'], default: 'classic', help: "both sides' consumer group protocol: classic (cooperative-sticky) or consumer (KIP-848, the broker assigns)" },
  'handler-ms': { type: 'number', arg: 'MS', min: 0.001, max: 60000, help: 'each consumer\'s handler awaits a timer of N ms per message (I/O-like) instead of the capacity delay (--capacity is then not used; slow-consumer: consumer 0\'s N doubles), with --concurrency calls at once' },
  concurrency: {
    type: 'number', integer: true, min: 1, max: 65536, default: 1,
    needs: { flag: 'handler-ms', why: 'without it each consumer handles one message at a time at its capacity' },
    help: 'with --handler-ms: calls at once per consumer, one at a time per key in consume order (dynamic: DynamicConsumer { concurrency, ordering: \'key\' }; static: the same model in a per-key queue of the plain KafkaConsumer\'s own)',
  },
  'resequencer-cost': { type: 'boolean', help: 'a third run, "unordered": the dynamic run with orderHeaders \'none\' (nothing to resequence), for what order restoration adds to latency' },
  quick: { type: 'boolean', help: '20 s at 1000 msg/s after a 5 s warm-up (unless --seconds / --rate / --warmup say otherwise)' },
  json: { type: 'boolean', help: 'print all figures as JSON instead of the table (the summary lines go to stderr too)' },
  dump: { type: 'string', arg: 'DIR', help: 'write each run\'s handled messages (columns: consumer, producer, key, seq, sent, at, flags, kind, partition) and lag samples to DIR/scenario-side.json, for analysis' },
  svg: { type: 'string', arg: 'FILE', help: 'write an SVG chart of total lag over time to this file (slow-consumer with all: name-slow-consumer.svg)' },
}, {
  usage: 'npm run bench:e2e --',
  notes: [
    'The last line (one per scenario, steady first):',
    '  e2e: static max-lag N p99 X ms drain X s | dynamic max-lag N p99 X ms drain X s | order violations N lost N dup N',
    'max-lag: the highest total committed lag sampled after the warm-up; p99: produce→handled latency',
    'of the messages sent after the warm-up; drain: from the producers\' last send until the lag is 0.',
    'Order violations, lost and dup are the dynamic run\'s;',
    'the violations are those no flag explains: every violation of a key never split (cold or',
    'relocated whole) plus the split keys\' violations with no ordered: false / outOfOrder message',
    'of that producer and key between the late message and the one that overtook it (must be 0).',
    'With --handler-ms, a line per scenario before it gives every run\'s figures side by side, the',
    'unexplained order violations of each (static\'s: all of them, for it has no flags):',
    '  e2e handlers (steady): N ms per message, C calls at once | static max-lag N p99 X ms order violations N | dynamic ...',
  ].join('\n'),
});

/** The run's settings, from the flags. */
function options() {
  return {
    brokers: args.brokers,
    producers: args.producers,
    consumers: args.consumers,
    consumerProcs: args['consumer-procs'],
    rate: args.rate,
    seconds: args.seconds,
    warmup: args.warmup,
    zipf: args.zipf,
    keys: args.keys,
    partitions: args.partitions,
    replication: args.replication,
    capacity: args.capacity,
    drainCap: args['drain-cap'],
    lingerMs: args.linger,
    fetchWaitMs: args['fetch-wait'],
    commitMs: args['commit-ms'],
    seed: args.seed,
    lagIntervalMs: args['lag-interval'],
    holdHandoffsMs: args['hold-handoffs'],
    penaltyGain: args['penalty-gain'],
    scenarios: args.scenario === 'all' ? SCENARIOS.slice() : [args.scenario],
    sides: (args.only ? [args.only] : ['static', 'dynamic']).concat(args['resequencer-cost'] ? ['unordered'] : []),
    json: args.json,
    svg: args.svg,
    dump: args.dump,
    handlerMs: args['handler-ms'] !== undefined ? args['handler-ms'] : null,
    concurrency: args.concurrency,
    producerOptions: args['producer-options'] === undefined ? {} : JSON.parse(args['producer-options']),
    consumerOptions: args['consumer-options'] === undefined ? {} : JSON.parse(args['consumer-options']),
    groupProtocol: args['group-protocol'],
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (...args) => process.stderr.write(`e2e: ${args.join(' ')}\n`);

function clusterBrokers(o) {
  if (o.brokers) return o.brokers;
  log('starting or reusing the local 3-node cluster (scripts/kafka.sh start 3); it is left running');
  const out = execFileSync('bash', [path.join(ROOT, 'scripts', 'kafka.sh'), 'start', '3'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return out.trim().split('\n').pop().trim();
}

async function createTopic(brokers, topic, partitions, replication) {
  const admin = Kafka.AdminClient.create({ 'metadata.broker.list': brokers, 'log_level': 3 });
  try {
    await new Promise((resolve, reject) => admin.createTopic({ topic, num_partitions: partitions, replication_factor: replication }, 30000,
      (err) => (err ? reject(err) : resolve())));
  } finally {
    admin.disconnect();
  }
  // Wait until every partition has a leader and a full ISR, so no run starts on a half-made topic.
  const client = new Kafka.Producer({ 'metadata.broker.list': brokers, 'log_level': 3 });
  await new Promise((resolve, reject) => client.connect({ timeout: 30000 }, (err) => (err ? reject(err) : resolve())));
  try {
    const deadline = Date.now() + 60000;
    for (;;) {
      const m = await new Promise((resolve) => client.getMetadata({ topic, timeout: 10000 }, (err, md) => resolve(err ? null : md)));
      const t = m && m.topics.find((x) => x.name === topic);
      if (t && t.partitions.length === partitions && t.partitions.every((p) => p.leader >= 0 && p.isrs.length >= replication)) return;
      if (Date.now() > deadline) throw new Error(`topic ${topic}: not ready within 60 s`);
      await sleep(200);
    }
  } finally {
    await new Promise((resolve) => client.disconnect(() => resolve()));
  }
}

/**
 * A child process: waits for its messages of one type, keeps the record chunks it sends and
 * the errors it reports (a worker that crashed leaves its error and what it sent before).
 */
function worker(file, env) {
  const child = fork(path.join(__dirname, 'e2e', file), [], { serialization: 'advanced', env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map();
  const w = { child, file, warnings: [], errors: [], chunks: [], onAssigned: null, exited: false };
  const rejectAll = (err) => {
    for (const [, list] of waiting) list.forEach(({ reject }) => reject(err));
    waiting.clear();
  };
  child.on('message', (msg) => {
    if (msg.type === 'error') {
      log(`${file}: ${msg.message}`);
      w.errors.push(msg.message.split('\n')[0]);
      rejectAll(new Error(msg.message));
      return;
    }
    if (msg.type === 'warn') { if (w.warnings.length < 20) w.warnings.push(msg.message); return; }
    if (msg.type === 'records') { w.chunks.push(msg.records); return; }
    if (msg.type === 'metrics') {
      const m = msg.metrics;
      log(`consumer ${msg.consumer}: held ${m.held}, waiting ${m.waiting}` + (m.reads === undefined ? '' : `; records committed ${m.committed} (${m.committedChars} chars), ` +
        `${m.commits} async (${(m.commitMs / Math.max(1, m.commits)).toFixed(1)} ms each, longest ${m.commitMsMax.toFixed(0)} ms); ` +
        `reads ${m.reads} (${(m.readMs / Math.max(1, m.reads)).toFixed(1)} ms each, longest ${m.readMsMax.toFixed(0)} ms), records read ${m.recordsRead}, skipped ${m.skipped}`));
      return;
    }
    if (msg.type === 'assigned' && w.onAssigned) w.onAssigned(msg);
    const list = waiting.get(msg.type);
    if (list && list.length) list.shift().resolve(msg);
  });
  w.gone = new Promise((resolve) => child.on('exit', (code, signal) => {
    w.exited = true;
    if (code || signal) {
      const err = new Error(`${file} exited with ${signal || code}`);
      if (!w.errors.length) w.errors.push(err.message);
      rejectAll(err);
    }
    resolve(code);
  }));
  w.next = (type, timeoutMs = 120000) => new Promise((resolve, reject) => {
    if (w.exited) return reject(new Error(`${file} has exited`));
    const timer = setTimeout(() => reject(new Error(`${file}: no '${type}' within ${timeoutMs} ms`)), timeoutMs);
    const entry = { resolve: (m) => { clearTimeout(timer); resolve(m); }, reject: (e) => { clearTimeout(timer); reject(e); } };
    if (!waiting.has(type)) waiting.set(type, []);
    waiting.get(type).push(entry);
  });
  w.send = (msg) => { if (!w.exited) child.send(msg); };
  return w;
}

/** Waits until every consumer owns a partition, all partitions are owned, and that held for 3 s. */
async function groupSettled(workers, o) {
  const counts = new Array(o.consumers).fill(0);
  let stableSince = 0;
  let last = '';
  for (const w of workers) w.onAssigned = (msg) => msg.counts.forEach((c, i) => { counts[msg.first + i] = c; });
  const deadline = Date.now() + 120000;
  for (;;) {
    await sleep(250);
    const key = counts.join(',');
    const full = counts.reduce((s, c) => s + c, 0) === o.partitions && counts.every((c) => c > 0 || o.consumers > o.partitions);
    if (!full || key !== last) stableSince = Date.now();
    last = key;
    if (full && Date.now() - stableSince >= 3000) return counts.slice();
    if (Date.now() > deadline) throw new Error(`the group did not settle within 120 s (partitions per consumer: ${key})`);
  }
}

async function runSide(side, scenario, o, brokers, stamp) {
  const topic = `kdp-e2e-${scenario}-${side}-${stamp}`;
  const group = topic;
  const slowing = scenario === 'slow-consumer';
  log(`${scenario} ${side}: topic ${topic} (${o.partitions} partitions, replication ${o.replication})`);
  await createTopic(brokers, topic, o.partitions, o.replication);

  const delayMs = (1000 * o.consumers) / (o.capacity * o.rate);
  const consumerWorkers = [];
  let first = 0;
  for (let w = 0; w < o.consumerProcs; w++) {
    const count = Math.floor(o.consumers / o.consumerProcs) + (w < o.consumers % o.consumerProcs ? 1 : 0);
    const cw = worker('consumer.js', { UV_THREADPOOL_SIZE: '16' });
    cw.send({ cmd: 'start', side, brokers, topic, group, first, count, delayMs, fetchWaitMs: o.fetchWaitMs, commitMs: o.commitMs, handlerMs: o.handlerMs, concurrency: o.concurrency, consumerOptions: o.consumerOptions, groupProtocol: o.groupProtocol });
    consumerWorkers.push(cw);
    first += count;
  }
  await Promise.all(consumerWorkers.map((w) => w.next('started')));
  const assignment = await groupSettled(consumerWorkers, o);
  const handling = o.handlerMs !== null ? `handler awaiting ${o.handlerMs} ms, ${o.concurrency} calls at once per consumer` : `delay ${delayMs.toFixed(2)} ms per message`;
  log(`${scenario} ${side}: group settled, partitions per consumer ${assignment.join(' ')}; ${handling}`);

  const producerWorkers = [];
  for (let p = 0; p < o.producers; p++) {
    const pw = worker('producer.js', {});
    pw.send({ cmd: 'start', side, brokers, topic, index: p, rate: o.rate / o.producers, seconds: o.warmup + o.seconds, zipf: o.zipf, keys: o.keys, seed: o.seed + p, lingerMs: o.lingerMs,
      group, lagMonitor: slowing && side !== 'static', lagMonitorMs: o.lagIntervalMs, holdHandoffsMs: o.holdHandoffsMs, penaltyGain: o.penaltyGain, producerOptions: o.producerOptions });
    producerWorkers.push(pw);
  }
  await Promise.all(producerWorkers.map((w) => w.next('ready')));

  const sampler = new LagSampler(brokers, group, topic, o.partitions);
  await sampler.connect();
  const startAt = Date.now() + 1000;
  // The measured window: after the warm-up.
  const measureFrom = startAt + o.warmup * 1000;
  const samples = [];
  const done = Promise.all(producerWorkers.map((w) => w.next('done', (o.warmup + o.seconds + 120) * 1000)));
  let producersDone = null;
  done.then((d) => { producersDone = d; }, () => {});
  producerWorkers.forEach((w) => w.send({ cmd: 'go', startAt }));
  log(`${scenario} ${side}: producing ${o.rate} msg/s for ${o.warmup} s of warm-up and ${o.seconds} s measured`);
  let slowedAt = null;
  let slowTimer = null;
  if (slowing) {
    const owner = consumerWorkers[0];
    slowTimer = setTimeout(() => {
      owner.next('slowed', 30000).then((m) => { slowedAt = m.at; log(`${scenario} ${side}: consumer ${SLOW_CONSUMER} at 1/${SLOW_FACTOR} of its capacity`); }, () => {});
      owner.send({ cmd: 'slow', consumer: SLOW_CONSUMER, factor: SLOW_FACTOR });
    }, measureFrom + (o.seconds * 1000) / 2 - Date.now());
  }

  // Lag every second while producing; every 250 ms once the producers have stopped, until it is 0.
  let stopAt = null;
  let drainedAt = null;
  for (let tick = startAt; ; ) {
    await sleep(Math.max(0, tick - Date.now()));
    const at = Date.now();
    const lag = await sampler.sample().catch((err) => { log(`${scenario} ${side}: lag sample failed: ${err.message}`); return null; });
    if (lag) samples.push({ at, t: (at - startAt) / 1000, total: lag.total, partitions: lag.partitions });
    if (producersDone && stopAt === null) stopAt = Math.max(...producersDone.map((d) => d.sendEnd));
    if (stopAt !== null && lag && lag.total === 0 && at >= stopAt) { drainedAt = at; break; }
    if (stopAt !== null && at - stopAt > o.drainCap * 1000) break;
    tick += stopAt === null ? 1000 : 250;
    if (tick < Date.now()) tick = Date.now();
  }
  const results = await done;
  clearTimeout(slowTimer);
  await sampler.disconnect();

  // A consumer process that crashed keeps the records it sent before; its error is reported.
  await Promise.all(consumerWorkers.map(async (w) => {
    const stopped = w.next('stopped', 60000).catch((err) => { if (!w.errors.length) w.errors.push(err.message); });
    w.send({ cmd: 'stop' });
    await stopped;
  }));
  const parts = consumerWorkers.map((w) => concatRecords(w.chunks));
  producerWorkers.forEach((w) => w.send({ cmd: 'exit' }));
  for (const w of [...producerWorkers, ...consumerWorkers]) {
    if (!w.exited) await Promise.race([w.gone, sleep(15000).then(() => w.child.kill())]);
  }

  if (o.dump) {
    fs.mkdirSync(o.dump, { recursive: true });
    const columns = (part) => Object.fromEntries(Object.entries(part).map(([k, v]) => [k, typeof v === 'number' ? v : Array.from(v)]));
    fs.writeFileSync(path.join(o.dump, `${scenario}-${side}.json`), JSON.stringify({ startAt, measureFrom, stopAt, samples, parts: parts.map(columns) }));
  }
  const producers = results.sort((a, b) => a.index - b.index).map((d) => ({ sent: d.sent, ackedMask: d.ackedMask }));
  const figures = summarizeRun({ producers, parts, consumers: o.consumers, keys: o.keys, measureFrom });
  const sentSorted = Float64Array.from(results.flatMap((d) => Array.from(d.sentAt))).sort();
  const unhandled = unhandledAt(sentSorted, figures.firstHandledAt, samples.map((x) => x.at));
  samples.forEach((x, i) => { x.unhandled = unhandled[i]; });
  delete figures.firstHandledAt;
  const ackMs = Float64Array.from(results.flatMap((d) => Array.from(d.ackMs.filter((_, j) => d.ackedMask[j])))).sort();
  return {
    scenario, side, topic, group, delayMs, handlerMs: o.handlerMs, concurrency: o.concurrency, assignment,
    slowSeconds: slowedAt !== null ? (slowedAt - startAt) / 1000 : null,
    warmupSeconds: o.warmup,
    lagMonitorErrors: slowing && side !== 'static' ? results.reduce((s, d) => s + (d.lagMonitorErrors || 0), 0) : null,
    maxLag: samples.reduce((m, s) => (s.at >= measureFrom ? Math.max(m, s.total) : m), 0),
    maxUnhandled: samples.reduce((m, s) => (s.at >= measureFrom ? Math.max(m, s.unhandled) : m), 0),
    warmupMaxLag: samples.reduce((m, s) => (s.at < measureFrom ? Math.max(m, s.total) : m), 0),
    // How fast the lag grew while the producers sent (after the warm-up): ~0 for a group that keeps up.
    lagGrowthPerSecond: lagSlope(samples, o.warmup, (stopAt - startAt) / 1000),
    drainSeconds: drainedAt !== null ? (drainedAt - stopAt) / 1000 : null,
    drainCapped: drainedAt === null,
    producerFailures: results.reduce((s, d) => s + d.failed, 0),
    producerLastError: results.map((d) => d.lastError).find(Boolean) || null,
    producerClientErrors: results.reduce((s, d) => s + (d.errors || 0), 0),
    producerLastClientError: results.map((d) => d.lastClientError).find(Boolean) || null,
    producerMetrics: results.map((d) => d.metrics).filter(Boolean),
    producersStopSeconds: (stopAt - startAt) / 1000,
    ackLatencyMs: { p50: quantile(ackMs, 0.5), p99: quantile(ackMs, 0.99), max: ackMs.length ? ackMs[ackMs.length - 1] : NaN },
    warnings: consumerWorkers.flatMap((w) => w.warnings),
    crashes: consumerWorkers.flatMap((w) => w.errors),
    ...figures,
    orderViolationsUnexplained: unexplainedOrderViolations(figures),
    lag: samples,
  };
}

function table(runs) {
  const rows = [
    ['sent / acknowledged', (r) => `${r.sent} / ${r.acked}`],
    ['handled (distinct)', (r) => fmt(r.handled)],
    ['max total lag (after warm-up)', (r) => fmt(r.maxLag)],
    ['max total lag in the warm-up', (r) => fmt(r.warmupMaxLag)],
    ['lag growth while sending, msg/s', (r) => fmt(r.lagGrowthPerSecond, 1)],
    ['max sent, not yet handled', (r) => fmt(r.maxUnhandled)],
    ['produce→ack p50 / p99 ms', (r) => `${fmt(r.ackLatencyMs.p50, 1)} / ${fmt(r.ackLatencyMs.p99, 1)}`],
    ['latency p50 ms', (r) => fmt(r.latencyMs.p50, 1)],
    ['latency p99 ms', (r) => fmt(r.latencyMs.p99, 1)],
    ['latency max ms', (r) => fmt(r.latencyMs.max, 1)],
    ['marked (hot keys\') latency p50 / p99 ms', (r) => (r.markedLatencyMs && !Number.isNaN(r.markedLatencyMs.p99) ? `${fmt(r.markedLatencyMs.p50, 1)} / ${fmt(r.markedLatencyMs.p99, 1)}` : '-')],
    ['drain s', drainText],
    ['order violations', (r) => fmt(r.violations)],
    ['  overtaken by a flagged one', (r) => (r.side !== 'static' ? fmt(r.overtakenByFlagged) : '-')],
    ['  neither flagged', (r) => (r.side !== 'static' ? fmt(r.unannouncedViolations) : '-')],
    ['  of cold / relocated / split keys', (r) => (r.side !== 'static' ? `${r.violationsByKeyClass.cold} / ${r.violationsByKeyClass.relocated} / ${r.violationsByKeyClass.split}` : '-')],
    ['  no flag on the way (must be 0)', (r) => (r.side !== 'static' ? fmt(r.unexplainedViolations) : '-')],
    ['  unexplained (last line; must be 0)', (r) => (r.side !== 'static' ? fmt(r.orderViolationsUnexplained) : '-')],
    ['(producer, key) pairs relocated / split', (r) => (r.side !== 'static' ? `${r.keysByClass.relocated} / ${r.keysByClass.split}` : '-')],
    ['split keys\' messages handed out ordered', (r) => (r.side !== 'static' && r.splitOrderedShare !== null ? `${fmt(100 * r.splitOrderedShare, 1)}% of ${r.splitMessages}` : '-')],
    ['split keys\' hops to another consumer: n, wait p50 / p99 ms', (r) => (r.hops && r.hops.cross.n ? `${r.hops.cross.n}, ${fmt(r.hops.cross.p50, 0)} / ${fmt(r.hops.cross.p99, 0)}` : '-')],
    ['  within a consumer / staying: wait p50 / p99 ms', (r) => (r.hops && r.hops.stay.n ? `${r.hops.sameConsumer.n ? `${fmt(r.hops.sameConsumer.p50, 0)} / ${fmt(r.hops.sameConsumer.p99, 0)}` : '-'}; ${fmt(r.hops.stay.p50, 0)} / ${fmt(r.hops.stay.p99, 0)}` : '-')],
    ['lost', (r) => fmt(r.lost)],
    ['duplicated', (r) => fmt(r.duplicated)],
    ['flagged outOfOrder', (r) => (r.side !== 'static' ? fmt(r.flaggedOutOfOrder) : '-')],
    ['ordered === false', (r) => (r.side !== 'static' ? fmt(r.notOrdered) : '-')],
    ['  by reason', (r) => Object.entries(r.flaggedReasons).map(([k, v]) => `${k} ${v}`).join(', ') || '-'],
    ['with an order header', (r) => (r.side !== 'static' ? fmt(r.withOrderHeader) : '-')],
    ['handled per consumer', (r) => r.perConsumer.join(' ')],
    ['partitions per consumer', (r) => r.assignment.join(' ')],
    ...(runs[0].handlerMs !== null ? [['handler ms per message, calls at once', (r) => `${r.handlerMs} ms, ${r.concurrency}`]] : []),
    ...(runs.some((r) => r.scenario === 'slow-consumer') ? [
      [`consumer ${SLOW_CONSUMER} slowed at s`, (r) => fmt(r.slowSeconds, 1)],
      ['LagMonitor read errors', (r) => (r.side !== 'static' ? fmt(r.lagMonitorErrors) : '-')],
    ] : []),
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const cols = runs.map((r) => Math.max(r.side.length, ...rows.map(([, f]) => f(r).length)));
  const line = (name, cells) => `${name.padEnd(width)}  ${cells.map((c, i) => c.padStart(cols[i])).join('  ')}`;
  return [line(runs[0].scenario, runs.map((r) => r.side)), ...rows.map(([name, f]) => line(name, runs.map(f)))].join('\n');
}

async function main() {
  const o = options();
  const brokers = clusterBrokers(o);
  const stamp = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  log(`brokers ${brokers}; scenarios ${o.scenarios.join(', ')}; ${o.producers} producers, ${o.consumers} consumers in ${o.consumerProcs} processes, ` +
    `${o.rate} msg/s for ${o.seconds} s, Zipf ${o.zipf} over ${o.keys} keys, ${o.partitions} partitions, replication ${o.replication}, ` +
    (o.handlerMs !== null ? `handlers awaiting ${o.handlerMs} ms, ${o.concurrency} calls at once per consumer` : `capacity ${o.capacity}× the rate`));
  const scenarios = [];
  for (const scenario of o.scenarios) {
    const runs = [];
    for (const side of o.sides) {
      const r = await runSide(side, scenario, o, brokers, stamp);
      r.drainCap = o.drainCap;
      runs.push(r);
    }
    scenarios.push({ scenario, runs, summary: lastLine(runs), resequencer: resequencerLine(runs), handlers: handlersLine(runs) });
    if (o.svg) {
      const series = runs.map((r) => ({
        name: r.side, points: r.lag.map((s) => [s.t, s.total]), unhandled: r.lag.map((s) => [s.t, s.unhandled]), stopAt: r.producersStopSeconds,
      }));
      const marks = runs.filter((r) => r.slowSeconds !== null).slice(0, 1).map((r) => ({ at: r.slowSeconds, label: `consumer ${SLOW_CONSUMER} at 1/${SLOW_FACTOR}` }));
      if (o.warmup > 0) marks.unshift({ at: o.warmup, label: 'end of warm-up' });
      const file = svgFile(o.svg, scenario, o.scenarios);
      fs.writeFileSync(file, lagChart(series, `${scenario}: total lag, ${o.rate} msg/s for ${o.seconds} s, Zipf ${o.zipf}, ${o.partitions} partitions, RF ${o.replication}, capacity ${o.capacity}×`, marks));
      log(`${scenario}: lag chart in ${file}`);
    }
  }
  const summary = scenarios.flatMap((s) => [s.resequencer, s.handlers, s.summary].filter(Boolean));
  if (o.json) {
    // stdout stays one JSON document; the summary lines go to stderr as well.
    console.log(JSON.stringify({ options: { ...o, brokers }, scenarios, summary }, null, 1));
    process.stderr.write(`${summary.join('\n')}\n`);
    return;
  }
  for (const { runs } of scenarios) {
    console.log(table(runs));
    for (const r of runs) {
      if (r.producerFailures) console.log(`${r.scenario} ${r.side}: ${r.producerFailures} produce failures (${r.producerLastError})`);
      if (r.producerClientErrors) console.log(`${r.scenario} ${r.side}: ${r.producerClientErrors} client errors, no message lost by them (${r.producerLastClientError})`);
      if (r.warnings.length) console.log(`${r.scenario} ${r.side}: consumer errors: ${r.warnings.slice(0, 3).join('; ')}`);
      if (r.crashes.length) console.log(`${r.scenario} ${r.side}: consumer process failed: ${r.crashes.join('; ')}`);
    }
    console.log('');
  }
  for (const line of summary) console.log(line);
}

main().catch((err) => {
  console.error(err && err.stack || err);
  process.exit(1);
});
