// npm run demo: a DynamicProducer against librdkafka's in-process mock cluster (no broker
// needed), or a real cluster with --brokers. Steady Zipf traffic, then a campaign key that
// suddenly takes a large share, then the campaign ends. Shows per-partition rates as Kafka's
// own partitioner would have placed the messages (static) and as they were delivered
// (dynamic), and the hot keys as they are detected and cool.

import { DynamicProducer } from '../producer/producer';
import { partitionForKey } from '../core/hash';
import { delay } from '../core/time';
import { bar } from './chart';
import { KeyStream, parseWorkload } from './workload';
import { BROKERS_FLAG, createTopic, runDemo, interactive, PROGRESS_EVERY_S, partitionsFlag, rateFlag, secondsFlag } from './demo-support';
import { type Command, type FlagValues, fileHeader } from './args';

const DEMO = {
  name: 'demo',
  usage: 'npm run demo --',
  description: fileHeader(__filename),
  flags: {
    brokers: BROKERS_FLAG,
    partitions: partitionsFlag({ min: 1, max: 100_000, default: 12 }, 'the topic', 'partitions of --topic, made with them if missing'),
    topic: { type: 'string', arg: 'NAME', default: () => `kdp-demo-${Date.now()}`, defaultText: 'kdp-demo-<now in ms>', help: 'the topic' },
    rate: rateFlag({ min: 10, max: 1_000_000, default: 20_000 }),
    seconds: secondsFlag({ min: 3, max: 86_400, default: 24 }, 'how long it runs; the campaign takes the middle third'),
    'campaign-share': { type: 'number', min: 0, max: 0.99, default: 0.4, help: "the campaign key's share of the messages during the campaign" },
  },
  notes: `On a terminal it redraws every second; piped, it prints a progress line every ${PROGRESS_EVERY_S} s.`,
} as const satisfies Command;

async function main(f: FlagValues<typeof DEMO.flags>): Promise<void> {
  const s = { brokers: f.brokers, partitions: f.partitions, topic: f.topic, rate: f.rate, seconds: f.seconds, campaignShare: f['campaign-share'] };
  if (s.brokers) await createTopic(s.brokers, s.topic, s.partitions);
  const config = s.brokers ? { 'metadata.broker.list': s.brokers } : { 'test.mock.num.brokers': 3 };
  const producer = new DynamicProducer(
    { ...config, 'linger.ms': 5, 'statistics.interval.ms': 1000 },
    { partitioner: 'murmur2_random' },
  );
  const started = performance.now();
  const elapsed = (): number => (performance.now() - started) / 1000;
  const events: string[] = [];
  producer.on('hot', (h) => events.push(`${elapsed().toFixed(1).padStart(5)}s  ${String(h.key)} turned hot (${(h.share * 100).toFixed(1)}% of the topic)`));
  producer.on('cooled', (h) => events.push(`${elapsed().toFixed(1).padStart(5)}s  ${String(h.key)} cooled (${(h.share * 100).toFixed(1)}%)`));
  producer.on('error', (err) => events.push(`error: ${err.message}`));
  await producer.connect();
  // Let the topic exist and its partition count be known before the show starts.
  for (let i = 0; i < 100 && !(producer.metrics().topics[s.topic]?.partitions > 0); i++) {
    producer.produce(s.topic, 'warm-up', null);
    await delay(50);
    await producer.refreshMetadata(s.topic).catch(() => undefined);
  }
  const n = producer.metrics().topics[s.topic]?.partitions || s.partitions;

  const stream = new KeyStream(parseWorkload('zipf:1.0'), 10_000, 7);
  const keys = Array.from({ length: 10_000 }, (_, i) => `customer-${i}`);
  const campaignKey = 'campaign-black-friday';
  const campaignFrom = s.seconds / 3;
  const campaignTo = (s.seconds * 2) / 3;
  const staticNow = new Float64Array(n);
  const dynamicNow = new Float64Array(n);
  const staticTotal = new Float64Array(n);
  const dynamicTotal = new Float64Array(n);
  let produced = 0;
  let delivered = 0;
  let failed = 0;
  producer.on('delivery', (err, report) => {
    if (err) failed++;
    else if (report.partition >= 0 && report.partition < n && report.key !== null) {
      delivered++;
      dynamicNow[report.partition]++;
      dynamicTotal[report.partition]++;
    }
  });

  const tty = interactive();
  const phaseAt = (t: number): string =>
    t < campaignFrom ? 'steady Zipf traffic' : t < campaignTo ? `campaign: ${campaignKey} takes ${(s.campaignShare * 100).toFixed(0)}%` : 'campaign over';
  const maxOverMean = (a: Float64Array): string => {
    const sum = a.reduce((x, y) => x + y, 0);
    return sum > 0 ? ((Math.max(...a) * a.length) / sum).toFixed(2) : '-';
  };
  // Piped output gets one line per PROGRESS_EVERY_S seconds, not a screen a second.
  const progress = (): void => {
    const t = elapsed();
    const hot = producer.partitioner.hotKeys(s.topic);
    process.stdout.write(`${t.toFixed(0).padStart(4)}s / ${s.seconds}s  ${phaseAt(t)}; produced ${produced}, delivered ${delivered}, failed ${failed}; ` +
      `last ${PROGRESS_EVERY_S} s hottest partition / mean: static ${maxOverMean(staticNow)}, dynamic ${maxOverMean(dynamicNow)}; ` +
      `hot keys: ${hot.length ? hot.slice(0, 3).map((h) => `${String(h.key)} on ${h.partitions}`).join(', ') : 'none'}\n`);
    staticNow.fill(0);
    dynamicNow.fill(0);
  };
  const title = `kafka-dynamic-partitioner demo — ${s.brokers ? `cluster ${s.brokers}` : 'librdkafka mock cluster'}, topic ${s.topic}, ${n} partitions, ${s.rate} msg/s`;
  const draw = (): void => {
    const t = elapsed();
    const phase = phaseAt(t);
    const max = Math.max(1, ...staticNow, ...dynamicNow);
    const lines = [
      title,
      `${t.toFixed(1)}s / ${s.seconds}s   ${phase}`,
      '',
      `partition  ${'static: where Kafka\'s partitioner puts them (msg/s)'.padEnd(44)} dynamic: where they were delivered (msg/s)`,
    ];
    for (let p = 0; p < n; p++) {
      lines.push(`${String(p).padStart(9)}  ${bar(staticNow[p], max, 34)} ${String(staticNow[p]).padStart(7)}   ${bar(dynamicNow[p], max, 34)} ${String(dynamicNow[p]).padStart(7)}`);
    }
    const hot = producer.partitioner.hotKeys(s.topic).slice(0, 6);
    lines.push('', `hot keys now: ${hot.length ? hot.map((h) => `${String(h.key)} ${(h.share * 100).toFixed(1)}% on ${h.partitions}`).join(', ') : 'none'}`);
    lines.push(`produced ${produced}, delivered ${delivered}, failed ${failed}`, '', ...events.slice(-6));
    process.stdout.write(`\x1b[H\x1b[2J${lines.join('\n')}\n`);
    staticNow.fill(0);
    dynamicNow.fill(0);
  };

  const tickMs = 10;
  const perTick = s.rate / (1000 / tickMs);
  let carry = 0;
  const value = Buffer.alloc(100, 'x');
  if (!tty) process.stdout.write(`${title}, ${s.seconds} s\n`);
  await new Promise<void>((resolve) => {
    const screen = tty ? setInterval(draw, 1000) : setInterval(progress, PROGRESS_EVERY_S * 1000);
    const ticker = setInterval(() => {
      const t = elapsed();
      if (t >= s.seconds) {
        clearInterval(ticker);
        clearInterval(screen);
        resolve();
        return;
      }
      carry += perTick;
      const campaign = t >= campaignFrom && t < campaignTo;
      for (; carry >= 1; carry--) {
        const key = campaign && Math.random() < s.campaignShare ? campaignKey : keys[stream.next()];
        const sp = partitionForKey(key, n, 'murmur2_random');
        staticNow[sp]++;
        staticTotal[sp]++;
        produced++;
        producer.produce(s.topic, value, key);
      }
    }, tickMs);
  });
  await producer.flush(60_000);
  const mean = (a: Float64Array): number => a.reduce((x, y) => x + y, 0) / a.length;
  const summary = [
    '',
    `done: produced ${produced}, delivered ${delivered}, failed ${failed}${produced === delivered + failed ? '' : ' (some reports still missing!)'}`,
    `hottest partition / mean over the run: static ${(Math.max(...staticTotal) / mean(staticTotal)).toFixed(2)}, dynamic ${(Math.max(...dynamicTotal) / mean(dynamicTotal)).toFixed(2)}`,
  ];
  // The screen showed the hot and cooled keys as they came; piped output gets them once, here.
  if (!tty && events.length) {
    summary.push('hot keys over the run:', ...events.slice(0, 20));
    if (events.length > 20) summary.push(`  ... and ${events.length - 20} more`);
  }
  process.stdout.write(summary.join('\n') + '\n');
  await producer.disconnect();
}

runDemo(DEMO, main);
