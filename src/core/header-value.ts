// A header's value among a message's headers, in any shape a client gives them: node-rdkafka's
// array of one-name objects, a KafkaJS-style object (a value or a list of values), a Map or a list
// of [name, value] entries (@platformatic/kafka's; names strings or bytes). Read by the order
// header's decoder (src/delivery/message-order.ts) and the trace headers' (tracing.ts).

import { Buffer } from 'node:buffer';

/** Whether a header's name (a string, or its bytes) is `name` (ASCII). */
export function named(k: unknown, name: string): boolean {
  if (k === name) return true;
  if (!(k instanceof Uint8Array) || k.byteLength !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (k[i] !== name.charCodeAt(i)) return false;
  return true;
}

/** A value as given, the first of a list. */
const first = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);

/** The value of header `name` (its first; names of ASCII), as the client gave it; undefined when there is none. */
export function headerValue(headers: unknown, name: string): unknown {
  if (headers === undefined || headers === null || typeof headers !== 'object') return undefined;
  if (Array.isArray(headers)) {
    for (let i = 0; i < headers.length; i++) {
      const h = headers[i];
      if (Array.isArray(h)) {
        if (named(h[0], name)) return first(h[1]);
      } else if (h !== null && typeof h === 'object') {
        const v = (h as Record<string, unknown>)[name];
        if (v !== undefined) return first(v);
      }
    }
    return undefined;
  }
  if (headers instanceof Map) {
    for (const [k, v] of headers) if (named(k, name)) return first(v);
    return undefined;
  }
  return first((headers as Record<string, unknown>)[name]);
}

/** A header's value as text: bytes as UTF-8, a string as it is; undefined for none or another type. */
export function headerText(headers: unknown, name: string): string | undefined {
  const value = headerValue(headers, name);
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
  return undefined;
}
