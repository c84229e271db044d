// wrapProducer(): a DynamicProducer (producer.ts) over a producer the application made and
// connected already, a node-rdkafka Producer or HighLevelProducer (or one of the same
// interface), which keeps its configuration; hand-over/client-fields.ts tells which it is.

import { InvalidArgTypeError, StateError } from '../core/errors';
import { isHighLevel } from './hand-over/client-fields';
import { DynamicProducer } from './producer';
import type { DynamicProducerOptions, ProducerLike } from './types';

/**
 * Swaps dynamic partitioning into an app that already has a connected node-rdkafka
 * Producer or HighLevelProducer (or a producer with the same interface). The existing
 * producer keeps its configuration; its `partitioner` topic setting (librdkafka's default if
 * unset) becomes the base partitioner. send() needs delivery reports (dr_cb) enabled on it
 * (a HighLevelProducer always has them). A HighLevelProducer's key and value serializers are
 * applied here, before partitioning, so the partition is the serialized key's; they must be
 * synchronous.
 */
export function wrapProducer(existing: ProducerLike, options: DynamicProducerOptions = {}): DynamicProducer {
  if (typeof existing !== 'object' || existing === null || typeof existing.produce !== 'function' ||
    typeof existing.getMetadata !== 'function' || typeof existing.on !== 'function') {
    throw new InvalidArgTypeError('existing', 'a node-rdkafka Producer (with produce, getMetadata and on)', existing);
  }
  if (typeof existing.isConnected === 'function' && !existing.isConnected()) {
    throw new StateError('wrapProducer needs a connected producer: call connect() on it first');
  }
  // A HighLevelProducer polls fast only for messages of its own produce(): poll for ours.
  // pollIntervalMs defaults differently here; anything but an options object is left for the schema to refuse.
  const given = options as Record<string, unknown> | null | undefined;
  const withPolling = typeof given === 'object' && given !== null && !Array.isArray(given) && given.pollIntervalMs === undefined
    ? { ...given, pollIntervalMs: isHighLevel(existing) ? 5 : 0 }
    : given;
  const producer = new DynamicProducer({}, {}, withPolling as DynamicProducerOptions, existing);
  producer.refreshMetadata().catch((err) => producer.emit('error', err));
  return producer;
}
