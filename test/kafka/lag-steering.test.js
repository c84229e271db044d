'use strict';
// Lag steering on the real cluster: a DynamicProducer sends a hot key (40% of the traffic)
// over Zipf background keys (draws and key names seeded: every run places the keys alike),
// with a LagMonitor (intervalMs 500) attached for the consumer group that reads the topic.
// The group's consumer (a plain node-rdkafka consumer, assigned every partition, committing
// what it read after every batch) keeps up at first.
//
// The monitor's own lag reads drive the run, not the clock. The penalties read i sets are in
// force from its 'lag' event to the next read's: the messages produced in between (counted as
// their keys are drawn) are window i, measured by the partitions their delivery reports name.
// A read is clean when it finds every partition's lag 0: no partition carries a penalty.
//   - healthy: at the first read from WARMUP_READS on that ends STREAK clean reads in a row,
//     the consumer falls behind on one partition X: it commits X at 100 msg/s only, far below
//     what X receives. The STREAK - 1 windows between those clean reads are "before";
//   - slow: at the SLOW_READS-th read that finds X lagging, the consumer catches up (commits
//     X as far as it read);
//   - back: BACK_READS reads after the first that finds X's lag 0 again, production stops.
// Every phase has a cap in reads (HEALTHY_MAX_READS, SLOW_MAX_READS, CATCHUP_MAX_READS): past
// it the run ends, and the assertion that needed the phase fails saying so. Asserted:
//   - precondition: the clean streak within HEALTHY_MAX_READS reads (else the consumer never
//     kept up, and a lagging X would make "before" meaningless);
//   - before: in those windows, the hot key takes a large share (> 0.2) of X's messages;
//   - within SETTLE_READS reads after the first that finds X lagging, that share falls below
//     half of "before" and stays below in every window up to the catch-up's; pooled over the
//     windows after that bound it stays below a third of "before";
//   - after the catch-up, the hot key comes back to X (above half of "before") in one of the
//     BACK_READS windows from the first read that finds X's lag 0 again;
//   - cold keys never move: every message of a key never reported hot is on
//     partitionForKeys(keys, n, 'murmur2_random'), X included.
// Every window is printed, failing or not (its read's phase, clean or not, lag of X and of any
// partition, penalty of X; its messages, those on X, the hot key's share of X and its messages
// per partition), with the bounds and how close the run came to each.
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
const INTERVAL_MS = 500; // the LagMonitor's reads
const WARMUP_READS = 10; // the slowdown starts at this read of the run at the earliest,
const STREAK = 5; // at the first read that ends this many clean reads in a row,
const HEALTHY_MAX_READS = 120; // within this many reads (else the precondition fails)
const SLOW_READS = 16; // reads that find X lagging before the catch-up
const SLOW_MAX_READS = 40; // reads of the slow phase at most
const SETTLE_READS = 6; // the hot key's share of X falls within this many reads after the first finding X lagging
const BACK_READS = 6; // windows after X's lag is back to 0 in which the hot key must come back to X
const CATCHUP_MAX_READS = 20; // reads after the catch-up within which X's lag must be back to 0
const SLOW_RATE = 100; // msg/s the slowed consumer gets through on X
// At most (lag reads late or missing): 1.5 times the longest run the phases allow.
const MESSAGES = Math.ceil((RATE * 1.5 * (HEALTHY_MAX_READS + SLOW_MAX_READS + CATCHUP_MAX_READS + BACK_READS + 2) * INTERVAL_MS) / 1000);

t.test('a lagging partition: the hot key moves off it within a few lag reads, cold keys stay', { ...K.needsCluster(), timeout: 300000 }, async (t) => {
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

  const monitor = new LagMonitor({ 'bootstrap.servers': K.brokers(), 'log_level': 3 }, { groupId: group, topics: [topic], intervalMs: INTERVAL_MS });
  const monitorErrors = [];
  monitor.on('error', (err) => monitorErrors.push(err));
  await monitor.start();

  // Every lag read of the run: messages produced before it, its lags of the topic, X's penalty
  // it left, the phase it was read in. The phases move on here, read by read.
  const reads = [];
  let producer = null;
  let hotKey = '';
  let produced = 0; // messages handed to the producer so far
  let phase = ''; // '' before the run, then 'healthy', 'slow', 'back', 'done'
  let cleanRun = 0; // clean reads in a row
  let slowFrom = -1; // the read at which the consumer fell behind on X
  let firstLag = -1; // the first read finding X lagging after that
  let lagging = 0; // reads finding X lagging since slowFrom
  let slowTo = -1; // the read at which it caught up
  let caught = -1; // the first read after slowTo finding X's lag 0
  let ended = ''; // why the run ended early, if it did
  monitor.on('lag', (lag) => {
    if (phase === '' || phase === 'done' || !lag[topic]) return;
    const lags = lag[topic].slice();
    const i = reads.length;
    const clean = lags.every((l) => l === 0);
    reads.push({ sent: produced, lags, clean, phase, penaltyX: producer.partitioner.stats().topics[topic]?.penalty[X] ?? 0 });
    if (phase === 'healthy') {
      cleanRun = clean ? cleanRun + 1 : 0;
      if (i >= WARMUP_READS && cleanRun >= STREAK) {
        phase = 'slow';
        slowed = true;
        slowFrom = i;
      } else if (i + 1 >= HEALTHY_MAX_READS) {
        phase = 'done';
        ended = `no ${STREAK} clean reads in a row within ${HEALTHY_MAX_READS} reads`;
      }
    } else if (phase === 'slow') {
      if (lags[X] > 0 && ++lagging === 1) firstLag = i;
      if (lagging >= SLOW_READS || i - slowFrom >= SLOW_MAX_READS) {
        phase = 'back';
        slowed = false;
        slowTo = i;
        if (lagging < SLOW_READS) ended = `only ${lagging} of ${SLOW_MAX_READS} reads of the slow phase found X lagging`;
      }
    } else if (phase === 'back') {
      if (caught < 0 && lags[X] === 0) caught = i;
      if (caught >= 0 && i >= caught + BACK_READS) phase = 'done';
      else if (caught < 0 && i - slowTo >= CATCHUP_MAX_READS) {
        phase = 'done';
        ended = `X's lag not back to 0 within ${CATCHUP_MAX_READS} reads of the catch-up`;
      }
    }
  });

  let run = null;
  try {
    run = await H.produceHot(topic, MESSAGES, {
      // A function of the message id, called as each message's key is drawn (just before it is
      // produced): it counts the messages produced, for the windows. Always 0.4.
      hotShare: (id) => {
        produced = id + 1;
        return 0.4;
      },
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
        phase = 'healthy';
      },
      stop: () => phase === 'done',
    });
  } finally {
    phase = 'done';
    slowed = false;
    await K.sleep(300);
    reading = false;
    await readLoop;
    await K.disconnected(reader);
    // Stopped right after a read, so that no read is under way when its client disconnects.
    await H.within(once(monitor, 'lag'), 5000);
    await monitor.stop();
  }
  if (!ended && run.sent >= MESSAGES) ended = `all ${MESSAGES} messages produced before the phases ended (lag reads late?)`;

  // Window i: the messages produced from read i to read i + 1 (to the end of production for the last).
  const windows = reads.map((r, i) => {
    const w = { ...r, messages: 0, onX: 0, hotOnX: 0, hot: new Array(PARTITIONS).fill(0) };
    const to = i + 1 < reads.length ? reads[i + 1].sent : run.sent;
    for (let id = r.sent; id < to; id++) {
      const p = run.partitionOf[id];
      if (p < 0) continue;
      w.messages++;
      const isHot = run.keyOf[id] === run.hotId;
      if (isHot) w.hot[p]++;
      if (p === X) {
        w.onX++;
        if (isHot) w.hotOnX++;
      }
    }
    return w;
  });
  const share = (w) => (w && w.onX > 0 ? w.hotOnX / w.onX : 0);
  const pooled = (from, to) => {
    let on = 0;
    let hot = 0;
    for (let i = Math.max(0, from); i < Math.min(to, windows.length); i++) {
      on += windows[i].onX;
      hot += windows[i].hotOnX;
    }
    return on > 0 ? hot / on : 0;
  };
  const healthy = slowFrom >= 0;
  const beforeFrom = slowFrom - (STREAK - 1); // the windows between the streak's clean reads
  const before = healthy ? pooled(beforeFrom, slowFrom) : 0;
  // The share's fall: the first window of the last stretch below half of "before" up to the
  // catch-up (none when the share is not below half in the catch-up's window itself).
  let fellAt = -1;
  for (let i = slowTo; firstLag >= 0 && i >= firstLag && share(windows[i]) < before / 2; i--) fellAt = i;
  const settled = firstLag + SETTLE_READS; // the last window in which the share may fall
  const during = pooled(settled + 1, slowTo + 1);
  let duringMax = 0;
  for (let i = settled + 1; firstLag >= 0 && i <= slowTo; i++) duringMax = Math.max(duringMax, share(windows[i]));
  let backAt = -1;
  let backMax = 0;
  for (let i = caught; caught >= 0 && i < Math.min(caught + BACK_READS, windows.length); i++) {
    backMax = Math.max(backMax, share(windows[i]));
    if (backAt < 0 && share(windows[i]) > before / 2) backAt = i;
  }

  // The whole run, window by window, failing or not: a failure says which bound was missed and where.
  t.comment(`topic ${topic}: ${PARTITIONS} partitions; hot key ${hotKey}, X = partition ${X}; ${run.sent} messages at ${RATE} msg/s in ${run.producedMs} ms; ` +
    `${reads.length} lag reads; ${run.hot.ever.size} keys hot at times`);
  t.comment(`reads: slowdown at ${slowFrom} (at the latest ${HEALTHY_MAX_READS - 1}), X first lagging at ${firstLag}, catch-up at ${slowTo}, ` +
    `X's lag 0 again at ${caught}${ended ? `; the run ended early: ${ended}` : ''}`);
  t.comment('window: phase | clean | lag of X | of any partition | penalty of X | messages | on X | hot key share of X | hot key messages per partition');
  windows.forEach((w, i) => {
    const mark = [i >= beforeFrom && i < slowFrom && 'before', i === firstLag && 'X lagging', i === fellAt && 'fell', i === settled && 'settle bound',
      i === caught && 'X caught up', i === backAt && 'back'].filter(Boolean).join(', ');
    t.comment(`${String(i).padStart(6)}: ${w.phase.padEnd(7)} | ${w.clean ? 'clean' : '     '} | ${String(w.lags[X]).padStart(6)} | ${String(Math.max(...w.lags)).padStart(6)} | ` +
      `${w.penaltyX.toFixed(2).padStart(5)} | ${String(w.messages).padStart(5)} | ${String(w.onX).padStart(5)} | ${share(w).toFixed(3)} | ${w.hot.join(' ')}${mark ? ` | ${mark}` : ''}`);
  });
  t.comment(`hot key share of X: ${before.toFixed(3)} before (bound 0.2); below half (${(before / 2).toFixed(3)}) from ${fellAt >= 0 ? `${fellAt - firstLag} reads` : 'never'} ` +
    `after X first lagged (bound ${SETTLE_READS}); then ${during.toFixed(3)} pooled (bound ${(before / 3).toFixed(3)}), ${duringMax.toFixed(3)} at most in a window; ` +
    `above half again ${backAt >= 0 ? `${backAt - caught} reads` : 'never'} after X's lag was 0 (bound ${BACK_READS - 1}), ${backMax.toFixed(3)} at most`);

  t.equal(run.errors.length, 0, 'no delivery errors');
  t.same(monitorErrors.map(String), [], 'no LagMonitor errors');
  t.ok(X >= 0, `partition X chosen (${X})`);
  const reached = t.ok(healthy, `precondition: ${STREAK} clean lag reads in a row (no partition lagging) before the slowdown` +
    (healthy ? ` (ending at read ${slowFrom})` : `: ${ended}: the consumer did not keep up, so the share "before" would not be a healthy X's`));
  if (reached) {
    t.ok(before > 0.2, `before the slowdown the hot key takes a large share of X (${before.toFixed(3)} in windows ${beforeFrom} to ${slowFrom - 1})`);
    t.ok(lagging >= SLOW_READS, `the slowed consumer leaves X lagging (${lagging} reads of ${slowFrom + 1} to ${slowTo}, the first at ${firstLag})`);
    t.ok(fellAt >= 0 && fellAt <= settled, `within ${SETTLE_READS} reads after the first finding X lagging (${firstLag}) the hot key's share of X falls below half ` +
      `of "before" and stays there to the catch-up (${fellAt >= 0 ? `from window ${fellAt}` : `not in window ${slowTo}: ${share(windows[slowTo]).toFixed(3)}`})`);
    t.ok(settled < slowTo && during < before / 3, `while X lags, the hot key's share of X stays low (windows ${settled + 1} to ${slowTo}: ${during.toFixed(3)} < ${(before / 3).toFixed(3)})`);
    t.ok(caught >= 0, `X's lag is back to 0 after the catch-up (at read ${caught}, the catch-up at ${slowTo})`);
    t.ok(backAt >= 0, `within ${BACK_READS} windows from there the hot key comes back to X above half of "before" ` +
      `(${backAt >= 0 ? `${share(windows[backAt]).toFixed(3)} in window ${backAt}` : `at most ${backMax.toFixed(3)}`})`);
  }

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
