// The checks of what the caller hands DynamicProducer (headers, timestamps, timeouts) and the
// serializers of a wrapped HighLevelProducer: each bad argument gets a typed error naming it.

// Node's global Buffer is a getter on globalThis, called at each read: the module's is a plain binding.
import { Buffer } from 'node:buffer';
import { ORDER_HEADER } from '../../partitioner/headers';
import { InvalidArgTypeError, OutOfRangeError, StateError } from '../../core/errors';
import { checkKey } from '../../core/key';
import type { HighLevelLike } from '../hand-over/client-fields';
import type { Headers } from '../types';

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * The argument checks the send path makes (place/placement.ts), made up front for a message whose
 * taking is deferred (it waits for room) or that is one of a batch (each checked before any is
 * sent). A HighLevelProducer's serializers may take other types: its value and key are checked
 * after them, when the message is taken.
 */
export function checkMessage(topic: unknown, value: unknown, key: unknown, headers: unknown, timestamp: unknown, highLevel: boolean): void {
  if (typeof topic !== 'string' || topic.length === 0) throw new InvalidArgTypeError('topic', 'a non-empty string', topic);
  if (!highLevel) {
    if (typeof value !== 'string' && value !== null && value !== undefined && !(value instanceof Uint8Array)) throw new InvalidArgTypeError('value', 'a Buffer, Uint8Array, string or null', value);
    checkKey('key', key);
  }
  if (headers !== undefined && headers !== null) checkHeaders(headers);
  if (timestamp !== undefined && timestamp !== null && badTimestamp(timestamp)) throw timestampError(timestamp);
}

/**
 * Checks the caller's headers (not null or undefined) in one scan; returns the index of the
 * first one named `kdp-order` (a copy of a consumed message's, as a consume-transform-produce
 * app forwards them), or -1. A for-in, not Object.entries: no allocation per message.
 */
export function checkHeaders(headers: unknown): number {
  if (!Array.isArray(headers)) throw new InvalidArgTypeError('headers', 'an array of { name: string | Buffer } objects', headers);
  let forwarded = -1;
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i];
    if (typeof h !== 'object' || h === null || Array.isArray(h)) {
      throw new InvalidArgTypeError(`headers[${i}]`, 'an object { name: string | Buffer }', h);
    }
    // node-rdkafka sends only the first property of each header object.
    let count = 0;
    let name = '';
    for (const own in h) {
      if (!hasOwn.call(h, own)) continue;
      count++;
      name = own;
    }
    if (count !== 1) throw new InvalidArgTypeError(`headers[${i}]`, 'an object with exactly one name: value', h);
    const value = h[name];
    if (typeof value !== 'string' && !Buffer.isBuffer(value)) throw new InvalidArgTypeError(`headers[${i}]['${name}']`, 'a string or Buffer', value);
    if (name === ORDER_HEADER && forwarded === -1) forwarded = i;
  }
  return forwarded;
}

/**
 * The caller's headers without any `kdp-order` one (the first at `from`), in their order; a
 * new array, the caller's is left alone. `ours`: put in place of the first instead.
 */
export function withoutForwarded(headers: Headers, from: number, ours?: Record<string, string>): Headers {
  const out = headers.slice(0, from);
  if (ours !== undefined) out.push(ours);
  for (let i = from + 1; i < headers.length; i++) {
    if (!hasOwn.call(headers[i], ORDER_HEADER)) out.push(headers[i]);
  }
  return out;
}

/** Whether a timestamp (not null or undefined) is one a message can have: ms from 0 to 2^53 - 1. */
export function badTimestamp(timestamp: unknown): boolean {
  return typeof timestamp !== 'number' || !(timestamp >= 0 && timestamp <= Number.MAX_SAFE_INTEGER);
}

/** A timestamp that is not a number, or one no message can have (NaN, negative, beyond 2^53). */
export function timestampError(timestamp: unknown): InvalidArgTypeError | OutOfRangeError {
  if (typeof timestamp !== 'number') return new InvalidArgTypeError('timestamp', 'a number (ms since the epoch), null or undefined', timestamp);
  return new OutOfRangeError('timestamp', 'ms since the epoch: a number from 0 to Number.MAX_SAFE_INTEGER', timestamp);
}

/** A HighLevelProducer serializer applied to one key or value; only synchronous ones can be. */
export function serialize(serializer: HighLevelLike['keySerializer'], value: unknown, what: 'key' | 'value'): unknown {
  if (serializer === undefined || typeof serializer.apply !== 'function') return value;
  if (serializer.async) {
    throw new StateError(`the wrapped HighLevelProducer has an asynchronous ${what} serializer: DynamicProducer must know the ${what} before it partitions; use a synchronous one`);
  }
  const out = serializer.apply(value);
  if (out !== null && typeof out === 'object' && typeof (out as Promise<unknown>).then === 'function') {
    throw new StateError(`the wrapped HighLevelProducer's ${what} serializer returned a Promise: DynamicProducer needs a synchronous one`);
  }
  return out;
}
