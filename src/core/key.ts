// Writing a message key into the WebAssembly key region: strings as their UTF-8 bytes,
// exactly as Buffer.from(key, 'utf8') encodes them (a lone surrogate becomes U+FFFD,
// EF BF BD, as V8's String::WriteUtf8 with REPLACE_INVALID_UTF8 does for node-rdkafka),
// Buffers and Uint8Arrays as they are.

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
// (bench/hash.js: four ASCII characters per 32-bit store beat Buffer#write up to ~64).
const SHORT_STRING = 64;
// Up to this many bytes a JS loop beats Uint8Array.prototype.set.
const SHORT_BYTES = 16;

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
    const memory = core.bytes;
    if (length <= SHORT_BYTES) {
      for (let i = 0; i < length; i++) memory[at + i] = key[i];
    } else {
      memory.set(key, at);
    }
    return length;
  }
  if (key === null || key === undefined) return NULL_LENGTH;
  throw notAKey(argument, key);
}

/** The UTF-8 bytes of a key that did not fit, for hashing in chunks. */
export function keyBytes(key: Key): Uint8Array {
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
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
  const memory = core.bytes;
  for (; i < units; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return -1;
    memory[at + i] = c;
  }
  return units;
}

/** An ASCII string, byte by byte; -1 at the first non-ASCII character. */
function writeAscii(memory: Buffer, at: number, key: string): number {
  const units = key.length;
  for (let i = 0; i < units; i++) {
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
