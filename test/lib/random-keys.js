'use strict';
// Seeded random message keys of every kind a producer may send: ASCII, multi-byte UTF-8,
// strings with lone surrogates, and Buffers of arbitrary bytes, lengths 0..maxLength.

// The package's own seeded PRNG (mulberry32), so that a failure can be replayed.
const { prng } = require('../../build/tools/workload');

/** A length in 0..max, skewed toward short keys as real keys are. */
function length(rand, max) {
  const r = rand();
  if (r < 0.6) return Math.floor(rand() * 41);
  if (r < 0.9) return Math.floor(rand() * 257);
  return Math.floor(rand() * (max + 1));
}

const KINDS = ['ascii', 'utf8', 'surrogates', 'buffer'];

function codeUnit(rand, kind) {
  if (kind === 'ascii') return String.fromCharCode(0x20 + Math.floor(rand() * 95));
  const r = rand();
  if (kind === 'surrogates' && r < 0.25) return String.fromCharCode(0xd800 + Math.floor(rand() * 0x800));
  if (r < 0.4) return String.fromCharCode(0x20 + Math.floor(rand() * 95));
  if (r < 0.6) return String.fromCharCode(0x80 + Math.floor(rand() * 0x780)); // 2-byte
  if (r < 0.8) return String.fromCharCode(0xe000 + Math.floor(rand() * 0x1000)); // 3-byte
  return String.fromCodePoint(0x10000 + Math.floor(rand() * 0xfffff)); // 4-byte pair
}

/** One key of `kind`; for strings the length counts UTF-16 units (about). */
function randomKey(rand, kind, maxLength) {
  const n = length(rand, maxLength);
  if (kind === 'buffer') {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
    return b;
  }
  let s = '';
  while (s.length < n) s += codeUnit(rand, kind);
  return s;
}

/** `count` keys cycling through the kinds, reproducible from `seed`. */
function randomKeys(count, seed, maxLength = 2048) {
  const rand = prng(seed);
  const keys = new Array(count);
  for (let i = 0; i < count; i++) keys[i] = randomKey(rand, KINDS[i % KINDS.length], maxLength);
  return keys;
}

/** The bytes node-rdkafka puts on the wire for a key (see src/core/key.ts). */
function wireBytes(key) {
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
}

module.exports = { prng, randomKeys, wireBytes, KINDS };
