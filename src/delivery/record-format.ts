// The bytes of a handled record (handled-record.ts), as text: the format docs/ordering.md
// specifies ("Format and size"). Written as `kdp2:` and base64 of
//   varint   end - offset            offsets in [offset, end) were read; above end, nothing is known
//   varint   end - known             offsets in [offset, known) are told one by one (below); 0: all read
//   byte     0: gaps | 1: bitmap     how the unhandled offsets of (offset, known) are written (the smaller)
//   ...      gaps: varint count, then varint gaps (each from the one before, less 1); or a bitmap of (offset, known)
//   varint   producers, then per producer 8 bytes of id, varint highest sequence read here, varint
//            read - told (sequences above `told` are not told: unhandled or not, not known)
//   varint   runs of unhandled marked messages (consecutive sequences of one producer), by producer
//            and sequence; per run: varint producer index step from the run before, varint first
//            sequence (a producer's first run) or its step from the run before's last, less 2,
//            and varint length less 1
// `kdp1:` records (no `known`, no `told`, marked messages one by one) are still read.

import { Buffer } from 'node:buffer';

/** What a member has handled of one partition, as of one commit. */
export interface HandledRecord {
  /** The committed offset: every message below it is handled. */
  readonly offset: number;
  /** Offsets in [offset, end) were read; nothing is known from end on. */
  readonly end: number;
  /**
   * Offsets in [offset, known) not in `unhandled` are handled; from known to end only marked
   * messages are told, by sequence. Absent: end (a record whose offsets are all told).
   */
  readonly known?: number;
  /** Offsets in [offset, known) unhandled, ascending (offset itself first when known > offset). */
  readonly unhandled: readonly number[];
  /**
   * Per producer whose marked messages were read here: its id (16 hex digits), the highest
   * sequence read, and the highest told (`told`, absent: `read`): of its sequences up to told,
   * those not in `marked` are handled (or never written); above told, nothing is known.
   */
  readonly producers: ReadonlyArray<{ readonly id: string; readonly read: number; readonly told?: number }>;
  /** Unhandled marked messages read here, up to their producer's told: its index in `producers` and their sequence (each once). */
  readonly marked: ReadonlyArray<{ readonly producer: number; readonly sequence: number }>;
}

/** The record's text starts so; `kdp1:` is the format before it, still read. */
export const RECORD_PREFIX = 'kdp2:';
const KDP1 = 'kdp1:';
/** Producers kept in a record: the most recently read. */
export const RECORD_MAX_PRODUCERS = 64;
/** A record read back lists at most this many unhandled marked messages (a garbled run length is not expanded). */
const MAX_MARKED = 1 << 20;

const GAPS = 0;
const BITMAP = 1;

export class Writer {
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

/** The bytes of `n` as a varint. */
export function varintSize(n: number): number {
  let size = 1;
  for (; n >= 0x80; size++) n = Math.floor(n / 0x80);
  return size;
}

/** The characters of a record's text of `bytes` bytes. */
export function textLength(bytes: number): number {
  return RECORD_PREFIX.length + 4 * Math.ceil(bytes / 3);
}

/** The unhandled offsets of (offset, known) as gaps, or as a bitmap when that is smaller. */
export function offsetBytes(offset: number, known: number, unhandled: readonly number[]): Buffer {
  const w = new Writer();
  w.byte(GAPS);
  const above = unhandled[0] === offset ? 1 : 0;
  w.varint(unhandled.length - above);
  let last = offset;
  for (let i = above; i < unhandled.length; i++) {
    w.varint(unhandled[i] - last - 1);
    last = unhandled[i];
  }
  const gaps = w.buffer();
  // A bitmap costs one bit per offset: worth it only for many unhandled offsets close together.
  const bits = Math.max(0, known - offset - 1);
  if (Math.ceil(bits / 8) + 1 >= gaps.length) return gaps;
  const map = Buffer.alloc(1 + Math.ceil(bits / 8));
  map[0] = BITMAP;
  for (const p of unhandled) {
    if (p === offset) continue;
    const i = p - offset - 1;
    map[1 + (i >> 3)] |= 1 << (i & 7);
  }
  return map;
}

/** A record's unhandled marked messages as runs of consecutive sequences, by producer and sequence. */
export function runsOf(marked: HandledRecord['marked']): Array<{ producer: number; first: number; length: number }> {
  const sorted = [...marked].sort((a, b) => a.producer - b.producer || a.sequence - b.sequence);
  const runs: Array<{ producer: number; first: number; length: number }> = [];
  for (const m of sorted) {
    const run = runs[runs.length - 1];
    if (run !== undefined && run.producer === m.producer && run.first + run.length === m.sequence) run.length++;
    else if (run === undefined || run.producer !== m.producer || run.first + run.length - 1 !== m.sequence) runs.push({ producer: m.producer, first: m.sequence, length: 1 });
  }
  return runs;
}

/** The producers' and runs' bytes: the part of a record that answers other members. */
export function answerBytes(producers: HandledRecord['producers'], runs: ReturnType<typeof runsOf>): Buffer {
  const w = new Writer();
  w.varint(producers.length);
  for (const p of producers) {
    w.raw(Buffer.from(p.id, 'hex'));
    w.varint(p.read);
    w.varint(p.read - (p.told ?? p.read));
  }
  w.varint(runs.length);
  let producer = 0;
  let last = 0;
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i];
    const sameProducer = i > 0 && r.producer === producer;
    w.varint(r.producer - producer);
    w.varint(sameProducer ? r.first - last - 2 : r.first);
    w.varint(r.length - 1);
    producer = r.producer;
    last = r.first + r.length - 1;
  }
  return w.buffer();
}

/** The text of a record whose parts are made (encodeRecord() and fitRecord()). */
export function recordText(offset: number, end: number, known: number, offsets: Buffer, answers: Buffer): string {
  const w = new Writer();
  w.varint(end - offset);
  w.varint(end - known);
  w.raw(offsets);
  w.raw(answers);
  return RECORD_PREFIX + w.buffer().toString('base64');
}

/** A record as text, whole. */
export function encodeRecord(record: HandledRecord): string {
  const known = record.known ?? record.end;
  return recordText(record.offset, record.end, known, offsetBytes(record.offset, known, record.unhandled), answerBytes(record.producers, runsOf(record.marked)));
}

/** The unhandled offsets of (offset, known), read: `offset` itself first when known > offset. */
function readOffsets(r: Reader, offset: number, known: number): number[] | null {
  const unhandled: number[] = known > offset ? [offset] : [];
  const how = r.byte();
  if (how === GAPS) {
    const count = r.varint();
    if (count > known - offset) return null;
    let last = offset;
    for (let i = 0; i < count; i++) {
      last += r.varint() + 1;
      if (last >= known) return null;
      unhandled.push(last);
    }
  } else if (how === BITMAP) {
    const bits = Math.max(0, known - offset - 1);
    const map = r.raw(Math.ceil(bits / 8));
    for (let i = 0; i < bits; i++) if (map[i >> 3] & (1 << (i & 7))) unhandled.push(offset + 1 + i);
  } else return null;
  return unhandled;
}

/**
 * The record a commit's metadata holds, with the offset committed; null when it is not one
 * of ours (another client's metadata, another format, garbled text): never trusted.
 */
export function decodeRecord(metadata: unknown, offset: number): HandledRecord | null {
  let text = typeof metadata === 'string' ? metadata : Buffer.isBuffer(metadata) ? metadata.toString('latin1') : undefined;
  // The NUL a librdkafka-based client writes after the text (Confluent's client, the native engine), when read back whole.
  if (text !== undefined && text.endsWith('\0')) text = text.slice(0, -1);
  if (text === undefined || !Number.isSafeInteger(offset) || offset < 0) return null;
  const v1 = text.startsWith(KDP1);
  if (!v1 && !text.startsWith(RECORD_PREFIX)) return null;
  const body = text.slice(RECORD_PREFIX.length);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) return null;
  try {
    const r = new Reader(Buffer.from(body, 'base64'));
    const end = offset + r.varint();
    const known = v1 ? end : end - r.varint();
    if (known < offset) return null;
    const unhandled = readOffsets(r, offset, known);
    if (unhandled === null) return null;
    const producerCount = r.varint();
    if (producerCount > RECORD_MAX_PRODUCERS) return null;
    const producers: Array<{ id: string; read: number; told: number }> = [];
    for (let i = 0; i < producerCount; i++) {
      const id = r.raw(8).toString('hex');
      const read = r.varint();
      const told = v1 ? read : read - r.varint();
      if (told < 0) return null;
      producers.push({ id, read, told });
    }
    const marked = v1 ? readMarkedV1(r, producers, unhandled.length) : readRuns(r, producers, end - offset);
    if (marked === null || !r.done) return null;
    return { offset, end, known, unhandled, producers, marked };
  } catch {
    return null;
  }
}

/** kdp1's unhandled marked messages, one by one (at most one per unhandled offset). */
function readMarkedV1(r: Reader, producers: ReadonlyArray<{ told: number }>, unhandled: number): Array<{ producer: number; sequence: number }> | null {
  const count = r.varint();
  if (count > unhandled) return null;
  const marked: Array<{ producer: number; sequence: number }> = [];
  let producer = 0;
  let sequence = 0;
  for (let i = 0; i < count; i++) {
    const step = r.varint();
    const value = r.varint();
    sequence = i > 0 && step === 0 ? sequence + value + 1 : value;
    producer += step;
    if (producer >= producers.length || sequence < 1) return null;
    marked.push({ producer, sequence });
  }
  return marked;
}

/** kdp2's runs of unhandled marked messages: at most one per offset read, each within its producer's told. */
function readRuns(r: Reader, producers: ReadonlyArray<{ told: number }>, span: number): Array<{ producer: number; sequence: number }> | null {
  const count = r.varint();
  const marked: Array<{ producer: number; sequence: number }> = [];
  let producer = 0;
  let last = 0;
  for (let i = 0; i < count; i++) {
    const step = r.varint();
    const value = r.varint();
    const length = r.varint() + 1;
    const first = i > 0 && step === 0 ? last + value + 2 : value;
    producer += step;
    if (producer >= producers.length || first < 1 || first + length - 1 > producers[producer].told) return null;
    if (marked.length + length > Math.min(span, MAX_MARKED)) return null;
    for (let s = first; s < first + length; s++) marked.push({ producer, sequence: s });
    last = first + length - 1;
  }
  return marked;
}
