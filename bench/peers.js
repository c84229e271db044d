'use strict';
// Peers for bench/hash.js: KafkaJS's Java-compatible murmur2 (the hash behind its
// DefaultPartitioner), and the "floor", a tight pure-JS murmur2 (Java's Utils.murmur2).
//
// The floor reads a string's UTF-16 char codes as its bytes, so for strings it is
// correct for ASCII only (every char code < 0x80, where UTF-16 units and UTF-8 bytes
// coincide); bench/hash.js checks that its string keys are ASCII. For Buffers and
// Uint8Arrays it reads the bytes directly and is exact for any content.

// node_modules/kafkajs/src/producer/partitioners/default/index.js:
//   createDefaultPartitioner(require('./murmur2'))
// and legacy/partitioner.js picks `toPositive(murmur2(key)) % numPartitions`, toPositive
// being `x & 0x7fffffff`.
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2');

/** KafkaJS's partition for a key, as its DefaultPartitioner computes it. */
function kafkajsPartition(key, numPartitions) {
  return (kafkajsMurmur2(key) & 0x7fffffff) % numPartitions;
}

const SEED = 0x9747b28c | 0;
const M = 0x5bd1e995;

/** Java's Utils.murmur2 over a string's char codes: the UTF-8 hash for ASCII strings only. */
function floorMurmur2Ascii(s) {
  const length = s.length;
  const end = length & ~3;
  let h = SEED ^ length;
  let i = 0;
  for (; i < end; i += 4) {
    let k =
      s.charCodeAt(i) |
      (s.charCodeAt(i + 1) << 8) |
      (s.charCodeAt(i + 2) << 16) |
      (s.charCodeAt(i + 3) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  switch (length & 3) {
    case 3:
      h ^= s.charCodeAt(i + 2) << 16;
    // falls through
    case 2:
      h ^= s.charCodeAt(i + 1) << 8;
    // falls through
    case 1:
      h ^= s.charCodeAt(i);
      h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h;
}

/** Java's Utils.murmur2 over the bytes of a Buffer or Uint8Array. */
function floorMurmur2Bytes(b) {
  const length = b.length;
  const end = length & ~3;
  let h = SEED ^ length;
  let i = 0;
  for (; i < end; i += 4) {
    let k = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  switch (length & 3) {
    case 3:
      h ^= b[i + 2] << 16;
    // falls through
    case 2:
      h ^= b[i + 1] << 8;
    // falls through
    case 1:
      h ^= b[i];
      h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h;
}

function floorPartitionAscii(s, numPartitions) {
  return (floorMurmur2Ascii(s) & 0x7fffffff) % numPartitions;
}

function floorPartitionBytes(b, numPartitions) {
  return (floorMurmur2Bytes(b) & 0x7fffffff) % numPartitions;
}

/** Kafka's UtilsTest.testMurmur2 vectors (kafka-clients), as [key, signed int32 hash]. */
const JAVA_VECTORS = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  ['abc', 479470107],
];

module.exports = {
  kafkajsMurmur2,
  kafkajsPartition,
  floorMurmur2Ascii,
  floorMurmur2Bytes,
  floorPartitionAscii,
  floorPartitionBytes,
  JAVA_VECTORS,
};
