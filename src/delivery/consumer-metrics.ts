// A consumer's gauges in a prom-client Registry (its `prometheus` option), from the engine's metrics() on each scrape
// (delivery.ts): what waits and is under way, what failed and became of it (failures.ts), the transactions; and the same
// through OpenTelemetry's meter while a run is under way, when a meter provider is registered.

import { type GaugeOf, registerGauges } from '../core/prometheus';
import { registerOtelGauges } from '../core/otel-metrics';
import type { FailureCounts } from './failures';
import type { TransactionCounts } from './transacted';
import type { BlockedKey } from './resequencer-types';
import type { HotKeyLag } from './hot-key-lag';

/** What the gauges read (Delivery.metrics()). */
export interface ConsumerSnapshot {
  readonly held: number;
  readonly waiting: number;
  readonly inFlight: number;
  readonly failures: FailureCounts;
  readonly transactions: TransactionCounts | null;
  readonly blockedKeys: readonly BlockedKey[];
  readonly hotKeys: readonly HotKeyLag[];
}

const GAUGES: ReadonlyArray<GaugeOf<ConsumerSnapshot>> = [
  ['kdp_consumer_held', 'Messages the resequencer holds for their predecessors', [], (g, m) => g.set(m.held)],
  ['kdp_consumer_waiting', 'Released messages waiting for a handler call', [], (g, m) => g.set(m.waiting)],
  ['kdp_consumer_in_flight', 'Handler calls under way', [], (g, m) => g.set(m.inFlight)],
  ['kdp_consumer_retries', 'Handler calls made again after a failure, since start', [], (g, m) => g.set(m.failures.retries)],
  ['kdp_consumer_dead_lettered', 'Messages written to the dead-letter topic, since start', [], (g, m) => g.set(m.failures.deadLettered)],
  ['kdp_consumer_skipped', "Messages skipped on onFailure's word, since start", [], (g, m) => g.set(m.failures.skipped)],
  ['kdp_consumer_dead_letter_failures', 'Dead-letter writes that failed, since start', [], (g, m) => g.set(m.failures.deadLetterFailures)],
  ['kdp_consumer_parked', 'Messages parked now: their dead-letter write failed, their key waits', [], (g, m) => g.set(m.failures.parked)],
  ['kdp_consumer_blocked_key_wait_ms', "The keys whose messages wait longest now (at most 20): how long, and why (predecessor, retry, parked)", ['topic', 'key', 'reason'], (g, m) => {
    for (const b of m.blockedKeys) g.set({ topic: b.topic, key: b.key, reason: b.reason }, b.waitedMs);
  }],
  ['kdp_consumer_hot_key_lag_ms', "Each hot key's lag (the 20 lagging most): the age of its last handled message when it was handled", ['topic', 'key'], (g, m) => {
    for (const h of m.hotKeys) if (h.lagMs !== null) g.set({ topic: h.topic, key: h.key }, h.lagMs);
  }],
  ['kdp_consumer_hot_key_idle_ms', "Each hot key's time since its last handled message (the same 20 keys)", ['topic', 'key'], (g, m) => {
    for (const h of m.hotKeys) g.set({ topic: h.topic, key: h.key }, h.idleMs);
  }],
  ['kdp_consumer_transactions', "Transactions committed and aborted (the `transaction` option), since start", ['outcome'], (g, m) => {
    if (m.transactions === null) return;
    g.set({ outcome: 'committed' }, m.transactions.committed);
    g.set({ outcome: 'aborted' }, m.transactions.aborted);
  }],
];

/** Registers a consumer's gauges (registerGauges()); returns what takes them out again. */
export function registerConsumerGauges(registry: unknown, read: () => ConsumerSnapshot): () => void {
  return registerGauges(registry, 'consumer', read, GAUGES);
}

/** The same gauges through OpenTelemetry's meter when a meter provider is registered (core/otel-metrics.ts); undefined without one. */
export function registerConsumerOtel(clientId: string, read: () => ConsumerSnapshot): (() => void) | undefined {
  return registerOtelGauges('consumer', clientId, read, GAUGES);
}
