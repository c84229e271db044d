// Where the consumer side reads a message's key and order header, in any shape a client gives
// them: the key as text (one name per key, for the maps of lanes and chains), a chain's name and
// places, and the order header (src/partitioner/headers.ts).

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

/** A key as the Resequencer reads it: a Buffer or string as it is; a key a client deserialized, as text. */
export function keyOf(key: unknown): Buffer | string | null {
  if (key === undefined || key === null) return null;
  if (typeof key === 'string' || Buffer.isBuffer(key)) return key;
  if (key instanceof Uint8Array) return Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  if (typeof key === 'object') {
    try {
      return JSON.stringify(key) ?? String(key);
    } catch {
      return String(key);
    }
  }
  return String(key);
}

/** A chain's name (a producer's marked messages of one key): its topic, producer and key (`text`, the key's keyText()). */
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

const ORDER_HEADER_BYTES = Buffer.from(ORDER_HEADER);

/** The order header's value among [name, value] header entries (a Buffer or string name, as @platformatic/kafka gives them), or null. */
export function orderValueAmong(entries: ReadonlyArray<readonly [unknown, unknown]> | undefined): unknown {
  if (entries === undefined) return null;
  for (let i = 0; i < entries.length; i++) {
    const name = entries[i][0];
    if (name === ORDER_HEADER || (Buffer.isBuffer(name) && name.length === ORDER_HEADER_BYTES.length && name.equals(ORDER_HEADER_BYTES))) return entries[i][1] ?? null;
  }
  return null;
}
