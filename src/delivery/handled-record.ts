// The handled record a consumer commits with each partition's offset (Kafka's commit metadata):
// what it has handled above the committed offset, which other members need to release a spread
// key's messages whose predecessor is on this partition. records.ts writes and reads them; the
// format and its sizes are docs/ordering.md's ("Format and size").
//
// Text, since Kafka's metadata is a string: `kdp1:` and the base64 of
//   varint   end - offset            offsets in [offset, end) were read; above end, nothing is known
//   byte     0: deltas | 1: bitmap   how the unhandled offsets are written (the smaller of the two)
//   ...      unhandled offsets in (offset, end): varint count, then varint gaps; or a bitmap of (offset, end)
//   varint   producers, then per producer 8 bytes of id and varint highest sequence read here
//   varint   unhandled marked messages, then per message, ordered by producer index and sequence:
//            varint producer index step from the message before (the first: the index), and varint
//            sequence (the first of a producer) or step from the one before, less 1 (the others)
// `offset` itself (the committed offset) is unhandled whenever end > offset: that is why it is committed.

import { Buffer } from 'node:buffer';

/** What a member has handled of one partition, as of one commit. */
export interface HandledRecord {
  /** The committed offset: every message below it is handled. */
  readonly offset: number;
  /** Offsets in [offset, end) not in `unhandled` are handled (or hold no message); nothing is known from end on. */
  readonly end: number;
  /** Offsets in [offset, end) unhandled, ascending (offset itself first when end > offset). */
  readonly unhandled: readonly number[];
  /** Per producer whose marked messages were read here: its id (16 hex digits) and the highest sequence read. */
  readonly producers: ReadonlyArray<{ readonly id: string; readonly read: number }>;
  /** Unhandled marked messages read here: their producer's index in `producers` and their sequence (each once). */
  readonly marked: ReadonlyArray<{ readonly producer: number; readonly sequence: number }>;
}

/** The record's text starts so: a record of another client (or garbled text) is told apart by it and by its parse. */
export const RECORD_PREFIX = 'kdp1:';
/** The broker's default offset.metadata.max.bytes (4,096), less the NUL written after the text. */
export const RECORD_MAX_CHARS = 4095;
/** Producers kept in a record: the most recently read. */
export const RECORD_MAX_PRODUCERS = 64;

const DELTAS = 0;
const BITMAP = 1;

class Writer {
  private bytes: number[] = [];
  varint(n: number): void {
    // Unsigned LEB128, for integers up to 2^53.
    while (n >= 0x80) {
      this.bytes.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    this.bytes.push(n);
  }
  byte(n: number): void {
    this.bytes.push(n & 0xff);
  }
  raw(b: Buffer): void {
    for (const x of b) this.bytes.push(x);
  }
  get length(): number {
    return this.bytes.length;
  }
  buffer(): Buffer {
    return Buffer.from(this.bytes);
  }
}

class Reader {
  private at = 0;
  constructor(private readonly b: Buffer) {}
  varint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.at >= this.b.length) throw new RangeError('truncated');
      const x = this.b[this.at++];
      n += (x & 0x7f) * scale;
      if (x < 0x80) return n;
      scale *= 0x80;
    }
    throw new RangeError('varint too long');
  }
  byte(): number {
    if (this.at >= this.b.length) throw new RangeError('truncated');
    return this.b[this.at++];
  }
  raw(n: number): Buffer {
    if (this.at + n > this.b.length) throw new RangeError('truncated');
    const out = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  get done(): boolean {
    return this.at === this.b.length;
  }
}

/** The unhandled offsets above `offset` as gaps (each from the one before, the first from `offset`). */
function deltas(offset: number, unhandled: readonly number[]): Buffer {
  const w = new Writer();
  w.byte(DELTAS);
  const above = unhandled[0] === offset ? 1 : 0;
  w.varint(unhandled.length - above);
  let last = offset;
  for (let i = above; i < unhandled.length; i++) {
    w.varint(unhandled[i] - last - 1);
    last = unhandled[i];
  }
  return w.buffer();
}

/** The unhandled offsets of (offset, end) as a bitmap, one bit per offset. */
function bitmap(offset: number, end: number, unhandled: readonly number[]): Buffer {
  const bits = Math.max(0, end - offset - 1);
  const out = Buffer.alloc(1 + Math.ceil(bits / 8));
  out[0] = BITMAP;
  for (const p of unhandled) {
    if (p === offset) continue;
    const i = p - offset - 1;
    out[1 + (i >> 3)] |= 1 << (i & 7);
  }
  return out;
}

/** A record as text: the smaller of its two encodings of the unhandled offsets. */
export function encodeRecord(record: HandledRecord): string {
  const w = new Writer();
  w.varint(record.end - record.offset);
  const d = deltas(record.offset, record.unhandled);
  // A bitmap costs one bit per offset read: worth it only for many unhandled offsets close together.
  const span = record.end - record.offset;
  const encoded = span <= d.length * 8 ? bitmap(record.offset, record.end, record.unhandled) : d;
  w.raw(encoded.length < d.length ? encoded : d);
  w.varint(record.producers.length);
  for (const p of record.producers) {
    w.raw(Buffer.from(p.id, 'hex'));
    w.varint(p.read);
  }
  const marked = [...record.marked].sort((a, b) => a.producer - b.producer || a.sequence - b.sequence);
  w.varint(marked.length);
  let producer = 0;
  let sequence = 0;
  for (let i = 0; i < marked.length; i++) {
    const m = marked[i];
    w.varint(m.producer - producer);
    w.varint(i > 0 && m.producer === producer ? m.sequence - sequence - 1 : m.sequence);
    producer = m.producer;
    sequence = m.sequence;
  }
  return RECORD_PREFIX + w.buffer().toString('base64');
}

/**
 * A record as text within `maxChars`: whole when it fits, else shortened to what fits and is
 * still true (`shortened`): no producers (nothing answered by sequence), and `end` cut at the
 * first unhandled offset left out. The cut is found from sizes and encoded once: a large
 * record is made on every commit.
 */
export function fitRecord(record: HandledRecord, maxChars: number): { text: string; shortened: boolean } {
  if (textLength(leastBytes(record)) <= maxChars) {
    const whole = encodeRecord(record);
    if (whole.length <= maxChars) return { text: whole, shortened: false };
  }
  const { offset, unhandled } = record;
  const n = unhandled.length;
  const above = n > 0 && unhandled[0] === offset ? 1 : 0;
  let kept = 0;
  let gaps = 0; // the varints of the gaps between the unhandled offsets kept, after `offset`
  let last = offset;
  for (let k = 0; k <= n; k++) {
    if (k > 0 && k - 1 >= above) {
      gaps += varintSize(unhandled[k - 1] - last - 1);
      last = unhandled[k - 1];
    }
    const span = (k < n ? unhandled[k] : record.end) - offset;
    const deltaBytes = 1 + varintSize(k - (k > 0 ? above : 0)) + gaps;
    const bitmapBytes = 1 + Math.ceil(Math.max(0, span - 1) / 8);
    const chosen = span <= deltaBytes * 8 && bitmapBytes < deltaBytes ? bitmapBytes : deltaBytes;
    // No producers, no marked messages: a varint 0 each.
    if (textLength(varintSize(span) + chosen + 2) <= maxChars) kept = k;
    else if (textLength(varintSize(span) + Math.min(deltaBytes, bitmapBytes) + 2) > maxChars) break; // both only grow with k
  }
  const text = encodeRecord({ offset, end: kept < n ? unhandled[kept] : record.end, unhandled: unhandled.slice(0, kept), producers: [], marked: [] });
  return { text, shortened: true };
}

/** The bytes of `n` as a varint. */
function varintSize(n: number): number {
  let size = 1;
  for (; n >= 0x80; size++) n = Math.floor(n / 0x80);
  return size;
}

/** The characters of a record's text of `bytes` bytes. */
function textLength(bytes: number): number {
  return RECORD_PREFIX.length + 4 * Math.ceil(bytes / 3);
}

/** The least bytes a record takes: a bit per unhandled offset (a byte as gaps), 9 per producer, 2 per unhandled marked message. */
function leastBytes(record: HandledRecord): number {
  const span = record.end - record.offset;
  return Math.min(Math.max(0, record.unhandled.length - 1), Math.ceil(Math.max(0, span - 1) / 8)) + 9 * record.producers.length + 2 * record.marked.length;
}

/**
 * The record a commit's metadata holds, with the offset committed; null when it is not one
 * of ours (another client's metadata, an older or newer format, garbled text): never trusted.
 */
export function decodeRecord(metadata: unknown, offset: number): HandledRecord | null {
  let text = typeof metadata === 'string' ? metadata : Buffer.isBuffer(metadata) ? metadata.toString('latin1') : undefined;
  // The NUL a librdkafka-based client writes after the text (Confluent's client, the native engine), when read back whole.
  if (text !== undefined && text.endsWith('\0')) text = text.slice(0, -1);
  if (text === undefined || !text.startsWith(RECORD_PREFIX) || !Number.isSafeInteger(offset) || offset < 0) return null;
  const body = text.slice(RECORD_PREFIX.length);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) return null;
  try {
    const r = new Reader(Buffer.from(body, 'base64'));
    const end = offset + r.varint();
    const unhandled: number[] = end > offset ? [offset] : [];
    const how = r.byte();
    if (how === DELTAS) {
      const count = r.varint();
      if (count > end - offset) return null;
      let last = offset;
      for (let i = 0; i < count; i++) {
        last += r.varint() + 1;
        if (last >= end) return null;
        unhandled.push(last);
      }
    } else if (how === BITMAP) {
      const bits = Math.max(0, end - offset - 1);
      const map = r.raw(Math.ceil(bits / 8));
      for (let i = 0; i < bits; i++) if (map[i >> 3] & (1 << (i & 7))) unhandled.push(offset + 1 + i);
    } else return null;
    const producerCount = r.varint();
    if (producerCount > RECORD_MAX_PRODUCERS) return null;
    const producers: Array<{ id: string; read: number }> = [];
    for (let i = 0; i < producerCount; i++) producers.push({ id: r.raw(8).toString('hex'), read: r.varint() });
    const markedCount = r.varint();
    if (markedCount > unhandled.length) return null;
    const marked: Array<{ producer: number; sequence: number }> = [];
    let producer = 0;
    let sequence = 0;
    for (let i = 0; i < markedCount; i++) {
      const step = r.varint();
      const value = r.varint();
      sequence = i > 0 && step === 0 ? sequence + value + 1 : value;
      producer += step;
      if (producer >= producerCount || sequence < 1) return null;
      marked.push({ producer, sequence });
    }
    if (!r.done) return null;
    return { offset, end, unhandled, producers, marked };
  } catch {
    return null;
  }
}

/** A record read back: whether an offset, or a producer's marked message on this partition, is handled. */
export class RecordView {
  private readonly unhandledSet: Set<number>;
  private readonly reads = new Map<string, number>();
  private readonly markedSet = new Set<string>();

  constructor(readonly record: HandledRecord) {
    this.unhandledSet = new Set(record.unhandled);
    for (const p of record.producers) this.reads.set(p.id, p.read);
    for (const m of record.marked) this.markedSet.add(`${record.producers[m.producer].id}:${m.sequence}`);
  }

  /** Whether the message at `offset` is handled (false: unhandled, or not read yet). */
  handledOffset(offset: number): boolean {
    const r = this.record;
    return offset < r.offset || (offset < r.end && !this.unhandledSet.has(offset));
  }

  /**
   * Whether producer `id`'s marked message `sequence`, known to be on this partition, is handled:
   * it or a later one of that producer was read here (a producer's messages reach a partition in
   * send order) and it is not unhandled. One never written counts as handled then: it will not come.
   */
  handledSequence(id: string, sequence: number): boolean {
    const read = this.reads.get(id);
    return read !== undefined && sequence <= read && !this.markedSet.has(`${id}:${sequence}`);
  }

  /**
   * Whether it shows a chained message's predecessor handled: by its offset where the header
   * names one (a handoff, whose predecessor may reach its partition after the producer's later
   * messages, so the sequence rule would be wrong), else by producer and sequence.
   */
  handles(order: { readonly producerId: string; readonly previous: number; readonly afterOffset: number }): boolean {
    return order.afterOffset >= 0 ? this.handledOffset(order.afterOffset) : this.handledSequence(order.producerId, order.previous);
  }

  /** Highest sequence of `id` read on the partition, -1 when none. */
  readOf(id: string): number {
    return this.reads.get(id) ?? -1;
  }
}
