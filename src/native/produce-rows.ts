// The native engine's produce batch as bytes (src/native/produce.ts fills it, native/src/produce.c
// reads it): one buffer holding each message's value, key and headers, a row per message of where
// they stand (the contract's PRODUCE_ROW_*), and a table of header rows (HEADER_ROW_*). Our order
// header is written from its fields (src/partitioner/headers.ts), no string made for it.

import { Buffer } from 'node:buffer';
import { type Key, writeAscii } from '../core/key';
import {
  HEADER_ROW_NAME_AT, HEADER_ROW_NAME_LENGTH, HEADER_ROW_SIZE, HEADER_ROW_VALUE_AT, HEADER_ROW_VALUE_LENGTH,
  PRODUCE_ROW_FIRST_HEADER, PRODUCE_ROW_HEADER_COUNT, PRODUCE_ROW_KEY_AT, PRODUCE_ROW_KEY_LENGTH, PRODUCE_ROW_SIZE,
  PRODUCE_ROW_VALUE_AT, PRODUCE_ROW_VALUE_LENGTH,
} from './contract';
import { ORDER_FIELDS_MAX_BYTES, ORDER_HEADER, OrderFields, writeOrderFields } from '../partitioner/headers';

/** A message's headers as produce() takes them: node-rdkafka's list, our order header as its fields. */
export type RowHeaders = ReadonlyArray<Record<string, string | Buffer | null | undefined> | OrderFields>;

/** Bytes librdkafka adds to a message's key, value and headers in its size check (RD_KAFKAP_MESSAGE_V2_MAX_OVERHEAD, rdkafka_proto.h), with room for the headers' own varints. */
const OVERHEAD = 36;

/** String keys up to this many UTF-16 units are tried as ASCII first (writeAscii). */
const SHORT_KEY = 64;

/** The order header's name, as bytes. */
const ORDER_NAME = Buffer.from(ORDER_HEADER, 'latin1');

export class ProduceRows {
  /** The batch's bytes, [0, pos) written. */
  data: Buffer = Buffer.allocUnsafeSlow(1 << 18);
  pos = 0;
  /** A row per message (PRODUCE_ROW_SIZE numbers). */
  readonly layout: Int32Array;
  /** A row per header (HEADER_ROW_SIZE numbers), headerCount of them written. */
  headerTable: Int32Array;
  headerCount = 0;

  constructor(messages: number) {
    this.layout = new Int32Array(messages * PRODUCE_ROW_SIZE);
    this.headerTable = new Int32Array(messages * HEADER_ROW_SIZE);
  }

  /**
   * Writes message `i`'s value, key and headers; answers the bytes librdkafka's size check
   * counts for it (message.max.bytes).
   */
  write(i: number, value: Buffer | null | undefined, key: Key | null | undefined, headers: RowHeaders | undefined): number {
    let pos = this.pos;
    let data = this.data;
    const valueLength = value === null || value === undefined ? 0 : value.length;
    // Room for the value, the key (a string: at most 3 bytes per UTF-16 unit) and the headers.
    const need = pos + valueLength + (key == null ? 0 : typeof key === 'string' ? key.length * 3 : key.length) + (headers === undefined ? 0 : 4096);
    if (need > data.length) data = this.grow(need);
    const l = i * PRODUCE_ROW_SIZE;
    const layout = this.layout;
    if (value === null || value === undefined) {
      layout[l + PRODUCE_ROW_VALUE_AT] = pos;
      layout[l + PRODUCE_ROW_VALUE_LENGTH] = -1;
    } else {
      layout[l + PRODUCE_ROW_VALUE_AT] = pos;
      layout[l + PRODUCE_ROW_VALUE_LENGTH] = valueLength;
      data.set(value, pos);
      pos += valueLength;
    }
    if (key === null || key === undefined) {
      layout[l + PRODUCE_ROW_KEY_AT] = pos;
      layout[l + PRODUCE_ROW_KEY_LENGTH] = -1;
    } else if (typeof key === 'string') {
      // A short ASCII key byte by byte: cheaper than a call into Buffer's UTF-8 encoder.
      let n = key.length <= SHORT_KEY ? writeAscii(data, pos, key) : -1;
      if (n < 0) n = data.write(key, pos);
      layout[l + PRODUCE_ROW_KEY_AT] = pos;
      layout[l + PRODUCE_ROW_KEY_LENGTH] = n;
      pos += n;
    } else {
      layout[l + PRODUCE_ROW_KEY_AT] = pos;
      layout[l + PRODUCE_ROW_KEY_LENGTH] = key.length;
      data.set(key, pos);
      pos += key.length;
    }
    layout[l + PRODUCE_ROW_FIRST_HEADER] = this.headerCount;
    layout[l + PRODUCE_ROW_HEADER_COUNT] = 0;
    if (headers !== undefined) {
      this.pos = pos;
      layout[l + PRODUCE_ROW_HEADER_COUNT] = this.writeHeaders(headers);
      pos = this.pos;
    }
    this.pos = pos;
    return pos - layout[l + PRODUCE_ROW_VALUE_AT] + OVERHEAD * (1 + layout[l + PRODUCE_ROW_HEADER_COUNT]);
  }

  /** Everything handed over: the next batch starts at the buffer's beginning. */
  clear(): void {
    this.pos = this.headerCount = 0;
  }

  /** Writes a message's headers into the batch; returns how many. */
  private writeHeaders(headers: RowHeaders): number {
    let count = 0;
    // An index, not for..of: no iterator per message.
    for (let k = 0; k < headers.length; k++) {
      const header = headers[k];
      if (header instanceof OrderFields) {
        // Our order header: its text written from its fields (no string made for it).
        this.reserveHeader(ORDER_NAME.length + ORDER_FIELDS_MAX_BYTES);
        const h = this.headerCount++ * HEADER_ROW_SIZE;
        const table = this.headerTable;
        const data = this.data;
        table[h + HEADER_ROW_NAME_AT] = this.pos;
        table[h + HEADER_ROW_NAME_LENGTH] = ORDER_NAME.length;
        data.set(ORDER_NAME, this.pos);
        this.pos += ORDER_NAME.length;
        table[h + HEADER_ROW_VALUE_AT] = this.pos;
        const end = writeOrderFields(data, this.pos, header);
        table[h + HEADER_ROW_VALUE_LENGTH] = end - this.pos;
        this.pos = end;
        count++;
        continue;
      }
      for (const name in header) {
        const value = header[name];
        const bytes = typeof value === 'string' ? Buffer.byteLength(value) : value == null ? 0 : value.length;
        this.reserveHeader(name.length * 3 + bytes);
        const h = this.headerCount++ * HEADER_ROW_SIZE;
        const table = this.headerTable;
        const data = this.data;
        table[h + HEADER_ROW_NAME_AT] = this.pos;
        table[h + HEADER_ROW_NAME_LENGTH] = data.write(name, this.pos);
        this.pos += table[h + HEADER_ROW_NAME_LENGTH];
        table[h + HEADER_ROW_VALUE_AT] = this.pos;
        if (value == null) table[h + HEADER_ROW_VALUE_LENGTH] = -1;
        else if (typeof value === 'string') {
          table[h + HEADER_ROW_VALUE_LENGTH] = data.write(value, this.pos);
        } else {
          data.set(value, this.pos);
          table[h + HEADER_ROW_VALUE_LENGTH] = value.length;
        }
        this.pos += Math.max(0, table[h + HEADER_ROW_VALUE_LENGTH]);
        count++;
      }
    }
    return count;
  }

  /** Room for one more header in the header table, and for `bytes` more in the batch buffer. */
  private reserveHeader(bytes: number): void {
    if (this.headerCount + 1 > this.headerTable.length / HEADER_ROW_SIZE) {
      const table = new Int32Array(this.headerTable.length * 2);
      table.set(this.headerTable);
      this.headerTable = table;
    }
    if (this.pos + bytes > this.data.length) this.grow(this.pos + bytes);
  }

  /** A bigger batch buffer, with what is written so far. */
  private grow(need: number): Buffer {
    const data = Buffer.allocUnsafeSlow(Math.max(need, this.data.length * 2));
    this.data.copy(data, 0, 0, this.pos);
    this.data = data;
    return data;
  }
}
