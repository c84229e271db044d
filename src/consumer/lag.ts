// LagMonitor: each partition's lag for a consumer group (log-end offset minus committed
// offset), read on an interval; attach() turns lag into per-partition penalties so that
// hot-key traffic moves away from partitions whose consumers fall behind. Cold keys never move.

import { EventEmitter } from 'node:events';
import type * as Kafka from 'node-rdkafka';
import { kafkaLibrary } from '../core/library';
import type { DynamicPartitioner } from '../partitioner/partitioner';
import type { DynamicProducer } from '../producer/producer';
import { InvalidArgTypeError, KafkaError, toKafkaError } from '../core/errors';
import { configError, type Config } from '../core/config';
import { resolveLagMonitorOptions } from '../core/options';

export interface LagMonitorOptions {
  readonly groupId: string;
  readonly topics: string[];
  /** How often lag is read (ms). */
  readonly intervalMs?: number;
}

export type Lag = Record<string, number[]>;

export class LagMonitor extends EventEmitter {
  readonly client: Kafka.KafkaConsumer;
  private timer: NodeJS.Timeout | undefined;
  private lag: Lag = {};
  private readonly targets: DynamicPartitioner[] = [];
  private readonly intervalMs: number;
  private readonly topics: readonly string[];

  constructor(globalConfig: Config, options: LagMonitorOptions) {
    super();
    if (typeof globalConfig !== 'object' || globalConfig === null) throw new InvalidArgTypeError('globalConfig', 'an object', globalConfig);
    const o = resolveLagMonitorOptions(options);
    this.intervalMs = o.intervalMs;
    this.topics = o.topics;
    // A consumer of the group that never subscribes: it only reads committed offsets and watermarks.
    try {
      this.client = new (kafkaLibrary(o.kafka).KafkaConsumer)({ ...globalConfig, 'group.id': o.groupId, 'enable.auto.commit': false } as any, {});
    } catch (err) {
      throw configError(err, globalConfig, {});
    }
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.client.connect({ timeout: 30_000 }, (err) => (err ? reject(toKafkaError(err, 'connect')) : resolve())));
    await this.read();
    this.timer = setInterval(() => this.read().catch((err) => this.emit('error', err)), this.intervalMs);
    this.timer.unref();
  }

  /** The lag last read: per topic, per partition, in messages. */
  current(): Lag {
    return this.lag;
  }

  /**
   * Feeds lag into a DynamicPartitioner's (or a DynamicProducer's) penalties: a partition's
   * lag above the least lagging one, as a share of what a partition receives over the load
   * horizon.
   */
  attach(target: DynamicPartitioner | DynamicProducer): void {
    const partitioner = (target as DynamicProducer).partitioner ?? target;
    if (typeof (partitioner as DynamicPartitioner).setPartitionPenalty !== 'function') {
      throw new InvalidArgTypeError('target', 'a DynamicPartitioner or DynamicProducer', target);
    }
    this.targets.push(partitioner as DynamicPartitioner);
  }

  /** Reads every topic's lag now (and feeds the attached partitioners); rejects with a KafkaError. */
  async read(): Promise<Lag> {
    const metadata: any = await new Promise((resolve, reject) =>
      this.client.getMetadata({ timeout: 10_000 }, (err, m) => (err ? reject(toKafkaError(err, 'metadata')) : resolve(m))));
    if (!metadata || !Array.isArray(metadata.topics)) throw new KafkaError('a metadata answer without topics', undefined);
    const next: Lag = {};
    for (const topic of this.topics) {
      const t = metadata.topics.find((x: any) => x.name === topic);
      if (!t) continue;
      const partitions = t.partitions.map((p: any) => ({ topic, partition: p.id }));
      const committed: any[] = await new Promise((resolve, reject) => this.client.committed(partitions, 10_000, (err, c) => (err ? reject(toKafkaError(err, `committed offsets of ${topic}`)) : resolve(c))));
      const lags = new Array(partitions.length).fill(0);
      for (const c of committed) {
        const high: number = await new Promise((resolve, reject) =>
          this.client.queryWatermarkOffsets(topic, c.partition, 10_000, (err, w) => (err ? reject(toKafkaError(err, `watermarks of ${topic} [${c.partition}]`)) : resolve(w.highOffset))));
        const done = typeof c.offset === 'number' && c.offset >= 0 ? c.offset : 0;
        lags[c.partition] = Math.max(0, high - done);
      }
      next[topic] = lags;
      for (const p of this.targets) {
        const perPartition = p.recentMessagesPerPartition(topic);
        if (perPartition <= 0) continue;
        const least = Math.min(...lags);
        // The partitioner's own count (it may lag behind metadata), read once per topic.
        const known = p.stats().topics[topic]?.partitions ?? 0;
        lags.forEach((lag, i) => {
          if (i < known) p.setPartitionPenalty(topic, i, (lag - least) / perPartition);
        });
      }
    }
    this.lag = next;
    this.emit('lag', next);
    return next;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await new Promise<void>((resolve) => this.client.disconnect(() => resolve()));
  }
}
