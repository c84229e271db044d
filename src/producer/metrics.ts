// Producer metrics: a plain snapshot (producer.metrics()) and, when the user passes a
// prom-client Registry, the same figures as Prometheus gauges collected on scrape; and what
// every producer (DynamicProducer and the adapters of other clients) relays of its
// partitioner's events.

import type { EventEmitter } from 'node:events';
import type { DynamicPartitioner } from '../partitioner/partitioner';
import type { HotKey } from '../partitioner/hot-keys';
import type { TrackedKeyStats } from '../partitioner/stats';
import { type GaugeOf, registerGauges } from '../core/prometheus';
import { registerOtelGauges } from '../core/otel-metrics';

export interface TopicMetrics {
  readonly partitions: number;
  readonly produced: number;
  readonly delivered: number;
  readonly failed: number;
  /** Messages per second produced since the previous metrics() call. */
  readonly messagesPerSecond: number;
  /** Each partition's share of the topic's recent messages (load horizon). */
  readonly load: readonly number[];
  /** Most loaded partition over the mean. */
  readonly imbalance: number;
  readonly hotKeys: readonly HotKey[];
  /** librdkafka's queued messages per partition (from statistics; empty without statistics.interval.ms). */
  readonly queueDepth: readonly number[];
  /**
   * Messages of spread keys decided for the topic (those that carry an order header, or would
   * with orderHeaders on), since the partitioner took the topic (stats().topics[topic]).
   */
  readonly spreadMessages: number;
  /** Messages placed on another partition than their key's normal one, counted the same way. */
  readonly movedMessages: number;
}

export interface ProducerMetrics {
  readonly topics: Readonly<Record<string, TopicMetrics>>;
  /** Handed to librdkafka, delivery not yet reported. */
  readonly inflight: number;
  /** Held here while librdkafka's queue is full. */
  readonly held: number;
  /** The engine under the producer: the native batch engine, or the client library's produce(). */
  readonly engine?: 'native' | 'client';
  /** The table of exactly counted keys: how full, and how many keys it refused (raise maxTrackedKeys when that grows). */
  readonly trackedKeys: TrackedKeyStats;
}

/** A producer's own counts of one topic, which snapshot() reads (DynamicProducer's metadata, the KafkaJS-API wrapper). */
export interface TopicCounters {
  partitions: number;
  produced: number;
  delivered: number;
  failed: number;
  queueDepth: number[];
}

export class Metrics {
  private last = new Map<string, { at: number; produced: number }>();

  snapshot(topics: ReadonlyMap<string, TopicCounters>, partitioner: DynamicPartitioner, inflight: number, held: number): ProducerMetrics {
    const now = performance.now();
    const all = partitioner.stats();
    const stats = all.topics;
    const out: Record<string, TopicMetrics> = {};
    for (const [name, t] of topics) {
      const previous = this.last.get(name);
      const seconds = previous ? (now - previous.at) / 1000 : 0;
      const rate = previous && seconds > 0 ? (t.produced - previous.produced) / seconds : 0;
      this.last.set(name, { at: now, produced: t.produced });
      const s = stats[name];
      out[name] = {
        partitions: t.partitions,
        produced: t.produced,
        delivered: t.delivered,
        failed: t.failed,
        messagesPerSecond: rate,
        load: s ? s.load : [],
        imbalance: s ? s.imbalance : 1,
        hotKeys: partitioner.hotKeys(name),
        queueDepth: t.queueDepth,
        spreadMessages: s ? s.spreadMessages : 0,
        movedMessages: s ? s.movedMessages : 0,
      };
    }
    // A topic the producer forgot (beyond the topics it keeps) leaves no rate behind.
    for (const name of this.last.keys()) if (!topics.has(name)) this.last.delete(name);
    return { topics: out, inflight, held, trackedKeys: all.trackedKeys };
  }
}

/** The partitioner's 'hot', 'cooled' and 'warning' events, emitted again by the producer that owns it. */
export function relayPartitionerEvents(partitioner: DynamicPartitioner, producer: EventEmitter): void {
  partitioner.on('hot', (h) => producer.emit('hot', h));
  partitioner.on('cooled', (h) => producer.emit('cooled', h));
  partitioner.on('warning', (err) => producer.emit('warning', err));
}

/**
 * The producer's gauges in a prom-client Registry (registerPrometheus(), without a registry none)
 * and through OpenTelemetry's meter when a meter provider is registered (core/otel-metrics.ts,
 * attributed `kdp.client.id` = `clientId`): what takes them out again, or undefined. When the
 * registry is refused, the producer's partitioner is closed before the error is thrown.
 */
export function registerOrClose(registry: unknown, read: () => ProducerMetrics, partitioner: DynamicPartitioner, clientId: string): (() => void) | undefined {
  let prometheus: (() => void) | undefined;
  if (registry !== undefined) {
    try {
      prometheus = registerPrometheus(registry, read);
    } catch (err) {
      partitioner.close();
      throw err;
    }
  }
  const otel = registerOtelGauges('producer', clientId, read, producerGauges());
  if (otel === undefined) return prometheus;
  return () => {
    prometheus?.();
    otel();
  };
}

/** A key as a label's text: a string as it is, bytes as UTF-8, none as the empty string. */
function keyLabel(key: HotKey['key']): string {
  return key === null ? '' : typeof key === 'string' ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8');
}

export function registerPrometheus(registry: unknown, read: () => ProducerMetrics): () => void {
  return registerGauges(registry, 'DynamicProducer', read, producerGauges());
}

/** The producer's gauges, for Prometheus and OpenTelemetry alike. */
function producerGauges(): Array<GaugeOf<ProducerMetrics>> {
  const gauges: Array<GaugeOf<ProducerMetrics>> = [];
  const gauge = (name: string, help: string, labelNames: string[], fill: (g: any, m: ProducerMetrics) => void): void => {
    gauges.push([name, help, labelNames, fill]);
  };
  gauge('kdp_messages_produced', 'Messages produced, per topic', ['topic'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) g.set({ topic }, t.produced);
  });
  gauge('kdp_messages_delivered', 'Messages with a successful delivery report, per topic', ['topic'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) g.set({ topic }, t.delivered);
  });
  gauge('kdp_messages_failed', 'Messages whose delivery failed, per topic', ['topic'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) g.set({ topic }, t.failed);
  });
  gauge('kdp_partition_load_share', "Each partition's share of its topic's recent messages", ['topic', 'partition'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) t.load.forEach((v, p) => g.set({ topic, partition: String(p) }, v));
  });
  gauge('kdp_imbalance', 'Most loaded partition over the mean, per topic', ['topic'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) g.set({ topic }, t.imbalance);
  });
  gauge('kdp_hot_keys', 'Keys spread now, per topic', ['topic'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) g.set({ topic }, t.hotKeys.length);
  });
  gauge('kdp_hot_key_share', "Each hot key's share of its topic's recent messages", ['topic', 'key'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) for (const h of t.hotKeys) g.set({ topic, key: keyLabel(h.key) }, h.share);
  });
  gauge('kdp_hot_key_partitions', 'The partitions each hot key goes to now', ['topic', 'key'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) for (const h of t.hotKeys) g.set({ topic, key: keyLabel(h.key) }, h.partitions);
  });
  gauge('kdp_spread_messages', 'Messages of spread keys (marked with an order header), per topic, since the partitioner took the topic', ['topic'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) g.set({ topic }, t.spreadMessages);
  });
  gauge('kdp_moved_messages', "Messages placed off their key's normal partition, per topic, since the partitioner took the topic", ['topic'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) g.set({ topic }, t.movedMessages);
  });
  gauge('kdp_queue_depth', "librdkafka's queued messages per partition", ['topic', 'partition'], (g, m) => {
    for (const [topic, t] of Object.entries(m.topics)) t.queueDepth.forEach((v, p) => g.set({ topic, partition: String(p) }, v));
  });
  gauge('kdp_inflight', 'Messages handed to librdkafka, delivery not yet reported', [], (g, m) => g.set(m.inflight));
  gauge('kdp_held', "Messages held while librdkafka's queue is full", [], (g, m) => g.set(m.held));
  gauge('kdp_tracked_keys', 'Keys counted exactly now (hot ones and candidates)', [], (g, m) => g.set(m.trackedKeys.tracked));
  gauge('kdp_tracked_keys_refused', 'Keys not tracked because the table was full of stronger keys, since start', [], (g, m) => g.set(m.trackedKeys.refused));
  return gauges;
}
