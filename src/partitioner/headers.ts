// The order header a DynamicProducer adds to the messages of a spread key, so that a
// consumer can put that key's messages back in the order they were produced. See
// docs/ordering.md for the format; src/delivery/resequencer.ts (consumer side) reads it.
//
// Per producer and key, the marked messages form a chain: ANCHOR (as the hot key first leaves
// its normal partition, still on it, behind its earlier unmarked messages) → SPREAD (split) or
// MOVED (relocated whole) ... (each naming its predecessor) → RETURN (first on its normal
// partition again, ahead of the unmarked messages that follow it there).

import { randomBytes } from 'node:crypto';
import { ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED } from '../core/abi';
import type { DynamicPartitioner } from './partitioner';
import { InvalidArgTypeError, OutOfRangeError } from '../core/errors';

export const ORDER_HEADER = 'kdp-order' as const;
/** The version producers write; decodeOrderHeader() reads 1 and 2. */
export const ORDER_HEADER_VERSION = 2;

export type OrderKind = 'anchor' | 'spread' | 'moved' | 'return';
const KIND_CODES: Record<number, string> = { [ORDER_ANCHOR]: 'a', [ORDER_SPREAD]: 's', [ORDER_RETURN]: 'r', [ORDER_MOVED]: 'm' };

export interface OrderHeader {
  /** The format version it was written in (1 or 2). */
  readonly version: number;
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
  /**
   * The partition of the chain's previous marked message (version 2), -1 when not known
   * (an anchor, or a version 1 header).
   */
  readonly afterPartition: number;
  /**
   * The offset of that previous message when the producer knew it before sending this one
   * (an ordered handoff), else -1.
   */
  readonly afterOffset: number;
}

/** A new random producer id (8 bytes). */
export function newProducerId(): Buffer {
  return randomBytes(8);
}

/**
 * `producerId`: the 8-byte id, or its 16 hex digits (cheaper, for a producer that sends many).
 * The header value is ASCII text, `2;<kind>;<producer id, 16 hex>;<sequence>;<previous>;
 * <width>;<partitions>;<partitioner>;<after>` with kind a (anchor), s (spread), m (moved) or r (return)
 * and after the partition of the chain's previous marked message, `<partition>:<offset>` when
 * its offset is known, or empty (an anchor): e.g. `2;s;9f86d081884c7d65;42;41;3;12;0;7`.
 * Text, because node-rdkafka (3.6, src/producer.cc) sends header values through a C string of
 * their UTF-8 text: binary values arrive mangled. docs/ordering.md is the specification.
 */
export function encodeOrderHeader(
  kind: number, producerId: Buffer | string, sequence: number, previous: number, width: number, partitions: number, partitioner: number,
  afterPartition = -1, afterOffset = -1,
): string {
  // A public helper, not the producer's path (OrderChains builds its headers from cached pieces).
  if (KIND_CODES[kind] === undefined) throw new OutOfRangeError('kind', 'one of ORDER_ANCHOR, ORDER_SPREAD, ORDER_MOVED, ORDER_RETURN', kind);
  if (!(Buffer.isBuffer(producerId) && producerId.length >= 8) && !(typeof producerId === 'string' && /^[0-9a-f]{16}$/.test(producerId))) {
    throw new InvalidArgTypeError('producerId', 'a Buffer of 8 bytes or 16 lowercase hex digits', producerId);
  }
  const counts: Array<[string, number, number]> = [
    ['sequence', sequence, 1], ['previous', previous, 0], ['width', width, 1], ['partitions', partitions, 1],
    ['partitioner', partitioner, 0], ['afterPartition', afterPartition, -1], ['afterOffset', afterOffset, -1],
  ];
  for (const [argument, value, min] of counts) {
    if (typeof value !== 'number') throw new InvalidArgTypeError(argument, `an integer >= ${min}`, value);
    if (!Number.isSafeInteger(value) || value < min) throw new OutOfRangeError(argument, `an integer >= ${min}`, value);
  }
  const id = typeof producerId === 'string' ? producerId : producerId.toString('hex', 0, 8);
  return headStart(kind, id) + sequence + ';' + previous + headEnd(width, partitions, partitioner) + after(afterPartition, afterOffset);
}

/** The header text up to the sequence: `<version>;<kind>;<producer id>;`. */
function headStart(kind: number, id: string): string {
  return `${ORDER_HEADER_VERSION};${KIND_CODES[kind]};${id};`;
}

/** The header text after `previous` up to `after`: `;<width>;<partitions>;<partitioner>;`. */
function headEnd(width: number, partitions: number, partitioner: number): string {
  return `;${width};${partitions};${partitioner};`;
}

function after(partition: number, offset: number): string {
  return partition < 0 ? '' : offset < 0 ? String(partition) : `${partition}:${offset}`;
}

/**
 * An order header as its fields: the native engine's form (OrderChains with `fields` on).
 * NativeClient writes its text straight into the batch (writeOrderFields), so no string and no
 * header object with its text is made per spread message. Reading `header['kdp-order']` gives
 * the same text as the other form. A handoff completes it (complete()) once its predecessor's
 * offset is known.
 */
export class OrderFields {
  constructor(
    /** `<version>;<kind>;<producer id>;` as bytes (one Buffer per kind and producer). */
    readonly start: Buffer,
    /** Its sequence, and its predecessor's (0 for an anchor): given again to a message held before it is handed over (OrderChains.renumber()). */
    public sequence: number,
    public previous: number,
    readonly width: number,
    readonly partitions: number,
    readonly partitioner: number,
    /** The partition of the chain's previous marked message, -1: none (an anchor's, until complete()). */
    public after: number,
    /** That message's offset, once known (complete()), else -1. */
    public afterOffset: number,
  ) {}

  /** `after` becomes `<partition>:<offset>`: the predecessor's place, known before this message is sent. */
  complete(partition: number, offset: number): void {
    this.after = partition;
    this.afterOffset = offset;
  }

  /** The header's text (what writeOrderFields writes). */
  get [ORDER_HEADER](): string {
    return `${this.start.toString('latin1')}${this.sequence};${this.previous}${headEnd(this.width, this.partitions, this.partitioner)}${after(this.after, this.afterOffset)}`;
  }
}

const SEMICOLON = 0x3b;
const COLON = 0x3a;

/** Writes `fields`' text at `pos` of `data` (room for ORDER_FIELDS_MAX_BYTES is the caller's); returns the position after it. */
export function writeOrderFields(data: Uint8Array, pos: number, fields: OrderFields): number {
  data.set(fields.start, pos);
  pos += fields.start.length;
  pos = writeDigits(data, pos, fields.sequence);
  data[pos++] = SEMICOLON;
  pos = writeDigits(data, pos, fields.previous);
  data[pos++] = SEMICOLON;
  pos = writeDigits(data, pos, fields.width);
  data[pos++] = SEMICOLON;
  pos = writeDigits(data, pos, fields.partitions);
  data[pos++] = SEMICOLON;
  pos = writeDigits(data, pos, fields.partitioner);
  data[pos++] = SEMICOLON;
  if (fields.afterOffset >= 0) {
    pos = writeDigits(data, pos, fields.after);
    data[pos++] = COLON;
    pos = writeDigits(data, pos, fields.afterOffset);
  } else if (fields.after >= 0) {
    pos = writeDigits(data, pos, fields.after);
  }
  return pos;
}

/** The most bytes writeOrderFields writes: a start of at most 24 bytes, seven integers of at most 16 digits, six separators. */
export const ORDER_FIELDS_MAX_BYTES = 24 + 7 * 16 + 6;

/** A non-negative integer (up to 2^53) in decimal ASCII at `pos`; the position after it. */
function writeDigits(data: Uint8Array, pos: number, n: number): number {
  if (n < 10) {
    data[pos] = 0x30 + n;
    return pos + 1;
  }
  let end = pos + 1;
  for (let v = n; v >= 10; v = Math.floor(v / 10)) end++;
  for (let i = end - 1, v = n; i >= pos; i--) {
    const q = Math.floor(v / 10);
    data[i] = 0x30 + (v - q * 10);
    v = q;
  }
  return end;
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
  /** Per tracked-key entry: the partition of its last marked message. */
  private readonly at: Int32Array;
  private readonly starts: string[] = [];
  private end = '';
  private endWidth = -1;
  private endPartitions = -1;
  /** The entry and chain link the last header() replaced, for undo(). */
  private lastEntry = -1;
  private lastPrevious = 0;
  private lastAt = -1;
  private lastSequence = 0;

  constructor(private readonly partitioner: DynamicPartitioner, producerId: Buffer | string, private readonly code: number) {
    this.chain = new Float64Array(partitioner.trackedKeysBound);
    this.at = new Int32Array(partitioner.trackedKeysBound);
    this.renumberedFrom = new Float64Array(partitioner.trackedKeysBound);
    this.renumberedTo = new Float64Array(partitioner.trackedKeysBound);
    const id = typeof producerId === 'string' ? producerId : producerId.toString('hex', 0, 8);
    for (const kind of [ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN, ORDER_MOVED]) {
      this.starts[kind] = headStart(kind, id);
      this.startBytes[kind] = Buffer.from(this.starts[kind], 'latin1');
    }
  }

  /** The chains as the last checkpoint() left them (a transaction's commit), for rollback() (its abort). */
  private kept: { chain: Float64Array; at: Int32Array } | undefined;

  /** The chains now are those of what was written: a transaction committed (or a transactional producer began). */
  checkpoint(): void {
    if (this.kept === undefined) this.kept = { chain: new Float64Array(this.chain.length), at: new Int32Array(this.at.length) };
    this.kept.chain.set(this.chain);
    this.kept.at.set(this.at);
  }

  /**
   * A transaction aborted: its marked messages are never read, so each key's chain goes on from
   * its last message written (the checkpoint), not from one of them a consumer would wait for.
   */
  rollback(): void {
    if (this.kept === undefined) return;
    this.chain.set(this.kept.chain);
    this.at.set(this.kept.at);
  }

  /**
   * Whether header() gives OrderFields (for the native engine, which writes their text itself)
   * rather than `{ 'kdp-order': text }` objects (for a client library's produce(), and spread
   * into KafkaJS messages' headers).
   */
  fields = false;
  private readonly startBytes: Buffer[] = [];

  /**
   * The entries with a chain open (a marked message since their anchor), and the slots there
   * are (one per tracked-key entry, trackedKeysBound): a table's size and bound, for sampling
   * (bench/soak/tables.js), never the message path (a pass over every slot).
   */
  openChains(): { open: number; slots: number } {
    const chain = this.chain;
    let open = 0;
    for (let i = 0; i < chain.length; i++) if (chain[i] !== 0) open++;
    return { open, slots: chain.length };
  }

  /**
   * The order header of the message the partitioner just placed on `partition` among
   * `partitions` by decide(), whose order marker (partitioner.decision.order) is `order`, not
   * ORDER_NONE: a `{ 'kdp-order': text }` object, or with `fields` on an OrderFields.
   */
  header(order: number, partitions: number, partition = -1): Record<typeof ORDER_HEADER, string> {
    const decision = this.partitioner.decision;
    const entry = decision.entry;
    const sequence = ++this.sequence;
    this.lastSequence = sequence;
    const previous = this.chain[entry];
    const at = this.at[entry];
    this.lastEntry = entry;
    this.lastPrevious = previous;
    this.lastAt = at;
    this.chain[entry] = order === ORDER_RETURN ? 0 : sequence;
    this.at[entry] = partition;
    const width = decision.width;
    if (width !== this.endWidth || partitions !== this.endPartitions) {
      this.endWidth = width;
      this.endPartitions = partitions;
      this.end = headEnd(width, partitions, this.code);
    }
    if (this.fields) {
      const anchor = order === ORDER_ANCHOR;
      return new OrderFields(this.startBytes[order], sequence, anchor ? 0 : previous, width, partitions, this.code, anchor ? -1 : at, -1);
    }
    // A literal name (ORDER_HEADER): the object is made from a boilerplate.
    if (order === ORDER_ANCHOR) return { 'kdp-order': this.starts[order] + sequence + ';0' + this.end };
    return { 'kdp-order': this.starts[order] + sequence + ';' + previous + this.end + (at >= 0 ? at : '') };
  }

  /**
   * Per tracked-key entry: the last message renumber() gave a new sequence, as [its sequence
   * at placement, its new one], so that the next held message of the key names the new one.
   */
  private readonly renumberedFrom: Float64Array;
  private readonly renumberedTo: Float64Array;

  /**
   * A message held in the producer (an ordered handoff) is handed over now: it takes the next
   * sequence, and names its predecessor by the predecessor's new one where that was renumbered
   * too. Its key's chain goes on from the new sequence. So a producer's marked messages reach
   * every partition in the order of their sequences, which a consumer's handled record relies on
   * (docs/ordering.md, "What a record holds"): held with its sequence of placement, a message
   * would reach its partition after later-numbered messages of other keys.
   */
  renumber(entry: number, header: Record<typeof ORDER_HEADER, string>): void {
    const sequence = ++this.sequence;
    const fields = header instanceof OrderFields ? header : undefined;
    let old: number;
    let previous: number;
    let parts: string[] | undefined;
    if (fields !== undefined) {
      old = fields.sequence;
      previous = fields.previous;
    } else {
      parts = header[ORDER_HEADER].split(';');
      old = Number(parts[3]);
      previous = Number(parts[4]);
    }
    if (previous !== 0 && previous === this.renumberedFrom[entry]) previous = this.renumberedTo[entry];
    this.renumberedFrom[entry] = old;
    this.renumberedTo[entry] = sequence;
    if (this.chain[entry] === old) this.chain[entry] = sequence;
    if (fields !== undefined) {
      fields.sequence = sequence;
      fields.previous = previous;
    } else {
      parts![3] = String(sequence);
      parts![4] = String(previous);
      header[ORDER_HEADER] = parts!.join(';');
    }
  }

  /** Takes the last header() back (its message was refused for good): its key's chain has no gap. */
  undo(): void {
    this.chain[this.lastEntry] = this.lastPrevious;
    this.at[this.lastEntry] = this.lastAt;
    // A renumber() since (a report handled meanwhile) took a later sequence: this one stays a gap.
    if (this.sequence === this.lastSequence) this.sequence--;
  }
}

// decodeOrderHeader reads a header in one pass over its bytes (a Buffer, as consumers get it;
// text is read as its bytes, when it is ASCII), without splitting, regular expressions or a
// text copy: it runs once for every message of a spread key a consumer reads.

/** Where the field being read starts (decimal() moves it past the field's terminator). */
let pos = 0;

/**
 * A decimal field of at most `digits` digits without a leading zero (but "0"), ending at `end`
 * (';', ':' or -1, the end of the bytes `b` of length `n`); -1 if there is none. Moves pos past the terminator.
 */
function decimal(b: Uint8Array, n: number, digits: number, end: number): number {
  const start = pos;
  let i = pos;
  let v = 0;
  let c = i < n ? b[i] : -1;
  while (c >= 48 && c <= 57) {
    v = v * 10 + (c - 48);
    c = ++i < n ? b[i] : -1;
  }
  const length = i - start;
  if (length === 0 || length > digits || (length > 1 && b[start] === 48) || c !== end) return -1;
  pos = i + 1;
  return v;
}

/**
 * The order header in a header value, or null when it is not one this version can read
 * (versions 1 and 2). Never throws: any other value (a number, an object, text of another
 * format) gives null, and its message passes as unmarked.
 */
export function decodeOrderHeader(value: unknown): OrderHeader | null {
  if (value instanceof Uint8Array) return readHeader(value, null);
  if (typeof value !== 'string' || value.length > 128) return null;
  // A header is ASCII: other text is none (and its bytes could read as one).
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 127) return null;
  return readHeader(Buffer.from(value, 'latin1'), value);
}

/** The header in bytes `b` (`text`: the same as text, when given so). */
function readHeader(b: Uint8Array, text: string | null): OrderHeader | null {
  const n = b.length;
  if (n > 128 || n < 27) return null;
  const v = b[0];
  const version = v === 50 ? 2 : v === 49 ? 1 : 0;
  if (version === 0 || b[1] !== 59 || b[3] !== 59) return null;
  const k = b[2];
  const kind: OrderKind | undefined = k === 115 ? 'spread' : k === 97 ? 'anchor' : k === 114 ? 'return' : k === 109 ? 'moved' : undefined;
  if (kind === undefined) return null;
  for (let i = 4; i < 20; i++) {
    const c = b[i];
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return null;
  }
  if (b[20] !== 59) return null;
  pos = 21;
  const sequence = decimal(b, n, 16, 59);
  const previous = decimal(b, n, 16, 59);
  const width = decimal(b, n, 16, 59);
  const partitions = decimal(b, n, 16, 59);
  // The last field of version 1 ends the text; version 2 has `after` behind it.
  const partitioner = decimal(b, n, 16, version === 2 ? 59 : -1);
  if (sequence < 0 || previous < 0 || width < 0 || partitions < 0 || partitioner < 0) return null;
  let afterPartition = -1;
  let afterOffset = -1;
  if (version === 2) {
    if (pos < n) {
      let end = pos;
      while (end < n && b[end] !== 58) end++;
      afterPartition = decimal(b, n, 10, end < n ? 58 : -1);
      if (afterPartition < 0) return null;
      if (end < n) {
        afterOffset = decimal(b, n, 16, -1);
        if (afterOffset < 0) return null;
      }
    }
  }
  if (pos < n) return null;
  // An anchor starts a chain (previous 0); anything else names an earlier message of its chain.
  if (sequence === 0 || (kind === 'anchor' && previous !== 0) || (previous !== 0 && previous >= sequence)) return null;
  const producerId = text !== null ? text.slice(4, 20)
    : Buffer.isBuffer(b) ? b.toString('latin1', 4, 20) : Buffer.from(b.buffer, b.byteOffset + 4, 16).toString('latin1');
  return { version, kind, producerId, sequence, previous, width, partitions, partitioner, afterPartition, afterOffset };
}
