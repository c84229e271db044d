// Where the consumer side reads a message's key and order header, in any shape a client gives
// them: the key as text (one name per key, for the maps of lanes and chains), a chain's name and
// places, and the order header (src/partitioner/headers.ts).

import { Buffer } from 'node:buffer';
import { decodeOrderHeader, ORDER_HEADER, type OrderHeader } from '../partitioner/headers';
import { ORDER_VALUE } from '../native/consume';
import { headerValue } from '../core/header-value';

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

/** The order header among a message's headers (in any shape: core/header-value.ts); null when none reads. */
export function orderOf(message: { readonly headers?: unknown }): OrderHeader | null {
  const found = (message as { [ORDER_VALUE]?: Buffer | null })[ORDER_VALUE];
  if (found !== undefined) return found === null ? null : decodeOrderHeader(found);
  const v = headerValue(message.headers, ORDER_HEADER);
  return v === undefined ? null : decodeOrderHeader(v);
}

/** The order header's value among [name, value] header entries (a Buffer or string name, as @platformatic/kafka gives them), or null. */
export function orderValueAmong(entries: ReadonlyArray<readonly [unknown, unknown]> | undefined): unknown {
  return headerValue(entries, ORDER_HEADER) ?? null;
}
