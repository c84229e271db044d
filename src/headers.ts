// The order header a DynamicProducer adds to the messages of a spread key, so that a
// consumer can put that key's messages back in the order they were produced. See README
// "Order headers" for the format; src/resequencer.ts (consumer side) reads it.
//
// Per producer and key, the marked messages form a chain: ANCHOR (first after the key turned
// hot, on its normal partition, behind its earlier cold messages) → SPREAD ... (each naming
// its predecessor) → RETURN (first after it cooled, on its normal partition again, ahead of
// the cold messages that follow it there).

import { randomBytes } from 'node:crypto';
import { ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN } from './partitioner';

export const ORDER_HEADER = 'kdp-order';
export const ORDER_HEADER_VERSION = 1;

export type OrderKind = 'anchor' | 'spread' | 'return';
const KIND_CODES: Record<number, string> = { [ORDER_ANCHOR]: 'a', [ORDER_SPREAD]: 's', [ORDER_RETURN]: 'r' };
const KINDS: Record<string, OrderKind> = { a: 'anchor', s: 'spread', r: 'return' };

export interface OrderHeader {
  readonly kind: OrderKind;
  /** 16 hex digits naming the producer instance. */
  readonly producerId: string;
  /** This message's place in its producer's sequence of marked messages (from 1). */
  readonly sequence: number;
  /** The sequence of the previous marked message of the same key from the same producer; 0 for an anchor. */
  readonly previous: number;
  /** How many partitions the key could use (allowedPartitions(key, partitions, width)). */
  readonly width: number;
  /** The topic's partition count the allowed set was computed for. */
  readonly partitions: number;
  /** The base partitioner's code (index in PARTITIONERS). */
  readonly partitioner: number;
}

/** A new random producer id (8 bytes). */
export function newProducerId(): Buffer {
  return randomBytes(8);
}

/**
 * `producerId`: the 8-byte id, or its 16 hex digits (cheaper, for a producer that sends many).
 * The header value is ASCII text, `1;<kind>;<producer id, 16 hex>;<sequence>;<previous>;
 * <width>;<partitions>;<partitioner>` with kind a (anchor), s (spread) or r (return), e.g.
 * `1;s;9f86d081884c7d65;42;41;3;12;0`. Text, because node-rdkafka (3.6, src/producer.cc) sends
 * header values through a C string of their UTF-8 text: binary values arrive mangled.
 */
export function encodeOrderHeader(
  kind: number, producerId: Buffer | string, sequence: number, previous: number, width: number, partitions: number, partitioner: number,
): string {
  const id = typeof producerId === 'string' ? producerId : producerId.toString('hex', 0, 8);
  return `${ORDER_HEADER_VERSION};${KIND_CODES[kind]};${id};${sequence};${previous};${width};${partitions};${partitioner}`;
}

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** The order header in a header value, or null when it is not one this version can read. */
export function decodeOrderHeader(value: Buffer | Uint8Array | string | null | undefined): OrderHeader | null {
  if (value == null) return null;
  const text = typeof value === 'string' ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('latin1');
  const f = text.split(';');
  if (f.length !== 8 || f[0] !== String(ORDER_HEADER_VERSION)) return null;
  const kind = KINDS[f[1]];
  if (!kind || !/^[0-9a-f]{16}$/.test(f[2])) return null;
  for (let i = 3; i < 8; i++) if (!DECIMAL.test(f[i])) return null;
  return {
    kind,
    producerId: f[2],
    sequence: Number(f[3]),
    previous: Number(f[4]),
    width: Number(f[5]),
    partitions: Number(f[6]),
    partitioner: Number(f[7]),
  };
}
