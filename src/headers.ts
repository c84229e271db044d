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
export const ORDER_HEADER_BYTES = 31;

export type OrderKind = 'anchor' | 'spread' | 'return';
const KINDS: Record<number, OrderKind> = { [ORDER_ANCHOR]: 'anchor', [ORDER_SPREAD]: 'spread', [ORDER_RETURN]: 'return' };

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
 * Layout (big-endian): [0] version 1, [1] kind (1 anchor, 2 spread, 3 return), [2..9] producer
 * id, [10..15] sequence (48-bit), [16..21] previous (48-bit), [22..25] width, [26..29]
 * partition count, [30] partitioner code.
 */
export function encodeOrderHeader(
  kind: number, producerId: Buffer, sequence: number, previous: number, width: number, partitions: number, partitioner: number,
): Buffer {
  const b = Buffer.allocUnsafe(ORDER_HEADER_BYTES);
  b[0] = ORDER_HEADER_VERSION;
  b[1] = kind;
  producerId.copy(b, 2, 0, 8);
  b.writeUIntBE(sequence, 10, 6);
  b.writeUIntBE(previous, 16, 6);
  b.writeUInt32BE(width, 22);
  b.writeUInt32BE(partitions, 26);
  b[30] = partitioner;
  return b;
}

/** The order header in a header value, or null when it is not one this version can read. */
export function decodeOrderHeader(value: Buffer | Uint8Array | string | null | undefined): OrderHeader | null {
  if (value == null || typeof value === 'string') return null;
  const b = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (b.length < ORDER_HEADER_BYTES || b[0] !== ORDER_HEADER_VERSION) return null;
  const kind = KINDS[b[1]];
  if (!kind) return null;
  return {
    kind,
    producerId: b.toString('hex', 2, 10),
    sequence: b.readUIntBE(10, 6),
    previous: b.readUIntBE(16, 6),
    width: b.readUInt32BE(22),
    partitions: b.readUInt32BE(26),
    partitioner: b[30],
  };
}
