// npm run demo:consumer: the consumer side, against librdkafka's in-process mock cluster (no
// broker needed) or a real cluster with --brokers. Two parts:
//   1. order: a DynamicProducer spreads a hot key over several partitions; a DynamicConsumer
//      reads them (in whatever order the partitions' fetches arrive) and hands the key's
//      messages to the application in produce order. Each message's value is its number
//      within its key, so the demo counts what arrived ahead of an earlier message and what
//      the handler saw out of order.
//   2. steering: a LagMonitor attached to the producer reads the lag of a consumer group;
//      the group's consumer slows down on one partition, and the hot key's traffic moves off
//      that partition while cold keys stay where Kafka's partitioner puts them.

import * as Kafka from 'node-rdkafka';
import { DynamicProducer } from '../producer/producer';
import { DynamicConsumer } from '../consumer/consumer';
import { LagMonitor } from '../producer/lag-monitor';
import { allowedPartitions } from '../partitioner/allowed';
import { partitionForKey } from '../core/hash';
import { delay as sleep } from '../core/time';
import { bar } from './chart';
import { KeyStream, parseWorkload, prng } from './workload';
import type { ConsumedMessage } from '../delivery/resequencer';
import { BROKERS_FLAG, createTopic, runDemo, interactive, PROGRESS_EVERY_S, partitionsFlag, rateFlag, secondsFlag } from './demo-support';
import { type Command, type FlagValues, fileHeader } from './args';

const DEMO_CONSUMER = {
  name: 'demo',
  usage: 'npm run demo:consumer --',
  description: fileHeader(__filename),
  flags: {
    brokers: BROKERS_FLAG,
    partitions: partitionsFlag({ min: 2, max: 1024, default: 6 }, 'the topics', 'partitions of the two topics made for the run'),
    rate: rateFlag({ min: 100, max: 100_000, default: 4000 }),
    seconds: secondsFlag({ min: 12, max: 3600, default: 24 }, 'how long it runs: 40% the order part, the rest (at least 8 s) the steering part'),
    'hot-share': { type: 'number', min: 0.05, max: 0.95, default: 0.4, help: "the hot key's share of the messages" },
  },
  notes: `On a terminal it prints a line every second; piped, every ${PROGRESS_EVERY_S} s.`,
} as const satisfies Command;

interface Settings {
  brokers?: string;
  partitions: number;
  rate: number;
  seconds: number;
  hotShare: number;
}

/** Produces `rate` messages per second to `topic` until `stop()` is called: the hot key with `share`, else Zipf keys. */
function traffic(producer: DynamicProducer, topic: string, s: Settings, hotKey: string, keys: string[], seed: number) {
  const stream = new KeyStream(parseWorkload('zipf:1.0'), keys.length, seed);
  const rand = prng(seed ^ 0x2545f491);
  const sequence = new Map<string, number>();
  const tickMs = 10;
  const perTick = s.rate / (1000 / tickMs);
  let carry = 0;
  let produced = 0;
  const ticker = setInterval(() => {
    for (carry += perTick; carry >= 1; carry--) {
      const key = rand() < s.hotShare ? hotKey : keys[stream.next()];
      const seq = (sequence.get(key) ?? 0) + 1;
      sequence.set(key, seq);
      producer.produce(topic, String(seq), key);
      produced++;
    }
  }, tickMs);
  return { stop: () => clearInterval(ticker), produced: () => produced };
}

/** Makes the topic exist (auto-created on the mock cluster) and its partition count known. */
async function ready(producer: DynamicProducer, topic: string): Promise<number> {
  for (let i = 0; i < 100 && !(producer.metrics().topics[topic]?.partitions > 0); i++) {
    producer.produce(topic, 'warm-up', null);
    await sleep(50);
    await producer.refreshMetadata(topic).catch(() => undefined);
  }
  return producer.metrics().topics[topic]?.partitions ?? 0;
}

async function main(f: FlagValues<typeof DEMO_CONSUMER.flags>): Promise<void> {
  const s: Settings = { brokers: f.brokers, partitions: f.partitions, rate: f.rate, seconds: f.seconds, hotShare: f['hot-share'] };
  const stamp = Date.now().toString(36);
  const orderTopic = `kdp-demo-order-${stamp}`;
  const lagTopic = `kdp-demo-lag-${stamp}`;
  if (s.brokers) {
    await createTopic(s.brokers, orderTopic, s.partitions);
    await createTopic(s.brokers, lagTopic, s.partitions);
  }
  const producer = new DynamicProducer(
    s.brokers ? { 'metadata.broker.list': s.brokers, 'linger.ms': 5 } : { 'test.mock.num.brokers': 3, 'linger.ms': 5 },
    { partitioner: 'murmur2_random' },
  );
  const everHot = new Set<string>();
  producer.on('hot', (h) => everHot.add(String(h.key)));
  await producer.connect();
  // Consumers join the mock cluster through its brokers' addresses.
  let brokers = s.brokers;
  if (!brokers) {
    const md: any = await new Promise((resolve, reject) => producer.client.getMetadata({ timeout: 10_000 }, (err, m) => (err ? reject(err) : resolve(m))));
    brokers = md.brokers.map((b: any) => `${b.host}:${b.port}`).join(',');
  }
  const n = await ready(producer, orderTopic);
  await ready(producer, lagTopic);
  const keys = Array.from({ length: 2000 }, (_, i) => `customer-${i}`);
  const hotKey = 'campaign-black-friday';
  const started = performance.now();
  const clock = (): string => `${((performance.now() - started) / 1000).toFixed(1).padStart(5)}s`;
  const say = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  say(`kafka-dynamic-partitioner consumer demo — ${s.brokers ? `cluster ${s.brokers}` : 'librdkafka mock cluster'}, ${n} partitions, ${s.rate} msg/s, ${hotKey} takes ${(s.hotShare * 100).toFixed(0)}%`);

  // ---- 1. a spread key restored in order ----
  const orderSeconds = Math.round(s.seconds * 0.4);
  say('');
  say(`1. order: a DynamicConsumer reads ${orderTopic}; each value is its key's sequence number`);
  const consumer = new DynamicConsumer(
    { 'metadata.broker.list': brokers, 'group.id': `kdp-demo-order-${stamp}`, 'auto.offset.reset': 'earliest', 'fetch.wait.max.ms': 20 },
    {},
    { commitIntervalMs: 500 },
  );
  consumer.on('error', (err) => say(`consumer error: ${err.message}`));
  // What arrives from Kafka, before the resequencer: a message of the hot key read after a
  // later one of it (its partition's fetch came later) would reach a plain consumer out of
  // order; the later one is held back until it comes.
  let arrivedLate = 0;
  let newestArrived = 0;
  const push = consumer.resequencer.push.bind(consumer.resequencer);
  (consumer.resequencer as { push: typeof push }).push = (m) => {
    if (m.key != null && String(m.key) === hotKey) {
      const seq = Number(String((m as ConsumedMessage).value));
      if (seq < newestArrived) arrivedLate++;
      else newestArrived = seq;
    }
    return push(m);
  };
  const lastHandled = new Map<string, number>();
  const hotPartitions = new Set<number>();
  let handled = 0;
  let hotHandled = 0;
  let outOfOrder = 0;
  let violations = 0;
  await consumer.connect();
  const assigned = new Promise((resolve) => consumer.once('assigned', resolve));
  const consumed = consumer.run([orderTopic], (m, info) => {
    if (m.key == null) return; // the warm-up message
    const key = String(m.key);
    const seq = Number(String(m.value));
    handled++;
    if (info.outOfOrder) outOfOrder++;
    if (seq !== (lastHandled.get(key) ?? 0) + 1) violations++;
    lastHandled.set(key, seq);
    if (key === hotKey) {
      hotHandled++;
      hotPartitions.add(m.partition);
    }
  });
  say('   (waiting for the consumer group to assign the partitions)');
  await assigned;
  const orderTraffic = traffic(producer, orderTopic, s, hotKey, keys, 7);
  const line1 = (): string => `${clock()}  produced ${String(orderTraffic.produced()).padStart(6)}  handled ${String(handled).padStart(6)} | ` +
    `hot key: ${String(hotHandled).padStart(5)} from partitions ${[...hotPartitions].sort((a, b) => a - b).join(',') || '-'}, ` +
    `${arrivedLate} arrived behind a later one | out-of-order handed: ${outOfOrder}, order violations: ${violations}`;
  // Piped output gets a line every PROGRESS_EVERY_S seconds, not every second.
  const tty = interactive();
  for (let i = 1; i <= orderSeconds; i++) {
    await sleep(1000);
    if (tty || i % PROGRESS_EVERY_S === 0) say(line1());
  }
  orderTraffic.stop();
  await producer.flush(30_000);
  for (let i = 0; i < 500 && handled < orderTraffic.produced(); i++) await sleep(10);
  await consumer.stop();
  await consumed;
  say(line1());
  say(`   => ${hotKey}: ${hotHandled} messages from ${hotPartitions.size} partitions; ${arrivedLate} arrived behind a later one, ` +
    `yet the handler saw them in produce order: out-of-order handed: ${outOfOrder}, order violations: ${violations}`);

  // ---- 2. steering away from a slowed consumer ----
  const lagSeconds = Math.max(8, s.seconds - orderSeconds);
  const slowFrom = Math.round(lagSeconds * 0.4);
  const X = allowedPartitions(hotKey, n, 2, 'murmur2_random')[1];
  const group = `kdp-demo-lag-${stamp}`;
  say('');
  say(`2. steering: a LagMonitor (every 500 ms) feeds group ${group}'s lag to the producer; ` +
    `from ${slowFrom} s on its consumer gets through only 50 msg/s of partition ${X}`);
  const config = { 'metadata.broker.list': brokers, log_level: 3 };
  const monitor = new LagMonitor(config, { groupId: group, topics: [lagTopic], intervalMs: 500 });
  monitor.on('error', (err) => say(`lag monitor error: ${err.message}`));
  await monitor.start();
  monitor.attach(producer);
  // The group's consumer: reads every partition, commits what it got through every 200 ms.
  const reader = new Kafka.KafkaConsumer({ ...config, 'group.id': group, 'enable.auto.commit': false, 'fetch.wait.max.ms': 20 }, { 'auto.offset.reset': 'earliest' });
  await new Promise<void>((resolve, reject) => reader.connect({ timeout: 10_000 }, (err) => (err ? reject(err) : resolve())));
  reader.setDefaultConsumeTimeout(50);
  reader.assign(Array.from({ length: n }, (_, partition) => ({ topic: lagTopic, partition, offset: 0 })));
  const next = new Array<number>(n).fill(0);
  let slowed = false;
  let xDone = 0;
  let reading = true;
  const readLoop = (async () => {
    while (reading) {
      const batch: Kafka.Message[] = await new Promise((resolve) => reader.consume(1000, (err, m) => resolve(err ? [] : m)));
      for (const m of batch) next[m.partition] = m.offset + 1;
    }
  })();
  let lastCommit = performance.now();
  const committer = setInterval(() => {
    const now = performance.now();
    xDone = slowed ? Math.min(next[X], xDone + (50 * (now - lastCommit)) / 1000) : next[X];
    lastCommit = now;
    const offsets = next.map((offset, partition) => ({ topic: lagTopic, partition, offset: partition === X ? Math.floor(xDone) : offset })).filter((o) => o.offset > 0);
    if (offsets.length > 0) reader.commit(offsets);
  }, 200);

  const hotNow = new Array<number>(n).fill(0);
  const coldMoved = { checked: 0, moved: 0 };
  const onDelivery = (err: unknown, report: { topic: string; partition: number; key?: Buffer | string | null }): void => {
    if (err || report.topic !== lagTopic || report.key == null) return;
    const key = String(report.key);
    if (key === hotKey) hotNow[report.partition]++;
    else if (!everHot.has(key)) {
      coldMoved.checked++;
      if (partitionForKey(key, n, 'murmur2_random') !== report.partition) coldMoved.moved++;
    }
  };
  producer.on('delivery', onDelivery);
  const before = new Array<number>(n).fill(0);
  const after = new Array<number>(n).fill(0);
  let beforeSeconds = 0;
  let afterSeconds = 0;
  const width = n <= 6 ? 8 : 4;
  // What the next line shows: the hot key's messages per partition since the last line.
  const shown = new Array<number>(n).fill(0);
  let shownSeconds = 0;
  const lagTraffic = traffic(producer, lagTopic, s, hotKey, keys, 11);
  for (let i = 1; i <= lagSeconds; i++) {
    if (i === slowFrom + 1) slowed = true;
    await sleep(1000);
    hotNow.forEach((r, p) => (shown[p] += r));
    shownSeconds++;
    if (tty || i % PROGRESS_EVERY_S === 0 || i === lagSeconds) {
      const perSecond = shown.map((r) => Math.round(r / shownSeconds));
      const max = Math.max(1, ...perSecond);
      const rates = perSecond.map((r, p) => `${p === X ? '*' : ' '}${p} ${bar(r, max, width)}${String(r).padStart(5)}`).join(' ');
      const lagX = monitor.current()[lagTopic]?.[X] ?? 0;
      say(`${clock()}  ${slowed ? 'slowed ' : 'healthy'}  hot key msg/s by partition:${rates}   lag of ${X}: ${lagX}`);
      shown.fill(0);
      shownSeconds = 0;
    }
    // Before: the healthy seconds after the first; after: from 3 s into the slowdown.
    if (!slowed && i > 1) {
      hotNow.forEach((r, p) => (before[p] += r));
      beforeSeconds++;
    } else if (slowed && i > slowFrom + 3) {
      hotNow.forEach((r, p) => (after[p] += r));
      afterSeconds++;
    }
    hotNow.fill(0);
  }
  lagTraffic.stop();
  await producer.flush(30_000);
  clearInterval(committer);
  reading = false;
  await readLoop;
  await new Promise<void>((resolve) => reader.disconnect(() => resolve()));
  await monitor.stop();
  producer.removeListener('delivery', onDelivery);
  const avg = (a: number[], k: number): number[] => a.map((x) => Math.round(x / Math.max(1, k)));
  const b = avg(before, beforeSeconds);
  const a = avg(after, afterSeconds);
  const max = Math.max(1, ...b, ...a);
  say(`   => the hot key's msg/s per partition (* = the slowed one), before and after the slowdown:`);
  for (let p = 0; p < n; p++) {
    say(`      ${p === X ? '*' : ' '}${String(p).padStart(3)}  before ${bar(b[p], max, 20)}${String(b[p]).padStart(6)}   after ${bar(a[p], max, 20)}${String(a[p]).padStart(6)}`);
  }
  say(`      messages of never-hot keys off their partition: ${coldMoved.moved} of ${coldMoved.checked}`);
  await producer.disconnect();
}

runDemo(DEMO_CONSUMER, main);
