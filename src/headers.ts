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
import type { DynamicPartitioner } from './partitioner';

export const ORDER_HEADER = 'kdp-order' as const;
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
  return headStart(kind, id) + sequence + ';' + previous + headEnd(width, partitions, partitioner);
}

/** The header text up to the sequence: `<version>;<kind>;<producer id>;`. */
function headStart(kind: number, id: string): string {
  return `${ORDER_HEADER_VERSION};${KIND_CODES[kind]};${id};`;
}

/** The header text after `previous`: `;<width>;<partitions>;<partitioner>`. */
function headEnd(width: number, partitions: number, partitioner: number): string {
  return `;${width};${partitions};${partitioner}`;
}

/**
 * One producer's order headers: per tracked key, the sequence of its last marked message
 * (its chain), and the header of each new marked message. Used by DynamicProducer and the
 * KafkaJS adapter. The text is built from cached pieces: this runs for every message of a
 * spread key.
 */
export class OrderChains {
  private sequence = 0;
  /** Per tracked-key entry: the sequence of its last marked message (0: none since its anchor). */
  private readonly chain: Float64Array;
  private readonly starts: string[] = [];
  private end = '';
  private endWidth = -1;
  private endPartitions = -1;
  /** The entry and chain link the last header() replaced, for undo(). */
  private lastEntry = -1;
  private lastPrevious = 0;

  constructor(private readonly partitioner: DynamicPartitioner, producerId: Buffer | string, private readonly code: number) {
    this.chain = new Float64Array(partitioner.options.maxTrackedKeys);
    const id = typeof producerId === 'string' ? producerId : producerId.toString('hex', 0, 8);
    for (const kind of [ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN]) this.starts[kind] = headStart(kind, id);
  }

  /**
   * The order header of the message the partitioner just placed among `partitions`, whose
   * order marker (lastOrder()) is `order`, not ORDER_NONE: a `{ 'kdp-order': text }` object.
   */
  header(order: number, partitions: number): Record<typeof ORDER_HEADER, string> {
    const entry = this.partitioner.lastEntry();
    const sequence = ++this.sequence;
    const previous = this.chain[entry];
    this.lastEntry = entry;
    this.lastPrevious = previous;
    this.chain[entry] = order === ORDER_RETURN ? 0 : sequence;
    const width = order === ORDER_SPREAD ? this.partitioner.entryWidthOf(entry) : 1;
    if (width !== this.endWidth || partitions !== this.endPartitions) {
      this.endWidth = width;
      this.endPartitions = partitions;
      this.end = headEnd(width, partitions, this.code);
    }
    // A literal name (ORDER_HEADER): the object is made from a boilerplate.
    return { 'kdp-order': this.starts[order] + sequence + ';' + (order === ORDER_ANCHOR ? 0 : previous) + this.end };
  }

  /** Takes the last header() back (its message was refused for good): its key's chain has no gap. */
  undo(): void {
    this.chain[this.lastEntry] = this.lastPrevious;
    this.sequence--;
  }
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
