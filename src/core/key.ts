// Writing message keys into the WebAssembly key region, the only way keys get there: one key
// (writeKey), a key too long for the region in chunks (writeKeyChunks), or many keys packed
// back to back for a batch call (packBatches). Strings as their UTF-8 bytes, exactly as
// Buffer.from(key, 'utf8') encodes them (a lone surrogate becomes U+FFFD, EF BF BD, as V8's
// String::WriteUtf8 with REPLACE_INVALID_UTF8 does for node-rdkafka), Buffers and
// Uint8Arrays as they are. Each key is written once per call that reads it.

import { InvalidArgTypeError } from './errors';
import type { Core } from './wasm';
import { NULL_KEY } from './abi';

/** A message key as node-rdkafka takes it. */
export type Key = string | Buffer | Uint8Array;

/** Length written for a null or undefined key. */
export const NULL_LENGTH = NULL_KEY;
/** Returned by writeKey when the key does not fit in the space left. */
export const DOES_NOT_FIT = -2;

// Up to this many UTF-16 units a JS loop beats the fixed cost of a native utf8 write
// (bench/hash.js: four ASCII characters per 32-bit store beat Buffer#write up to about 64).
const SHORT_STRING = 64;
// Up to this many bytes, at a 4-byte aligned offset, four bytes per 32-bit store beat the
// fixed cost of Uint8Array.prototype.set; from about 12 on, set wins, and a byte loop never
// does (the figures: docs/performance.md, "Figures behind choices in the code").
const SHORT_BYTES = 8;

/** What a message key may be (null and undefined: no key). */
const KEY_EXPECTED = 'a string, Buffer, Uint8Array, null or undefined';
/** What a key to hash must be (murmur2() has no answer for no key). */
const KEY_BYTES_EXPECTED = 'a string, Buffer or Uint8Array';

/**
 * The error for a value that is not a key; `argument` is a name, or the index in a batch of
 * keys. `bytes`: null and undefined are not allowed either.
 */
export function notAKey(argument: string | number, key: unknown, bytes = false): InvalidArgTypeError {
  return new InvalidArgTypeError(typeof argument === 'number' ? `keys[${argument}]` : argument, bytes ? KEY_BYTES_EXPECTED : KEY_EXPECTED, key);
}

/** Throws notAKey (naming `argument`) unless `key` is a string, a Uint8Array (a Buffer), null or undefined. */
export function checkKey(argument: string, key: unknown): void {
  if (key !== null && key !== undefined && typeof key !== 'string' && !(key instanceof Uint8Array)) throw notAKey(argument, key);
}

/**
 * Writes `key` at byte offset `at` of the core's memory, using at most `room` bytes. Returns
 * the number of bytes written, NULL_LENGTH for a null/undefined key, or DOES_NOT_FIT.
 * Throws InvalidArgTypeError (naming `argument`) for anything that is not a key.
 */
export function writeKey(core: Core, at: number, room: number, key: unknown, argument: string | number): number {
  if (typeof key === 'string') {
    const units = key.length;
    if (units <= SHORT_STRING && units * 3 <= room) {
      const written = (at & 3) === 0 ? writeAscii4(core, at, key) : writeAscii(core.bytes, at, key);
      return written >= 0 ? written : writeUtf8(core.bytes, at, key);
    }
    if (units * 3 <= room) return core.bytes.write(key, at, room, 'utf8');
    const length = Buffer.byteLength(key, 'utf8');
    return length <= room ? core.bytes.write(key, at, room, 'utf8') : DOES_NOT_FIT;
  }
  if (key instanceof Uint8Array) {
    const length = key.length;
    if (length > room) return DOES_NOT_FIT;
    if (length <= SHORT_BYTES && (at & 3) === 0) writeBytes4(core, at, key);
    else core.bytes.set(key, at);
    return length;
  }
  if (key === null || key === undefined) return NULL_LENGTH;
  throw notAKey(argument, key);
}

/** The UTF-8 bytes of a key that did not fit, for hashing in chunks. */
export function keyBytes(key: Key): Uint8Array {
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
}

/**
 * Writes the bytes of a key too long for the key region through it, one region-full chunk at a
 * time (a multiple of 4 bytes, as murmur2's blocks need), calling `update(chunkLength)` after
 * each chunk but the last; returns the length of the last chunk, left in the region.
 */
export function writeKeyChunks(core: Core, bytes: Uint8Array, update: (length: number) => void): number {
  const chunk = core.keyCapacity;
  const { bytes: memory, keys } = core;
  let offset = 0;
  for (; bytes.length - offset > chunk; offset += chunk) {
    memory.set(bytes.subarray(offset, offset + chunk), keys);
    update(chunk);
  }
  memory.set(bytes.subarray(offset), keys);
  return bytes.length - offset;
}

/**
 * The batch loop shared by partitionForKeys and DynamicPartitioner.partitionBatch: keys are
 * packed back to back into the key region with their lengths in the lengths table; each
 * full region (or full lengths table) is one WebAssembly call, `call(count, start)` (`start`:
 * the index in `keys` of the first key packed), whose results go to `out` (then
 * `after(start, count)`). A run of ASCII string keys is written with one
 * join and one native write; other keys one by one. A key too long for the region goes
 * through `single(i)`.
 */
export function packBatches(
  core: Core,
  keys: ReadonlyArray<unknown>,
  out: Int32Array,
  call: (count: number, start: number) => void,
  single: (index: number) => number,
  after?: (start: number, count: number) => void,
): void {
  const { i32, keys: base, keyCapacity, lengths, results, batchCapacity } = core;
  let start = 0; // index of the first key of the pending call
  let count = 0;
  let used = 0;
  const flush = (): void => {
    if (count === 0) return;
    call(count, start);
    out.set(i32.subarray(results, results + count), start);
    after?.(start, count);
    start += count;
    count = 0;
    used = 0;
  };
  const total = keys.length;
  let i = 0;
  while (i < total) {
    // The longest run of string keys from i that fits what is left of the region and table.
    let end = i;
    let bytes = 0;
    const most = Math.min(total, i + batchCapacity - count);
    for (; end < most; end++) {
      const key = keys[end];
      if (typeof key !== 'string' || bytes + key.length > keyCapacity - used) break;
      bytes += key.length;
    }
    if (end - i >= RUN && writeAsciiRun(core, base + used, bytes, keys, i, end)) {
      for (let j = i; j < end; j++) i32[lengths + count++] = (keys[j] as string).length;
      used += bytes;
      i = end;
      if (count === batchCapacity) flush();
      continue;
    }
    // One key at a time: not a string, not ASCII, or a short run. A key that does not fit
    // writes nothing: it goes to the start of an emptied region, or through `single`.
    const key = keys[i];
    let length = writeKey(core, base + used, keyCapacity - used, key, i);
    if (length === DOES_NOT_FIT) {
      flush();
      length = writeKey(core, base, keyCapacity, key, i);
      if (length === DOES_NOT_FIT) {
        out[i] = single(i);
        start = i + 1;
        i++;
        continue;
      }
    }
    i32[lengths + count] = length;
    count++;
    if (length > 0) used += length;
    if (count === batchCapacity) flush();
    i++;
  }
  flush();
}

// Runs of at least this many string keys are joined and written at once.
const RUN = 8;
const encoder = new TextEncoder();

/**
 * Writes keys[from..to), strings of `bytes` UTF-16 units in all, back to back at `at`: true
 * when every one was ASCII (one byte per unit), false (region contents undefined) otherwise.
 */
function writeAsciiRun(core: Core, at: number, bytes: number, keys: ReadonlyArray<unknown>, from: number, to: number): boolean {
  const joined = (from === 0 && to === keys.length ? keys : keys.slice(from, to)).join('');
  const r = encoder.encodeInto(joined, core.bytes.subarray(at, at + bytes));
  return r.read === bytes && r.written === bytes;
}

/** An ASCII string at a 4-byte aligned offset, four characters per store; -1 at the first non-ASCII one. */
function writeAscii4(core: Core, at: number, key: string): number {
  const units = key.length;
  const u32 = core.u32;
  let word = at >> 2;
  let i = 0;
  for (; i + 4 <= units; i += 4) {
    const a = key.charCodeAt(i);
    const b = key.charCodeAt(i + 1);
    const c = key.charCodeAt(i + 2);
    const d = key.charCodeAt(i + 3);
    if ((a | b | c | d) >= 0x80) return -1;
    // Little-endian, as WebAssembly memory is.
    u32[word++] = a | (b << 8) | (c << 16) | (d << 24);
  }
  return writeAscii(core.bytes, at, key, i);
}

/** Bytes at a 4-byte aligned offset, four per store. */
function writeBytes4(core: Core, at: number, key: Uint8Array): void {
  const length = key.length;
  const u32 = core.u32;
  let word = at >> 2;
  let i = 0;
  // Little-endian, as WebAssembly memory is.
  for (; i + 4 <= length; i += 4) u32[word++] = key[i] | (key[i + 1] << 8) | (key[i + 2] << 16) | (key[i + 3] << 24);
  const memory = core.bytes;
  for (; i < length; i++) memory[at + i] = key[i];
}

/** An ASCII string (its characters from `from` on), byte by byte; -1 at the first non-ASCII character. */
export function writeAscii(memory: Buffer, at: number, key: string, from = 0): number {
  const units = key.length;
  for (let i = from; i < units; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return -1;
    memory[at + i] = c;
  }
  return units;
}

/** Encodes a short string with non-ASCII characters; the caller guarantees 3 bytes of room per UTF-16 unit. */
function writeUtf8(memory: Buffer, at: number, key: string): number {
  let p = at;
  const units = key.length;
  for (let i = 0; i < units; i++) {
    let c = key.charCodeAt(i);
    if (c < 0x80) {
      memory[p++] = c;
      continue;
    }
    if (c < 0x800) {
      memory[p++] = 0xc0 | (c >> 6);
      memory[p++] = 0x80 | (c & 0x3f);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < units ? key.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        // A surrogate pair: one 4-byte sequence (takes no more than the 6 bytes reserved).
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        memory[p++] = 0xf0 | (cp >> 18);
        memory[p++] = 0x80 | ((cp >> 12) & 0x3f);
        memory[p++] = 0x80 | ((cp >> 6) & 0x3f);
        memory[p++] = 0x80 | (cp & 0x3f);
        i++;
        continue;
      }
      c = 0xfffd;
    }
    memory[p++] = 0xe0 | (c >> 12);
    memory[p++] = 0x80 | ((c >> 6) & 0x3f);
    memory[p++] = 0x80 | (c & 0x3f);
  }
  return p - at;
}
