// Where a consumed message's key and order header are read for the consumer side: the key as
// text (one name for a string or Buffer key, for the maps of lanes and chains), a chain's name
// and its messages' places in it, and the order header (src/partitioner/headers.ts) among its
// headers, in any shape a client gives them.

import { Buffer } from 'node:buffer';
import { decodeOrderHeader, ORDER_HEADER, type OrderHeader } from '../partitioner/headers';
import { ORDER_VALUE } from '../native/consume';

type Key = Buffer | string | null | undefined;

/** A key as text: one name per key, a string key's apart from a Buffer key's. */
export function keyText(key: Key): string {
  if (key === null || key === undefined) return '\u0000null';
  if (typeof key === 'string') return `s${key}`;
  // A Buffer's text without a view made of it (a Uint8Array of another kind gets one).
  const bytes = key as Uint8Array;
  return `b${(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('latin1')}`;
}

/**
 * A chain's name: its topic, producer and key (`text`, the key's keyText()). A producer's
 * marked messages of one key form one chain.
 */
export function chainName(topic: string, producerId: string, text: string): string {
  return `${topic}\u0000${producerId}\u0000${text}`;
}

/** One message of a chain, by its sequence (what a successor names as previous). */
export function chainPlace(chain: string, sequence: number): string {
  return `${chain}\u0000${sequence}`;
}

/** Where a native batch's message holds its order header's value (src/native/consume.ts). */
export { ORDER_VALUE };

/** The order header among a message's headers (node-rdkafka's array, or a KafkaJS-style object); null when none reads. */
export function orderOf(message: { readonly headers?: unknown }): OrderHeader | null {
  const found = (message as { [ORDER_VALUE]?: Buffer | null })[ORDER_VALUE];
  if (found !== undefined) return found === null ? null : decodeOrderHeader(found);
  const headers = message.headers;
  if (headers === undefined || headers === null || typeof headers !== 'object') return null;
  if (Array.isArray(headers)) {
    for (let i = 0; i < headers.length; i++) {
      const h = headers[i];
      if (h !== null && typeof h === 'object') {
        const v = (h as Record<string, unknown>)[ORDER_HEADER];
        if (v !== undefined) return decodeOrderHeader(v);
      }
    }
    return null;
  }
  const v = (headers as Record<string, unknown>)[ORDER_HEADER];
  return v === undefined ? null : decodeOrderHeader(Array.isArray(v) ? v[0] : v);
}
