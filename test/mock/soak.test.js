'use strict';
// A shortened soak (bench/soak.js, `npm run soak` runs the full one) on librdkafka's mock
// cluster: two DynamicProducers and two DynamicConsumers, a Zipf stream whose hot set moves
// every 100,000 messages, one consumer restarted part-way. The figures come from the soak's
// JSON; the bounds asserted here are the options this file passes (and the library's
// documented defaults for the rest), not what the soak reports of itself.
//
// Asserted: every table of every producer and consumer, in every sample, within its bound;
// every message acknowledged and handled, duplicates only re-reads by another consumer
// instance, no order violation that no flag explains; the run did what a soak needs (the hot
// set moved, both producers spread the same keys, the restart happened, chains were followed);
// memory after warm-up does not grow with the messages (RSS at the end within 1.5x of RSS at
// the end of warm-up, plus 64 MB; heap after a full collection within 2x plus 16 MB).
const t = require('tap');
const path = require('node:path');
const { execFile } = require('node:child_process');

const MESSAGES = 400_000;
const MOVE_EVERY = 100_000;
const WARMUP = 100_000;
const MAX_TRACKED_KEYS = 512;
const MAX_QUEUED = 20_000;
const MAX_CHAINS = 5_000;
const MAX_BUFFERED = 4_000;
// Library defaults (docs/options: maxTopics 64, maxBufferedBytes 64 MiB) and the soak's own
// librdkafka configuration (queue.buffering.max.messages 100,000); the mock cluster's topics have 4 partitions.
const MAX_TOPICS = 64;
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
const LIBRDKAFKA_QUEUE = 100_000;
const PARTITIONS = 4;
// The tracked-key table grows with the topics with state: maxTrackedKeys for up to 16, doubled as
// they pass 16, 32, ... up to maxTopics (README, maxTrackedKeys); the order chains and handoffs are
// sized for its largest. The producer keeps counts for 16 x maxTopics topics, at least 1,024.
function trackedBound(maxTrackedKeys, maxTopics) {
  let scale = 1;
  for (let topics = 16; topics < maxTopics; topics *= 2) scale *= 2;
  return maxTrackedKeys * scale;
}
const TRACKED_BOUND = trackedBound(MAX_TRACKED_KEYS, MAX_TOPICS);
const PRODUCER_TOPICS = Math.max(1024, 16 * MAX_TOPICS);

function runSoak() {
  const script = path.join(__dirname, '..', '..', 'bench', 'soak.js');
  const argv = ['--expose-gc', script, `--messages=${MESSAGES}`, `--move-every=${MOVE_EVERY}`, `--warmup=${WARMUP}`, '--sample-every=20000',
    '--restarts=1', '--max-wait-ms=5000', `--max-tracked-keys=${MAX_TRACKED_KEYS}`, `--max-queued=${MAX_QUEUED}`,
    `--max-chains=${MAX_CHAINS}`, `--max-buffered=${MAX_BUFFERED}`, '--json'];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, argv, { maxBuffer: 64 * 1024 * 1024, timeout: 240_000 }, (err, stdout, stderr) => {
      // Exit code 1 is a failed check of the soak's own: the assertions below say which.
      if (err && err.code !== 1) return reject(new Error(`soak failed: ${err.message}\n${stderr}`));
      try {
        resolve(JSON.parse(stdout));
      } catch (e) {
        reject(new Error(`soak printed no JSON: ${e.message}\n${stdout.slice(0, 2000)}\n${stderr}`));
      }
    });
  });
}

t.test('shortened soak: bounded tables, nothing lost, order kept, no memory growth after warm-up', { timeout: 300_000 }, async (t) => {
  const r = await runSoak();
  const f = r.figures;
  t.comment(r.line);
  t.comment(`${Math.round(r.seconds)} s; RSS slope ${r.rssSlopeMBPerM.toFixed(2)} MB per million; flagged ${f.flagged} ${JSON.stringify(f.flaggedReasons)}; ` +
    `violations explained by a flag ${f.explainedByFlag}; hot keys seen ${r.hotKeysSeen}; restarts ${JSON.stringify(r.events)}`);

  // The run did what a soak needs.
  t.equal(r.samples.length >= MESSAGES / 20_000, true, `sampled along the run (${r.samples.length} samples)`);
  t.equal(r.events.length, 1, 'one consumer was stopped and replaced');
  r.hotKeysSeen.forEach((n, i) => t.ok(n >= 2 * (MESSAGES / MOVE_EVERY), `producer ${i} saw the hot set move (${n} keys turned hot)`));
  t.ok(r.hotKeysSeenByAll >= MESSAGES / MOVE_EVERY, `the producers spread the same keys (${r.hotKeysSeenByAll} hot in both)`);
  t.ok(r.samples.some((s) => s.consumers.some((c) => c.chains > 0)), 'the consumers followed chains');

  // Every table within its bound, in every sample.
  const producerBound = {
    trackedKeys: TRACKED_BOUND, hotKeys: TRACKED_BOUND, topics: PRODUCER_TOPICS, partitionerTopics: MAX_TOPICS, inflight: LIBRDKAFKA_QUEUE,
    held: MAX_QUEUED, handoffKeys: TRACKED_BOUND, orderChains: TRACKED_BOUND, orderChainSlots: TRACKED_BOUND, unconfirmed: LIBRDKAFKA_QUEUE + MAX_QUEUED,
  };
  const consumerBound = {
    held: MAX_BUFFERED, heldBytes: MAX_BUFFERED_BYTES, chains: MAX_CHAINS, lines: MAX_BUFFERED, waitingFor: MAX_BUFFERED, heldBySequence: MAX_BUFFERED,
    partitionStates: PARTITIONS, awaited: PARTITIONS, unhandledPartitions: PARTITIONS, assigned: PARTITIONS, lastCommitted: PARTITIONS,
    // The handler queue: maxPending (5,000) + batchSize (500), library defaults, + what one release can add (everything held).
    queue: 5_000 + 500 + MAX_BUFFERED, unhandled: 5_000 + 500 + MAX_BUFFERED,
  };
  const over = [];
  const peak = {};
  for (const s of r.samples) {
    const check = (who, tables, bounds) => {
      for (const [name, bound] of Object.entries(bounds)) {
        const v = tables[name];
        if (typeof v !== 'number') over.push(`${who}: no figure ${name}`);
        else if (v > bound) over.push(`${who} ${name} ${v} > ${bound} at ${s.n}`);
        peak[name] = Math.max(peak[name] ?? 0, v);
      }
    };
    s.producers.forEach((p, i) => check(`producer ${i}`, p, producerBound));
    s.consumers.forEach((c) => check(`consumer ${c.instance}`, c, consumerBound));
  }
  t.same(over.slice(0, 10), [], `every table within its bound in every sample (peaks ${JSON.stringify(peak)})`);
  t.equal(r.samples[0].producers[0].orderChainSlots, TRACKED_BOUND, 'the order chain table has a slot for each entry the tracked-key table can reach');

  // Nothing lost, duplicated or reordered.
  t.equal(f.sent, MESSAGES, 'every message sent');
  t.equal(f.acked, MESSAGES, 'every message acknowledged');
  t.equal(f.failed, 0, 'no delivery failed');
  t.equal(f.lost, 0, 'nothing acknowledged was lost', { examples: f.examples.lost });
  t.equal(f.handled, MESSAGES, 'every message handled');
  t.equal(f.foreign, 0, 'nothing handled that was not sent');
  t.equal(f.badDuplicates, 0, 'a message handled twice only by another consumer instance (a re-read)', { examples: f.examples.duplicate });
  t.equal(f.orderViolations, 0, 'no order violation that no flag explains', { examples: f.examples.order });
  t.same(r.errors, [], "no 'error' events");

  // Memory after warm-up: no growth with the messages.
  const after = r.samples.filter((s) => s.n >= WARMUP);
  const first = after[0];
  const lastRss = Math.max(...after.slice(-3).map((s) => s.rssMB));
  t.ok(lastRss <= first.rssMB * 1.5 + 64, `RSS at the end ${lastRss.toFixed(0)} MB, at the end of warm-up ${first.rssMB.toFixed(0)} MB`);
  t.ok(r.config.gc, 'run with --expose-gc');
  const lastHeap = Math.max(...after.slice(-3).map((s) => s.heapAfterGcMB));
  t.ok(lastHeap <= first.heapAfterGcMB * 2 + 16, `heap after a full collection at the end ${lastHeap.toFixed(1)} MB, at the end of warm-up ${first.heapAfterGcMB.toFixed(1)} MB`);
});
