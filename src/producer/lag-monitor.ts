// LagMonitor: each partition's lag for a consumer group (log-end offset minus committed
// offset), read on an interval; attach() turns lag into per-partition penalties so that
// hot-key traffic moves away from partitions whose consumers fall behind. Cold keys never move.
// Attached to a DynamicProducer, it also gives the producer the group's committed offsets and
// their pace, so that a key moved off a partition whose consumers are far behind waits in the
// producer, not in the consumer of its new partition (holdHandoffsMs, src/producer/hold/progress.ts).

import { EventEmitter } from 'node:events';
import type * as Kafka from 'node-rdkafka';
import { kafkaLibrary } from '../core/library';
import type { DynamicPartitioner } from '../partitioner/partitioner';
import type { DynamicProducer } from './producer';
import { InvalidArgTypeError, KafkaError, toKafkaError } from '../core/errors';
import { delay } from '../core/time';
import { configError, type Config } from '../core/config';
import { type Connectable, connectClient } from '../core/connect';
import { hideSecrets } from '../core/secrets';
import { resolveLagMonitorOptions } from '../core/group-options';

export interface LagMonitorOptions {
  readonly groupId: string;
  readonly topics: string[];
  /** How often lag is read (ms). */
  readonly intervalMs?: number;
  /**
   * How long an attached DynamicProducer may hold a relocated key's move while the group's
   * consumers of the partition it left are behind its last message there (ms); 0: never.
   */
  readonly holdHandoffsMs?: number;
  /**
   * How hard lag pushes hot keys away: a partition's penalty is its lag above the least lagging
   * one × penaltyGain, over what a partition receives from all producers over the load horizon
   * (default 3; 0: lag gives no penalty). More lowers lag and latency behind a slow consumer,
   * and spreads more messages.
   */
  readonly penaltyGain?: number;
}

export type Lag = Record<string, number[]>;

/** Kafka's TOPIC_, GROUP_ and CLUSTER_AUTHORIZATION_FAILED. */
const AUTHORIZATION_FAILED: ReadonlySet<number> = new Set([29, 30, 31]);
/** librdkafka's coordinator load in progress, coordinator not available, not coordinator: passing states of a group. */
const COORDINATOR_MOVING = new Set([14, 15, 16]);

/** How often the consumer queue is read while committed offsets are awaited (ms). */
const QUEUE_READ_MS = 200;

export class LagMonitor extends EventEmitter {
  readonly client: Kafka.KafkaConsumer;
  private timer: NodeJS.Timeout | undefined;
  /** The read under way: one at a time (a read may outlast the interval), shared by read()'s callers meanwhile. */
  private reading: Promise<Lag> | undefined;
  /** Set by stop(): a read under way then feeds nobody. */
  private stopping = false;
  private lag: Lag = {};
  private readonly targets: DynamicPartitioner[] = [];
  /** Attached producers, which take the group's progress for their handoffs. */
  private readonly producers: DynamicProducer[] = [];
  /** Per topic: the committed offsets of the last read, and when they were read. */
  private readonly lastCommitted = new Map<string, { committed: number[]; at: number }>();
  /** Per topic: the sum of its log-end offsets at the last read. */
  private readonly lastEnds = new Map<string, number>();
  /** Per attached partitioner and topic: its messages at the last read, and its share of the topic's writes since the read before. */
  private readonly writers = new Map<DynamicPartitioner, Map<string, { messages: number; share: number }>>();
  private readonly intervalMs: number;
  private readonly holdHandoffsMs: number;
  private readonly penaltyGain: number;
  private readonly topics: readonly string[];
  private readonly groupId: string;

  constructor(globalConfig: Config, options: LagMonitorOptions) {
    super();
    if (typeof globalConfig !== 'object' || globalConfig === null) throw new InvalidArgTypeError('globalConfig', 'an object', globalConfig);
    const o = resolveLagMonitorOptions(options);
    this.intervalMs = o.intervalMs;
    this.holdHandoffsMs = o.holdHandoffsMs;
    this.penaltyGain = o.penaltyGain;
    this.topics = o.topics;
    this.groupId = o.groupId;
    // A consumer of the group that never subscribes: it only reads committed offsets and watermarks.
    try {
      this.client = new (kafkaLibrary(o.kafka).KafkaConsumer)({ ...globalConfig, 'group.id': o.groupId, 'enable.auto.commit': false } as any, {});
    } catch (err) {
      throw configError(err, globalConfig, {});
    }
    hideSecrets(this.client);
    // It never subscribes: a consume call only reads errors queued for the group (see committed()).
    this.client.setDefaultConsumeTimeout(0);
  }

  /**
   * Connects (within `timeoutMs`: a refused login rejects at once, see DynamicProducer.connect)
   * and reads the lag once; rejects with a KafkaError. Then reads it every intervalMs.
   */
  async start(timeoutMs = 30_000): Promise<void> {
    await connectClient(this.client as unknown as Connectable, timeoutMs);
    await this.read();
    // A tick while a read is under way is skipped: reads never overlap, nor land out of order.
    this.timer = setInterval(() => {
      if (this.reading === undefined) this.read().catch((err) => this.stopping || this.emit('error', err));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** The lag last read: per topic, per partition, in messages. */
  current(): Lag {
    return this.lag;
  }

  /**
   * Feeds lag into a DynamicPartitioner's (or a DynamicProducer's) penalties: a partition's
   * lag above the least lagging one × penaltyGain, over what a partition receives from all
   * producers over the load horizon: the partitioner's own recent messages per partition over
   * its share of the topic's writes between the last two reads.
   */
  attach(target: DynamicPartitioner | DynamicProducer): void {
    const partitioner = (target as DynamicProducer).partitioner ?? target;
    if (typeof (partitioner as DynamicPartitioner).setPartitionPenalty !== 'function') {
      throw new InvalidArgTypeError('target', 'a DynamicPartitioner or DynamicProducer', target);
    }
    this.targets.push(partitioner as DynamicPartitioner);
    if (partitioner !== target && this.holdHandoffsMs > 0) this.producers.push(target as DynamicProducer);
  }

  /**
   * Reads every topic's lag now (and feeds the attached partitioners); rejects with a KafkaError.
   * While a read is under way, its answer.
   */
  read(): Promise<Lag> {
    if (this.reading === undefined) {
      const reading = this.readOnce().finally(() => {
        if (this.reading === reading) this.reading = undefined;
      });
      this.reading = reading;
    }
    return this.reading;
  }

  private async readOnce(): Promise<Lag> {
    const metadata: any = await new Promise((resolve, reject) =>
      this.client.getMetadata({ timeout: 10_000 }, (err, m) => (err ? reject(toKafkaError(err, 'metadata')) : resolve(m))));
    if (!metadata || !Array.isArray(metadata.topics)) throw new KafkaError('a metadata answer without topics', undefined);
    const next: Lag = {};
    for (const topic of this.topics) {
      const t = metadata.topics.find((x: any) => x.name === topic);
      if (!t) continue;
      const partitions = t.partitions.map((p: any) => ({ topic, partition: p.id }));
      const committed = await this.committedRetried(topic, partitions);
      const readAt = Date.now();
      const lags = new Array(partitions.length).fill(0);
      let ends = 0;
      // For the producers: NaN where the group never committed (nothing known of its consumers there).
      const dones = new Array(partitions.length).fill(NaN);
      for (const c of committed) {
        const { lowOffset: low, highOffset: high } = await new Promise<{ lowOffset: number; highOffset: number }>((resolve, reject) =>
          this.client.queryWatermarkOffsets(topic, c.partition, 10_000, (err, w) => (err ? reject(toKafkaError(err, `watermarks of ${topic} [${c.partition}]`)) : resolve(w))));
        ends += high;
        const committedOnce = typeof c.offset === 'number' && c.offset >= 0;
        if (committedOnce) dones[c.partition] = c.offset;
        // Never committed: what the log still holds (from its start, not offset 0, once retention moved it).
        lags[c.partition] = Math.max(0, high - (committedOnce ? c.offset : Math.max(0, low)));
      }
      // Stopped meanwhile: the producers were told the monitor is gone; nothing more goes to them.
      if (this.stopping) return this.lag;
      next[topic] = lags;
      if (this.producers.length > 0) this.feedProgress(topic, dones, readAt);
      const written = ends - (this.lastEnds.get(topic) ?? NaN);
      this.lastEnds.set(topic, ends);
      for (const p of this.targets) {
        const stats = p.stats().topics[topic];
        const share = this.shareOf(p, topic, stats?.messages ?? 0, written);
        const perPartition = p.recentMessagesPerPartition(topic);
        if (perPartition <= 0) continue;
        const least = Math.min(...lags);
        // The partitioner's own count (it may lag behind metadata).
        const known = stats?.partitions ?? 0;
        // Its own recent messages per partition stand for share × the topic's: a gain that
        // does not grow with the number of producers.
        const gain = this.penaltyGain * share / perPartition;
        lags.forEach((lag, i) => {
          if (i < known) p.setPartitionPenalty(topic, i, (lag - least) * gain);
        });
      }
    }
    if (this.stopping) return this.lag;
    this.lag = next;
    this.emit('lag', next);
    return next;
  }

  /**
   * The share of `topic`'s writes that partitioner `p` decided (`messages`, its count so far)
   * between this read and the one before (`written` messages landed meanwhile, NaN at the
   * first read): the last share known when nothing was written, 1 (alone) until one is known.
   */
  private shareOf(p: DynamicPartitioner, topic: string, messages: number, written: number): number {
    let topics = this.writers.get(p);
    if (topics === undefined) this.writers.set(p, (topics = new Map()));
    const last = topics.get(topic);
    let share = last?.share ?? 1;
    if (last !== undefined && written > 0) share = Math.min(1, Math.max(0, (messages - last.messages) / written));
    topics.set(topic, { messages, share });
    return share;
  }

  /** The group's progress on `topic` to the attached producers: committed offsets, and their pace since the last read. */
  private feedProgress(topic: string, committed: number[], at: number): void {
    const before = this.lastCommitted.get(topic);
    this.lastCommitted.set(topic, { committed, at });
    const perMs = committed.map((c, i) => {
      const was = before?.committed[i];
      // Not known at the first read, nor without commits, nor when the offset went back (the
      // group's offsets were reset): NaN (c < was is false then too).
      return was === undefined || !(c >= was) || at <= before!.at ? NaN : (c - was) / (at - before!.at);
    });
    const progress = { committed, perMs, at, intervalMs: this.intervalMs, holdMs: this.holdHandoffsMs };
    for (const p of this.producers) p.consumerProgress(topic, progress, this);
  }

  /**
   * committed(), asked again (up to 5 times, 200 ms doubling) while the group's coordinator is
   * moving or loading (librdkafka 14, 15, 16: a cluster just started, or a broker that changed
   * leadership), which passes within seconds; any other error at once.
   */
  private async committedRetried(topic: string, partitions: { topic: string; partition: number }[]): Promise<any[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.committed(topic, partitions);
      } catch (err) {
        const code = (err as KafkaError).librdkafkaCode;
        if (attempt >= 5 || code === undefined || !COORDINATOR_MOVING.has(code)) throw err;
        await delay(200 * 2 ** attempt);
      }
    }
  }

  /**
   * The group's committed offsets of `partitions`. A group this principal may not use makes
   * librdkafka look for its coordinator until committed() times out, while the refusal waits
   * in the consumer's queue, which only a consume call reads: so the queue is read meanwhile,
   * and an authorization error found there rejects at once.
   */
  private committed(topic: string, partitions: { topic: string; partition: number }[]): Promise<any[]> {
    const context = `committed offsets of ${topic} (group ${this.groupId})`;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err: unknown, value?: any[]): void => {
        if (settled) return;
        settled = true;
        clearInterval(watch);
        if (err) reject(toKafkaError(err, context));
        else resolve(value ?? []);
      };
      const watch = setInterval(() => {
        try {
          this.client.consume(1, (err: any) => {
            if (err && AUTHORIZATION_FAILED.has(err.code)) finish(err);
          });
        } catch {
          // Not connected (stop() under way): committed() calls back with its own error.
        }
      }, QUEUE_READ_MS);
      this.client.committed(partitions, 10_000, (err, c) => finish(err, c));
    });
  }

  /** Stops reading: a read under way ends first (its answer goes to nobody), then the client disconnects. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.reading?.catch(() => undefined);
    // Moves held for this group's consumers go now; their consumers wait for the rest.
    for (const p of this.producers) for (const topic of this.topics) p.consumerProgress(topic, undefined, this);
    this.lastCommitted.clear();
    await new Promise<void>((resolve) => this.client.disconnect(() => resolve()));
  }
}
