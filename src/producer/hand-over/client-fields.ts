// Everything DynamicProducer reads of node-rdkafka's private fields, in one place (node-rdkafka
// 3.x; test/producer/client-fields.test.js fails when the installed version changes them):
// - Producer#_client, the native binding: its produce() returns an error code instead of
//   throwing, which keeps exceptions (and their stack traces) off the hot path;
// - Client#_cb_configs.event.delivery_cb, set when the producer was made with dr_cb or
//   dr_msg_cb: whether a wrapped producer gets delivery reports at all;
// - HighLevelProducer#_oldProduce (Producer.prototype.produce, which its own produce() wraps
//   with serializers and a callback) and #_hl, which tell a HighLevelProducer apart.

import type { Key } from '../../core/key';
import type { Headers, ProducerLike } from '../types';

/** The native binding's produce(): an error code, 0 on success. */
export interface NativeProducer {
  produce(topic: string, partition: number, message: Buffer | null, key: Key | null | undefined, timestamp: number | null | undefined, opaque: unknown, headers: Headers | undefined): number;
}

/** The parts of node-rdkafka's HighLevelProducer (lib/producer/high-level-producer.js) used here. */
export interface HighLevelLike extends ProducerLike {
  /** Producer.prototype.produce, which its produce() wraps with serializers and a callback. */
  _oldProduce: ProducerLike['produce'];
  keySerializer?: { apply(value: unknown, cb?: unknown): unknown; async?: boolean };
  valueSerializer?: { apply(value: unknown, cb?: unknown): unknown; async?: boolean };
}

/** The native binding of a node-rdkafka Producer, when it has one with a produce(). */
export function nativeBinding(client: unknown): NativeProducer | undefined {
  const binding = (client as { _client?: Partial<NativeProducer> } | null)?._client;
  return binding && typeof binding.produce === 'function' ? (binding as NativeProducer) : undefined;
}

/**
 * Whether a producer made elsewhere gets delivery reports (it was made with dr_cb or
 * dr_msg_cb); true when that cannot be told (a producer-like object of another shape).
 */
export function deliversReports(client: unknown): boolean {
  const configs = (client as { _cb_configs?: { event?: { delivery_cb?: unknown } } } | null)?._cb_configs;
  return typeof configs !== 'object' || configs === null || Boolean(configs.event?.delivery_cb);
}

/** Whether a producer is a node-rdkafka HighLevelProducer. */
export function isHighLevel(p: ProducerLike): p is HighLevelLike {
  const h = p as Partial<HighLevelLike> & { _hl?: unknown };
  return typeof h._oldProduce === 'function' && typeof h._hl === 'object' && h._hl !== null;
}
