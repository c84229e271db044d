'use strict';
// npm run soak — a long run through DynamicProducers and DynamicConsumers (Resequencer on),
// sampling the process's memory and the size of every internal table as it goes.
//
// Workload: Zipf-keyed messages (build/tools/workload's `shift` stream) whose hot set moves
// every --move-every messages; --producers DynamicProducers (default 2) send in turns of a
// few dozen messages each, so that chains of several producers meet in the consumers;
// --consumers DynamicConsumers (default 2) of one group read the topic; --restarts times
// (default 2), evenly spaced, one consumer is stopped (committing what it handled) and a new
// one takes its place, so that commits, revocations and assignments run part-way. The
// producers stay at most --window messages ahead of what was handled (the mock cluster keeps
// 5 MB per partition).
//
// Counted from the message values only (bench/soak/check.js): lost (acknowledged, never
// handled), duplicated (re-reads by another consumer instance; a bad duplicate otherwise),
// order violations per (producer, key) that no flag explains.
//
// Sampled every --sample-every messages sent: RSS, V8 heap used (and, run with --expose-gc as
// `npm run soak` does, the heap after a full collection), and every table of each producer and
// consumer (bench/soak/tables.js) with its bound from the options. Checked: after the first
// --warmup messages RSS stays under --rss-mb and the heap under --heap-mb; every table stays
// under its bound for the whole run; RSS grows by at most --rss-slope MB per million messages
// after warm-up (least-squares slope); nothing lost, no bad duplicate, no unexplained order
// violation. Exit code 1 when a check fails.
//
// Cluster: librdkafka's in-process mock cluster (3 brokers, 4 partitions) by default;
// --brokers=host:port,... runs against a real cluster (a topic of --partitions partitions,
// replication 3 or the broker count, made for the run and deleted after it).
//
// --help lists the flags.

const { flags } = require('./common');

/** A count: an integer >= 0. */
const count = (fallback, help, more = {}) => ({ type: 'number', integer: true, min: 0, default: fallback, help, ...more });
/** A library option, its default unless given. */
const option = (name) => count(undefined, `the library's ${name}`, { defaultText: "the library's" });

const args = flags(__filename, {
  messages: count(10_000_000, 'messages sent'),
  producers: count(2, 'DynamicProducers, sending in turns'),
  consumers: count(2, 'DynamicConsumers of one group'),
  keys: count(50_000, 'distinct keys'),
  zipf: { type: 'number', arg: 'S', min: 0, default: 1.0, help: 'Zipf exponent of the keys' },
  'move-every': count(500_000, 'messages between moves of the hot set'),
  restarts: count(2, 'times one consumer is stopped and a new one takes its place, evenly spaced'),
  'sample-every': count((v) => Math.max(1000, Math.floor(v.messages / 100)), 'messages sent between samples', { defaultText: 'messages / 100, at least 1000' }),
  warmup: count((v) => Math.floor(v.messages / 10), 'messages before the RSS and heap checks start', { defaultText: 'messages / 10' }),
  window: count(20_000, 'how many messages the producers stay at most ahead of what was handled'),
  'rss-mb': count(350, 'bound of RSS after warm-up, MB'),
  'heap-mb': count(150, 'bound of the heap used after warm-up, MB'),
  'rss-slope': { type: 'number', arg: 'MB', min: 0, default: 8, help: 'bound of the RSS growth after warm-up, MB per million messages (least-squares slope)' },
  brokers: {
    type: 'string', arg: 'host:port,...',
    help: "a real cluster: a topic of --partitions made for the run and deleted after it (default: librdkafka's mock cluster, 4 partitions)",
  },
  partitions: count(6, 'with --brokers: partitions of the topic'),
  'max-tracked-keys': option('maxTrackedKeys'),
  'max-queued': option('maxQueued'),
  'max-chains': option('maxChains'),
  'max-buffered': option('maxBufferedMessages'),
  'max-wait-ms': option('maxWaitMs'),
  'consumer-options': { type: 'string', arg: 'JSON', help: 'options for the DynamicConsumers, over the run\'s (e.g. {"groupOrder":"wait"})' },
  json: { type: 'boolean', help: 'print the figures and every sample as JSON on stdout' },
  svg: { type: 'string', arg: 'FILE', help: 'write the memory curve as an SVG chart' },
}, { usage: 'npm run soak --' });

const fs = require('node:fs');
const Kafka = require('node-rdkafka');
const { DynamicProducer, DynamicConsumer } = require('..');
const { KeyStream, parseWorkload } = require('../build/tools/workload');
const { Checker } = require('./soak/check');
const T = require('./soak/tables');
const { lagChart } = require('./e2e/svg');
const { mockProducer, disconnect } = require('../test/lib/mock-cluster');
const { brokersOf } = require('../test/producer/lib/helpers');

const MESSAGES = args.messages;
const PRODUCERS = args.producers;
const CONSUMERS = args.consumers;
const KEYS = args.keys;
const ZIPF = args.zipf;
const MOVE_EVERY = args['move-every'];
const RESTARTS = args.restarts;
const SAMPLE_EVERY = args['sample-every'];
const WARMUP = args.warmup;
const WINDOW = args.window;
// Bounds from two 10M-message runs on the mock cluster (README, "Soak"): RSS peaked at 213 and
// 246 MB after warm-up, heap used at 59 and 80 MB (about 10,000 messages held), RSS grew 2.2
// and 3.9 MB per million.
const RSS_MB = args['rss-mb'];
const HEAP_MB = args['heap-mb'];
const RSS_SLOPE = args['rss-slope'];
// Messages of one producer per turn of the event loop: node-rdkafka hands the application at
// most 100 delivery reports per producer and turn (DeliveryReportDispatcher::Flush), so a
// producer sending more than that per turn piles up reports (and their messages' copies) in
// node-rdkafka's queue without bound, whatever librdkafka's queue.buffering.max.messages says.
const CHUNK = 40;
const MB = 1024 * 1024;
const BROKERS = args.brokers ?? null;
const PARTITIONS = args.partitions;
const TOPIC = `soak-${Date.now().toString(36)}`;
const GROUP = `${TOPIC}-group`;

const producerOptions = {
  ...(args['max-tracked-keys'] !== undefined ? { maxTrackedKeys: args['max-tracked-keys'] } : {}),
  ...(args['max-queued'] !== undefined ? { maxQueued: args['max-queued'] } : {}),
};
const resequencerOptions = {
  ...(args['max-chains'] !== undefined ? { maxChains: args['max-chains'] } : {}),
  ...(args['max-buffered'] !== undefined ? { maxBufferedMessages: args['max-buffered'] } : {}),
  ...(args['max-wait-ms'] !== undefined ? { maxWaitMs: args['max-wait-ms'] } : {}),
};
const consumerOptions = args['consumer-options'] === undefined ? {} : JSON.parse(args['consumer-options']);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tick = () => new Promise((resolve) => setImmediate(resolve));
const log = (text) => { if (!args.json) process.stderr.write(`${text}\n`); };

/** A topic of `partitions` partitions on the real cluster; resolves when it is created. */
async function createTopic(brokers, partitions) {
  const admin = Kafka.AdminClient.create({ 'bootstrap.servers': brokers, log_level: 3 });
  const replication = Math.min(3, brokers.split(',').length);
  try {
    await new Promise((resolve, reject) => admin.createTopic({ topic: TOPIC, num_partitions: partitions, replication_factor: replication }, 30000,
      (err) => (err ? reject(err) : resolve())));
  } finally {
    admin.disconnect();
  }
}

async function deleteTopic(brokers) {
  const admin = Kafka.AdminClient.create({ 'bootstrap.servers': brokers, log_level: 3 });
  await new Promise((resolve) => admin.deleteTopic(TOPIC, 30000, () => resolve()));
  admin.disconnect();
}

/** The partition count `p` knows for the topic, asking again while the topic is being created. */
async function partitionsOf(p) {
  for (let i = 0; i < 300; i++) {
    await p.refreshMetadata(TOPIC).catch(() => undefined);
    const t = p.metrics().topics[TOPIC];
    if (t && t.partitions > 0) return t.partitions;
    await sleep(50);
  }
  throw new Error(`no partitions known for ${TOPIC}`);
}

function linearSlope(points) {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num2 = 0;
  let den = 0;
  for (const [x, y] of points) {
    num2 += (x - mx) * (y - my);
    den += (x - mx) * (x - mx);
  }
  return den === 0 ? 0 : num2 / den;
}

async function main() {
  let host = null;
  let brokers = BROKERS;
  if (brokers) await createTopic(brokers, PARTITIONS);
  else {
    host = await mockProducer();
    brokers = await brokersOf(host);
  }
  const perProducer = Math.ceil(MESSAGES / PRODUCERS) + CHUNK;
  const checker = new Checker(PRODUCERS, perProducer, KEYS);
  const keyNames = Array.from({ length: KEYS }, (_, i) => `k${i}`);
  const producerConfig = {
    'bootstrap.servers': brokers,
    'enable.idempotence': true,
    'linger.ms': 5,
    'queue.buffering.max.messages': 100000,
    'dr_msg_cb': true,
    'log_level': 3,
  };
  const errors = [];
  const producers = [];
  // Keys each producer reported hot over the run (the moving hot set: several sets of them).
  const hotSeen = [];
  for (let i = 0; i < PRODUCERS; i++) {
    const p = new DynamicProducer(producerConfig, { 'partitioner': 'murmur2_random', 'request.required.acks': -1 }, producerOptions);
    p.on('delivery', (err, report) => checker.delivered(err, report && report.value));
    p.on('error', (err) => errors.push(`producer ${i}: ${err && err.message}`));
    hotSeen.push(new Set());
    p.on('hot', (h) => hotSeen[i].add(String(h.key)));
    await p.connect();
    producers.push(p);
  }
  const partitions = await partitionsOf(producers[0]);
  for (const p of producers.slice(1)) await partitionsOf(p);

  // Consumers: `slots` of the group, each a DynamicConsumer instance (numbered over the run).
  let instances = 0;
  const slots = [];
  const retired = []; // stopped instances: their tables must be empty
  const startConsumer = async () => {
    const instance = instances++;
    const c = new DynamicConsumer({
      'bootstrap.servers': brokers,
      'group.id': GROUP,
      'auto.offset.reset': 'earliest',
      'fetch.wait.max.ms': 20,
      // A member that left is out of the group within this (and a new one joins without waiting 45 s).
      'session.timeout.ms': 6000,
      'heartbeat.interval.ms': 500,
      'log_level': 3,
    }, {}, { ...consumerOptions, resequencer: { ...resequencerOptions, ...consumerOptions.resequencer } });
    c.on('error', (err) => errors.push(`consumer ${instance}: ${err && err.message}`));
    if (checker.traceFile !== undefined) {
      for (const kind of ['assigned', 'revoked']) c.on(kind, (a) => checker.note(`c${instance} ${kind} ${JSON.stringify((a ?? []).map((x) => x.partition ?? x))}`));
    }
    await c.connect();
    const done = c.run([TOPIC], (message, info) => {
      checker.handled(instance, message, info);
      if (gate !== null && checker.sent.reduce((a, b) => a + b, 0) - checker.unique < WINDOW / 2) {
        const open = gate;
        gate = null;
        open();
      }
    }).catch((err) => errors.push(`consumer ${instance}: run: ${err && err.message}`));
    return { c, instance, done, bounds: T.consumerBounds(c, partitions) };
  };
  let gate = null;
  for (let i = 0; i < CONSUMERS; i++) slots.push(await startConsumer());

  const events = [];
  const restartAt = Array.from({ length: RESTARTS }, (_, k) => Math.floor(((k + 1) * MESSAGES) / (RESTARTS + 1)));
  let restarting = Promise.resolve();
  const restart = async (slot, at) => {
    const old = slots[slot];
    const t0 = performance.now();
    await old.c.stop();
    await old.done;
    retired.push(old);
    slots[slot] = await startConsumer();
    const ms = Math.round(performance.now() - t0);
    events.push({ at, ms, text: `consumer ${old.instance} stopped, ${slots[slot].instance} started` });
    log(`  at ${at}: consumer ${old.instance} stopped, consumer ${slots[slot].instance} took its place (${ms} ms)`);
  };

  const producerBounds = producers.map((p) => T.producerBounds(p, producerConfig));
  const samples = [];
  const sent = () => checker.sent.reduce((a, b) => a + b, 0);
  const started = performance.now();
  let lastSample = { at: started, n: 0, handled: 0 };
  const sample = () => {
    const n = sent();
    const at = performance.now();
    const mem = process.memoryUsage();
    let heapAfterGc = null;
    if (typeof global.gc === 'function') {
      global.gc();
      heapAfterGc = process.memoryUsage().heapUsed;
    }
    const s = {
      n, seconds: (at - started) / 1000, handled: checker.unique,
      rate: ((n - lastSample.n) * 1000) / Math.max(1, at - lastSample.at),
      rssMB: mem.rss / MB, heapMB: mem.heapUsed / MB, heapAfterGcMB: heapAfterGc === null ? null : heapAfterGc / MB,
      externalMB: mem.external / MB, arrayBuffersMB: mem.arrayBuffers / MB,
      producers: producers.map((p) => T.producerTables(p)),
      consumers: slots.map((x) => ({ instance: x.instance, ...T.consumerTables(x.c) })),
    };
    s.handledRate = ((checker.unique - lastSample.handled) * 1000) / Math.max(1, at - lastSample.at);
    lastSample = { at, n, handled: checker.unique };
    samples.push(s);
    log(row(s));
    return s;
  };

  // Each producer's own stream; the hot set moves every MOVE_EVERY messages in all (each
  // producer sends its share of them, in turns).
  const shift = Math.max(1, Math.round(MOVE_EVERY / PRODUCERS));
  const streams = producers.map((_, i) => new KeyStream(parseWorkload(`shift:${ZIPF}:${shift}`), KEYS, 0x50a4 + i));
  const seqs = producers.map(() => new Uint32Array(KEYS));
  log(`soak: ${MESSAGES} messages, ${PRODUCERS} producers, ${CONSUMERS} consumers, ${KEYS} keys zipf ${ZIPF}, hot set moving every ${MOVE_EVERY}, ` +
    `${partitions} partitions (${BROKERS ? `cluster ${BROKERS}` : 'mock cluster'}), restarts at ${restartAt.join(', ') || 'none'}, warm-up ${WARMUP}`);
  log(header());
  sample();
  let nextSample = SAMPLE_EVERY;
  let nextRestart = 0;
  while (sent() < MESSAGES) {
    for (let i = 0; i < PRODUCERS && sent() < MESSAGES; i++) {
      const p = producers[i];
      for (let j = 0; j < CHUNK && sent() < MESSAGES; j++) {
        const keyId = streams[i].next();
        if (!p.produce(TOPIC, checker.value(i, keyId, seqs[i][keyId]++), keyNames[keyId])) await new Promise((resolve) => p.once('drain', resolve));
      }
    }
    const n = sent();
    if (n - checker.unique >= WINDOW) {
      // Until the consumers are back within half the window (or a second passed: ask again).
      while (sent() - checker.unique >= WINDOW / 2) await Promise.race([new Promise((resolve) => { gate = resolve; }), sleep(1000)]);
      gate = null;
    } else await tick();
    if (nextRestart < restartAt.length && n >= restartAt[nextRestart]) {
      const at = restartAt[nextRestart];
      restarting = restarting.then(() => restart(nextRestart % CONSUMERS, at));
      nextRestart++;
    }
    if (n >= nextSample) {
      sample();
      nextSample += SAMPLE_EVERY;
    }
  }
  await restarting;
  for (const p of producers) await p.flush(120000);
  // Everything acknowledged handled, nothing held.
  const deadline = Date.now() + 180000;
  const settled = () => checker.unique >= checker.ackedCount && slots.every((x) => x.c.resequencer.held === 0 && T.consumerTables(x.c).queue === 0);
  while (!settled() && Date.now() < deadline) await sleep(100);
  const last = sample();
  const seconds = (performance.now() - started) / 1000;
  for (const x of slots) {
    await x.c.stop();
    await x.done;
  }
  for (const p of producers) await p.disconnect();
  if (host) await disconnect(host);
  if (BROKERS) await deleteTopic(BROKERS).catch(() => undefined);

  // Checks.
  const fig = checker.figures();
  const after = samples.filter((s) => s.n >= WARMUP);
  const maxOf = (list, f) => list.reduce((m, s) => Math.max(m, f(s)), 0);
  const rssMax = maxOf(after, (s) => s.rssMB);
  const heapMax = maxOf(after, (s) => s.heapMB);
  const heapGcMax = typeof global.gc === 'function' ? maxOf(after, (s) => s.heapAfterGcMB) : null;
  const rssSlope = linearSlope(after.map((s) => [s.n / 1e6, s.rssMB]));
  const heapGcSlope = heapGcMax === null ? null : linearSlope(after.map((s) => [s.n / 1e6, s.heapAfterGcMB]));
  const overs = [];
  const tableMax = { producer: {}, consumer: {} };
  for (const s of samples) {
    s.producers.forEach((t, i) => {
      for (const [name, v] of Object.entries(t)) {
        tableMax.producer[name] = Math.max(tableMax.producer[name] ?? 0, v);
        if (v > producerBounds[i][name] && overs.length < 10) overs.push(`producer ${i} ${name} ${v} > ${producerBounds[i][name]} at ${s.n}`);
      }
    });
    for (const t of s.consumers) {
      const bounds = [...slots, ...retired].find((x) => x.instance === t.instance).bounds;
      for (const [name, v] of Object.entries(t)) {
        if (name === 'instance') continue;
        tableMax.consumer[name] = Math.max(tableMax.consumer[name] ?? 0, v);
        if (bounds[name] !== null && v > bounds[name] && overs.length < 10) overs.push(`consumer ${t.instance} ${name} ${v} > ${bounds[name]} at ${s.n}`);
      }
    }
  }
  // heldOrder (each held message in arrival order; released ones are dropped from its head
  // only) has no bound in messages: an entry stays at most until every message held before it
  // went, at the latest maxWaitMs after it came (plus one expiry interval, 1 s). So it holds
  // at most the messages handled in that time (at the fastest rate of the run) plus those held.
  const peakRate = Math.max(...samples.map((s) => s.handledRate));
  const heldOrderBound = (bounds, wait) => Math.ceil(bounds.held + (peakRate * (wait + 1000)) / 1000);
  let heldOrderPeak = 0;
  for (const s of samples) {
    for (const t of s.consumers) {
      const x = [...slots, ...retired].find((y) => y.instance === t.instance);
      heldOrderPeak = Math.max(heldOrderPeak, t.heldOrder);
      const bound = heldOrderBound(x.bounds, x.c.resequencer.options.maxWaitMs);
      if (t.heldOrder > bound && overs.length < 10) overs.push(`consumer ${t.instance} heldOrder ${t.heldOrder} > ${bound} at ${s.n}`);
    }
  }
  const checks = [
    [`RSS after warm-up at most ${RSS_MB} MB`, rssMax <= RSS_MB, `${rssMax.toFixed(1)} MB`],
    [`heap used after warm-up at most ${HEAP_MB} MB`, heapMax <= HEAP_MB, `${heapMax.toFixed(1)} MB`],
    [`RSS slope after warm-up at most ${RSS_SLOPE} MB per million messages`, rssSlope <= RSS_SLOPE, `${rssSlope.toFixed(2)} MB/M`],
    ['every table within its bound from the options', overs.length === 0, overs.join('; ') || `all within (resequencer heldOrder peak ${heldOrderPeak}, bound maxBufferedMessages + ${Math.round(peakRate)} msg/s x (maxWaitMs + 1 s))`],
    ['every message sent acknowledged', fig.acked === MESSAGES && fig.failed === 0, `${fig.acked} acknowledged, ${fig.failed} failed`],
    ['nothing lost', fig.lost === 0, `${fig.lost}`],
    ['duplicates only re-reads by another consumer', fig.badDuplicates === 0, `${fig.duplicated} (${fig.rereads} re-reads)`],
    ['no order violation without a flag', fig.orderViolations === 0, `${fig.orderViolations} (${fig.explainedByFlag} explained by a flag)`],
    ['no message that was not sent', fig.foreign === 0, `${fig.foreign}`],
    ['no error events', errors.length === 0, errors.slice(0, 3).join('; ') || 'none'],
    ['stopped consumers left nothing held', retired.every((x) => x.c.resequencer.held === 0), retired.map((x) => x.c.resequencer.held).join(',')],
  ];
  const ok = checks.every((c) => c[1]);
  const line = `soak: ${MESSAGES} messages, rss max ${rssMax.toFixed(0)} MB after warm-up (bound ${RSS_MB}), ` +
    `heap max ${heapMax.toFixed(0)} MB (bound ${HEAP_MB})${heapGcMax === null ? '' : `, ${heapGcMax.toFixed(0)} MB after gc`}, ` +
    `tables ${overs.length === 0 ? 'within bounds' : 'OVER BOUNDS'}, lost ${fig.lost} dup ${fig.duplicated} order violations ${fig.orderViolations}`;
  const result = {
    config: {
      messages: MESSAGES, producers: PRODUCERS, consumers: CONSUMERS, keys: KEYS, zipf: ZIPF, moveEvery: MOVE_EVERY, restarts: restartAt,
      sampleEvery: SAMPLE_EVERY, warmup: WARMUP, window: WINDOW, partitions, cluster: BROKERS ?? 'mock', producerOptions, resequencerOptions, consumerOptions,
      rssBoundMB: RSS_MB, heapBoundMB: HEAP_MB, rssSlopeBound: RSS_SLOPE, gc: typeof global.gc === 'function',
    },
    bounds: { producers: producerBounds, consumers: [...slots, ...retired].map((x) => ({ instance: x.instance, ...x.bounds })) },
    seconds, rate: MESSAGES / seconds, rssMaxMB: rssMax, heapMaxMB: heapMax, heapAfterGcMaxMB: heapGcMax, rssSlopeMBPerM: rssSlope,
    heapAfterGcSlopeMBPerM: heapGcSlope, tableMax, figures: fig, errors, events,
    hotKeysSeen: hotSeen.map((set) => set.size), hotKeysSeenByAll: [...hotSeen[0]].filter((k) => hotSeen.every((set) => set.has(k))).length,
    retired: retired.map((x) => ({ instance: x.instance, ...T.consumerTables(x.c) })),
    checks: checks.map(([name, pass, detail]) => ({ name, pass, detail })), ok, line, samples,
  };
  if (args.svg) {
    const points = (f) => samples.filter((s) => f(s) !== null).map((s) => [s.n / 1e6, f(s)]);
    const series = [
      { name: 'RSS (MB)', color: '#d62728', points: points((s) => s.rssMB) },
      { name: 'heap used (MB)', color: '#1f77b4', points: points((s) => s.heapMB) },
      ...(heapGcMax === null ? [] : [{ name: 'heap after gc (MB)', color: '#2ca02c', points: points((s) => s.heapAfterGcMB) }]),
    ];
    const marks = [{ at: WARMUP / 1e6, label: 'warm-up' }, ...events.map((e) => ({ at: e.at / 1e6, label: 'restart' }))];
    fs.writeFileSync(args.svg, lagChart(series, `soak: ${MESSAGES} messages (${BROKERS ? 'cluster' : 'mock cluster'})`, marks,
      { x: 'messages sent (millions)', y: 'MB' }));
  }
  if (args.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    log(`\n${fig.handled} handled in ${seconds.toFixed(0)} s (${Math.round(MESSAGES / seconds)} msg/s); flagged ${fig.flagged} ${JSON.stringify(fig.flaggedReasons)}; ` +
      `violations ${fig.violations} (${fig.explainedByFlag} explained by a flag); RSS slope ${rssSlope.toFixed(2)} MB/M` +
      `${heapGcSlope === null ? '' : `, heap-after-gc slope ${heapGcSlope.toFixed(2)} MB/M`}`);
    log(`table peaks: producer ${JSON.stringify(tableMax.producer)}; consumer ${JSON.stringify(tableMax.consumer)}`);
    for (const [name, pass, detail] of checks) log(`  ${pass ? 'ok  ' : 'FAIL'} ${name}: ${detail}`);
    for (const [kind, list] of Object.entries(fig.examples)) for (const e of list) log(`  ${kind}: ${e}`);
    console.log(line);
  }
  void last;
  process.exitCode = ok ? 0 : 1;
}

const COLUMNS = [
  ['messages', (s) => s.n],
  ['s', (s) => s.seconds.toFixed(0)],
  ['msg/s', (s) => Math.round(s.rate)],
  ['rss MB', (s) => s.rssMB.toFixed(1)],
  ['heap MB', (s) => s.heapMB.toFixed(1)],
  ['gc\'d MB', (s) => (s.heapAfterGcMB === null ? '-' : s.heapAfterGcMB.toFixed(1))],
  ['tracked', (s) => Math.max(...s.producers.map((p) => p.trackedKeys))],
  ['hot', (s) => Math.max(...s.producers.map((p) => p.hotKeys))],
  ['p.chains', (s) => Math.max(...s.producers.map((p) => p.orderChains))],
  ['inflight', (s) => Math.max(...s.producers.map((p) => p.inflight))],
  ['p.held', (s) => Math.max(...s.producers.map((p) => p.held))],
  ['handoff', (s) => Math.max(...s.producers.map((p) => p.handoffKeys))],
  ['c.held', (s) => Math.max(...s.consumers.map((c) => c.held))],
  ['c.chains', (s) => Math.max(...s.consumers.map((c) => c.chains))],
  ['lanes', (s) => Math.max(...s.consumers.map((c) => c.lanes))],
  ['awaited', (s) => Math.max(...s.consumers.map((c) => c.awaited))],
  ['queue', (s) => Math.max(...s.consumers.map((c) => c.queue))],
  ['heldOrder', (s) => Math.max(...s.consumers.map((c) => c.heldOrder))],
];

function header() {
  return COLUMNS.map(([name]) => name.padStart(9)).join(' ');
}

function row(s) {
  return COLUMNS.map(([, f]) => String(f(s)).padStart(9)).join(' ');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
