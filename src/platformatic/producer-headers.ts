// The order header on @platformatic/kafka's messages (wrapPlatformaticProducer, producer.ts):
// their headers are an object or a Map, whose names and values its header serializers turn into
// bytes (stringSerializers: strings; none: Buffers as they are), so the header is given as one or
// the other (options.headerType). And the bytes of a message's key, which its partition follows.

import { ORDER_HEADER } from '../partitioner/headers';
import { InvalidArgTypeError } from '../core/errors';

/** A message's headers as @platformatic/kafka takes them. */
export type PlatformaticHeaders = Map<unknown, unknown> | Record<string, unknown>;

const ORDER_NAME_BYTES = Buffer.from(ORDER_HEADER, 'latin1');
const hasOwn = Object.prototype.hasOwnProperty;

/** Whether a header name (a string or bytes) is the order header's. */
function isOrderName(name: unknown): boolean {
  return name === ORDER_HEADER || (name instanceof Uint8Array && Buffer.compare(name, ORDER_NAME_BYTES) === 0);
}

/**
 * `headers` without a `kdp-order` entry (a copy of a consumed message's: a consumer would read it
 * as ours), as a copy; the same object when it has none. The caller's headers are not changed.
 */
export function withoutOrderHeader(headers: PlatformaticHeaders): PlatformaticHeaders {
  if (headers instanceof Map) {
    let found = false;
    for (const name of headers.keys()) {
      if (isOrderName(name)) {
        found = true;
        break;
      }
    }
    if (!found) return headers;
    const out = new Map<unknown, unknown>();
    for (const [name, value] of headers) if (!isOrderName(name)) out.set(name, value);
    return out;
  }
  if (typeof headers !== 'object' || !hasOwn.call(headers, ORDER_HEADER)) return headers;
  const { [ORDER_HEADER]: _forwarded, ...rest } = headers;
  return rest;
}

/**
 * A copy of `headers` (none, an object or a Map) with the order header `text`, in place of a
 * `kdp-order` entry already there. `asBuffer`: name and value as Buffers, in a Map (an object's
 * names are strings); else as strings, in the form given (an object when none).
 */
export function withOrderHeader(headers: PlatformaticHeaders | undefined | null, text: string, asBuffer: boolean): PlatformaticHeaders {
  return withHeader(headers, ORDER_HEADER, text, asBuffer, isOrderName);
}

/**
 * A copy of `headers` with header `name` = `text`, in place of the first entry `same` finds
 * (and without the others), else added; forms as withOrderHeader() says.
 */
export function withHeader(headers: PlatformaticHeaders | undefined | null, name: string, text: string, asBuffer: boolean,
  same: (k: unknown) => boolean = (k) => k === name): PlatformaticHeaders {
  const key = asBuffer ? Buffer.from(name, 'latin1') : name;
  const value = asBuffer ? Buffer.from(text, 'latin1') : text;
  if (!asBuffer && !(headers instanceof Map)) {
    if (headers == null) return { [name]: text };
    return { ...headers, [name]: text };
  }
  const out = new Map<unknown, unknown>();
  let placed = false;
  if (headers != null) {
    for (const [k, v] of headers instanceof Map ? headers : Object.entries(headers)) {
      if (!same(k)) out.set(k, v);
      else if (!placed) {
        out.set(key, value);
        placed = true;
      }
    }
  }
  if (!placed) out.set(key, value);
  return out;
}

/** What serializedKey() needs of the producer: its key serializer, run through getSendTopicPartitions(). */
interface KeySerializing {
  getSendTopicPartitions?(options: { messages: any[]; partitioner: (m: unknown, key: Buffer | undefined) => number }): unknown;
}

/**
 * The key a message's partition follows: a string (hashed as its UTF-8 bytes, as stringSerializers
 * send it) or bytes as given, null for none; a key of another type (for a JSON or Avro serializer)
 * as the producer's own key serializer makes it, through its getSendTopicPartitions().
 */
export function serializedKey(producer: KeySerializing, message: { key?: unknown }): string | Uint8Array | null {
  const key = message.key;
  if (typeof key === 'string' || key instanceof Uint8Array) return key;
  if (key === undefined || key === null) return null;
  if (typeof producer.getSendTopicPartitions !== 'function') {
    throw new InvalidArgTypeError('message.key', 'a string or a Buffer (this producer has no getSendTopicPartitions to serialize it with)', key);
  }
  let bytes: Buffer | undefined;
  const { partition: _partition, ...copy } = message as Record<string, unknown>;
  producer.getSendTopicPartitions({
    messages: [copy],
    partitioner: (_m, k) => {
      bytes = k;
      return 0;
    },
  });
  return bytes instanceof Uint8Array ? bytes : null;
}
