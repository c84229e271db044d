'use strict';
// Lag steering on the real cluster: a DynamicProducer sends a hot key (40% of the traffic)
// over Zipf background keys (draws and key names seeded: every run places the keys alike),
// with a LagMonitor (intervalMs 500) attached for the consumer group that reads the topic.
// The group's consumer (a plain node-rdkafka consumer, assigned every partition, committing
// what it read after every batch) keeps up at first. A second of the run is healthy when
// every lag read in force during it (the last one before it and those within it) found every
// partition's lag 0, so that no partition carried a penalty. The healthy phase lasts
// HEALTHY_S seconds or more, until CLEAN_S seconds of it were healthy (HEALTHY_MAX_S at most).
// Then the consumer falls behind on one partition X for SLOW_S seconds: it commits X at
// 100 msg/s only, far below what X receives. Then it catches up.
//   - precondition: CLEAN_S healthy seconds before the slowdown (if the consumer never kept
//     up that long, the test fails here: a lagging X would make "before" meaningless);
//   - before: over the last CLEAN_S healthy seconds, the hot key takes a large share of X's messages;
//   - within SETTLE_MS of the slowdown that share falls below half of it, and stays low while
//     X lags;
//   - after the catch-up, the hot key comes back to X;
//   - cold keys never move: every message of a key never reported hot is on
//     partitionForKey(key, n, 'murmur2_random'), X included.
//
// Needs KAFKA_BROKERS (npm run test:kafka).

const { once } = require('node:events');
const t = require('tap');
const Kafka = require('node-rdkafka');
const K = require('./lib/kafka');
const H = require('./lib/hot-key');
const { LagMonitor, allowedPartitions, partitionForKeys } = require('../..');

const RATE = 6000;
const SEED = 0x1a9;
const PARTITIONS = 6;
const HEALTHY_S = 5; // the slowdown starts this many seconds into the run at the earliest,
const CLEAN_S = 3; // once this many of its seconds were healthy (no partition lagging),
const HEALTHY_MAX_S = 30; // or after this many seconds at the latest (then the precondition fails)
const SLOW_S = 8; // seconds X lags
const RECOVERED_S = 5; // seconds after the catch-up
const MESSAGES = RATE * (HEALTHY_MAX_S + SLOW_S + RECOVERED_S); // at most: production stops RECOVERED_S after the catch-up
const SLOW_RATE = 100; // msg/s the slowed consumer gets through on X
const SETTLE_MS = 3000; // the hot key's share of X halves within this long after the slowdown

t.test('a lagging partition: the hot key moves off it within seconds, cold keys stay', { ...K.needsCluster(), timeout: 300000 }, async (t) => {
  const total = K.lap();
  const topic = K.topicName('lag');
  const group = `${topic}-group`;
  const replication = Math.min(3, K.brokers().split(',').length);
  await K.createTopic(topic, PARTITIONS, replication, { 'min.insync.replicas': String(Math.min(2, replication)) });

  // The group's consumer: every partition from offset 0; commits after every batch, X slowly while slowed.
  const reader = await K.connected(new Kafka.KafkaConsumer({
    'bootstrap.servers': K.brokers(),
    'group.id': group,
    'enable.auto.commit': false,
    'fetch.wait.max.ms': 50,
    'log_level': 3,
  }, { 'auto.offset.reset': 'earliest' }));
  // A batch ends after 10 ms without a message: what arrived is committed within milliseconds.
  reader.setDefaultConsumeTimeout(10);
  reader.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: 0 })));
  const next = new Array(PARTITIONS).fill(0); // the next offset to read, per partition
  let X = -1;
  let slowed = false;
  let xDone = 0; // what the slowed consumer got through on X
  let reading = true;
  let lastCommit = Date.now();
  const commit = () => {
    const now = Date.now();
    if (X >= 0) xDone = slowed ? Math.min(next[X], xDone + (SLOW_RATE * (now - lastCommit)) / 1000) : next[X];
    lastCommit = now;
    const offsets = next.map((offset, partition) => ({ topic, partition, offset: partition === X ? Math.floor(xDone) : offset })).filter((o) => o.offset > 0);
    if (offsets.length > 0) reader.commit(offsets);
  };
  const readLoop = (async () => {
    while (reading) {
      const batch = await new Promise((resolve, reject) => reader.consume(1000, (err, m) => (err ? reject(err) : resolve(m))));
      for (const m of batch) next[m.partition] = m.offset + 1;
      if (batch.length > 0) commit();
    }
  })();

  const monitor = new LagMonitor({ 'bootstrap.servers': K.brokers(), 'log_level': 3 }, { groupId: group, topics: [topic], intervalMs: 500 });
  const monitorErrors = [];
  monitor.on('error', (err) => monitorErrors.push(err));
  await monitor.start();

  // Per second of the run: messages on X, the hot key's among them, the hot key's per partition;
  // the largest lag of X and of any partition, and penalty of X, that the lag reads in it found.
  const seconds = [];
  const second = (s) => seconds[s] ?? (seconds[s] = { onX: 0, hotOnX: 0, hot: new Array(PARTITIONS).fill(0), lagX: 0, lagMax: 0, penaltyX: 0 });
  const reads = []; // every lag read of the run: when (ms into it), and whether it found every partition's lag 0
  let started = 0;
  let producer = null;
  let hotKey = '';
  let slowSent = -1; // messages sent when the slowdown began
  let slowFrom = -1;
  let slowTo = -1;
  monitor.on('lag', (lag) => {
    if (!started || X < 0 || !lag[topic]) return;
    const at = Date.now() - started;
    reads.push({ at, clean: lag[topic].every((l) => l === 0) });
    const s = second(Math.floor(at / 1000));
    s.lagX = Math.max(s.lagX, lag[topic][X]);
    s.lagMax = Math.max(s.lagMax, ...lag[topic]);
    s.penaltyX = Math.max(s.penaltyX, producer.partitioner.stats().topics[topic]?.penalty[X] ?? 0);
  });
  // Second i is healthy when the read in force as it began and every read within it found no
  // partition lagging: no penalty steered the hot key at any moment of it.
  const healthy = (i) => {
    const last = reads.filter((r) => r.at < i * 1000).pop();
    return last !== undefined && last.clean && reads.every((r) => r.at < i * 1000 || r.at >= (i + 1) * 1000 || r.clean);
  };
  let healthySeconds = []; // the healthy seconds before the slowdown
  const run = await H.produceHot(topic, MESSAGES, {
    hotShare: 0.4,
    ratePerSec: RATE,
    seed: SEED,
    // Key names from the seed too: with names drawn at random, the placement of the background
    // keys changes from run to run, and with it the hot key's share of X in a healthy phase
    // (0.25 to 0.55 over 10 s across placements; for some, below 0.2 over 3 s without any lag).
    salt: SEED.toString(16),
    // Split hot keys steered by penalties (relocated keys also leave a penalized partition,
    // which leaves the split key a larger share of what X still gets: another measure).
    producerOptions: { relocate: false },
    onConnect: (p, { keys, hotId }) => {
      producer = p;
      hotKey = keys[hotId];
      // X: the second partition of the hot key's sequence (not its home, where anchors go).
      X = allowedPartitions(hotKey, PARTITIONS, 2, 'murmur2_random')[1];
      monitor.attach(p);
      started = Date.now();
    },
    onDelivery: (v, report) => {
      const s = second(Math.floor((Date.now() - started) / 1000));
      const isHot = report.key !== null && String(report.key) === hotKey;
      if (isHot) s.hot[report.partition]++;
      if (report.partition === X) {
        s.onX++;
        if (isHot) s.hotOnX++;
      }
    },
    onProgress: (sent) => {
      const now = Date.now() - started;
      if (slowSent < 0) {
        // Seconds 0 .. over-1 are over (the current one, if the slowdown starts in it, counts for no phase).
        const over = Math.floor(now / 1000);
        healthySeconds = Array.from({ length: over }, (_, i) => i).filter(healthy);
        if ((now >= HEALTHY_S * 1000 && healthySeconds.length >= CLEAN_S) || now >= HEALTHY_MAX_S * 1000) {
          slowed = true;
          slowSent = sent;
          slowFrom = Math.ceil(now / 1000);
        }
      } else if (slowed && sent >= slowSent + RATE * SLOW_S) {
        slowed = false;
        slowTo = Math.floor(now / 1000);
      }
    },
    stop: (sent) => slowSent >= 0 && sent >= slowSent + RATE * (SLOW_S + RECOVERED_S),
  });
  await K.sleep(300);
  reading = false;
  await readLoop;
  await K.disconnected(reader);
  // Stopped right after a read, so that no read is under way when its client disconnects.
  await H.within(once(monitor, 'lag'), 5000);
  await monitor.stop();
  t.comment(`topic ${topic}: ${PARTITIONS} partitions; hot key ${hotKey}, X = partition ${X}; slowed from second ${slowFrom} to ${slowTo}`);
  t.comment(`produced ${run.sent} at ${RATE} msg/s in ${run.producedMs} ms; ${run.hot.ever.size} keys hot at times`);

  const share = (s) => (s && s.onX > 0 ? s.hotOnX / s.onX : 0);
  t.comment('second: hot key share of X | lag of X | of any partition | penalty of X | hot key messages per partition | healthy');
  seconds.forEach((s, i) => t.comment(`${String(i).padStart(6)}: ${share(s).toFixed(3)} | ${String(s.lagX).padStart(6)} | ${String(s.lagMax).padStart(6)} | ${s.penaltyX.toFixed(2).padStart(5)} | ${s.hot.join(' ')}${healthySeconds.includes(i) ? ' | healthy' : ''}`));

  const pooled = (list) => {
    let on = 0;
    let hot = 0;
    for (const i of list) if (seconds[i]) { on += seconds[i].onX; hot += seconds[i].hotOnX; }
    return on > 0 ? hot / on : 0;
  };
  const mean = (from, to) => pooled(Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k));
  const beforeSeconds = healthySeconds.slice(-CLEAN_S);
  const before = pooled(beforeSeconds);
  let fellAt = -1;
  for (let i = slowFrom; i < slowTo && fellAt < 0; i++) if (share(seconds[i]) < before / 2) fellAt = i;
  const settle = Math.ceil(SETTLE_MS / 1000);
  const during = mean(slowFrom + settle, slowTo);
  let back = 0;
  for (let i = slowTo; i < seconds.length; i++) back = Math.max(back, share(seconds[i]));
  t.comment(`healthy seconds before the slowdown: ${healthySeconds.join(', ') || 'none'}; "before" is over ${beforeSeconds.join(', ') || 'none'}`);
  t.comment(`hot key share of X: ${before.toFixed(3)} before, ${during.toFixed(3)} from ${settle} s after the slowdown on; below half within ${fellAt - slowFrom} s; up to ${back.toFixed(3)} after the catch-up`);

  t.equal(run.errors.length, 0, 'no delivery errors');
  t.same(monitorErrors.map(String), [], 'no LagMonitor errors');
  t.ok(X >= 0, `partition X chosen (${X})`);
  t.ok(healthySeconds.length >= CLEAN_S, `precondition: ${CLEAN_S} healthy seconds (no partition lagging) before the slowdown at second ${slowFrom}, found ${healthySeconds.length}` +
    (healthySeconds.length >= CLEAN_S ? '' : `: the consumer did not keep up within ${HEALTHY_MAX_S} s, so the share "before" would not be a healthy X's`));
  t.ok(before > 0.2, `before the slowdown the hot key takes a large share of X (${before.toFixed(3)})`);
  t.ok(fellAt >= 0 && (fellAt - slowFrom) * 1000 <= SETTLE_MS, `within ${SETTLE_MS} ms of the slowdown its share of X is below half (at second ${fellAt}, the slowdown at ${slowFrom})`);
  t.ok(during < before / 3, `while X lags, the hot key's share of X stays low (${during.toFixed(3)} < ${(before / 3).toFixed(3)})`);
  t.ok(back > before / 2, `after the catch-up the hot key comes back to X (${back.toFixed(3)})`);

  // Cold keys: never moved.
  const home = partitionForKeys(run.keys, PARTITIONS, 'murmur2_random');
  let cold = 0;
  let coldOnX = 0;
  const moved = [];
  for (let id = 0; id < run.sent; id++) {
    const k = run.keyOf[id];
    if (run.hot.wasHot(run.keys[k])) continue;
    cold++;
    if (run.partitionOf[id] === X) coldOnX++;
    if (run.partitionOf[id] !== home[k] && moved.length < 5) moved.push(`message ${id} of ${run.keys[k]} on ${run.partitionOf[id]}, its partition is ${home[k]}`);
  }
  t.same(moved, [], `every message of a never-hot key on its hashed partition (${cold} messages, ${coldOnX} of them on X)`);
  t.comment(`lag-steering: ${total()} ms`);
});
