'use strict';
// Published test vectors, each row annotated with its source.
const t = require('tap');
const { murmur2, partitionForKey, partitionForKeys } = require('../..');

// Kafka clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java, testMurmur2
const KAFKA_UTILS_TEST = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  [Buffer.from([0x61, 0x62, 0x63]), 479470107], // new byte[] {'a', 'b', 'c'}
];

// librdkafka src/rdmurmur2.c unittest_murmur2 (v2.12): Java results for C strings,
// including unaligned starts of the same buffers.
const SHORT_UNALIGNED = '1234';
const UNALIGNED = 'PreAmbleWillBeRemoved,ThePrePartThatIs';
const LIBRDKAFKA_KEYS = [
  'kafka',
  'giberish123456789',
  SHORT_UNALIGNED,
  SHORT_UNALIGNED.slice(1),
  SHORT_UNALIGNED.slice(2),
  SHORT_UNALIGNED.slice(3),
  UNALIGNED,
  UNALIGNED.slice(1),
  UNALIGNED.slice(2),
  UNALIGNED.slice(3),
  '',
];
const RDMURMUR2_JAVA = [
  0xd067cf64, // kafka
  0x8f552b0c, // giberish123456789
  0x9fc97b14, // short_unaligned
  0xe7c009ca, // short_unaligned+1
  0x873930da, // short_unaligned+2
  0x5a4b5ca1, // short_unaligned+3
  0x78424f1c, // unaligned
  0x4a62b377, // unaligned+1
  0xe0e4e09e, // unaligned+2
  0x62b8b43f, // unaligned+3
  0x106e08d9, // ""
];
// librdkafka src/rdfnv1a.c unittest_fnv1a (v2.12): Go hash/fnv results, after abs().
const RDFNV1A_GO = [
  0x0d33c4e1, // kafka
  0x77a58295, // giberish123456789
  0x023bdd03, // short_unaligned
  0x2dea3cd2, // short_unaligned+1
  0x740fa83e, // short_unaligned+2
  0x310ca263, // short_unaligned+3
  0x65cbd69c, // unaligned
  0x6e49c79a, // unaligned+1
  0x69eed356, // unaligned+2
  0x6abcc023, // unaligned+3
  0x7ee3623b, // ""
];

/** A Buffer view at an odd byte offset, so the WASM side sees the bytes, not their alignment. */
function unalignedCopy(s, shift) {
  const backing = Buffer.alloc(s.length + 8);
  backing.write(s, shift, 'latin1');
  return backing.subarray(shift, shift + s.length);
}

t.test('Kafka UtilsTest.testMurmur2', async (t) => {
  for (const [key, expected] of KAFKA_UTILS_TEST) t.equal(murmur2(key), expected, String(key));
});

t.test('librdkafka rdmurmur2.c unit test', async (t) => {
  LIBRDKAFKA_KEYS.forEach((key, i) => {
    const expected = RDMURMUR2_JAVA[i] | 0;
    t.equal(murmur2(key), expected, `string ${JSON.stringify(key)}`);
    for (let shift = 1; shift < 4; shift++) {
      t.equal(murmur2(unalignedCopy(key, shift)), expected, `buffer at offset ${shift}: ${JSON.stringify(key)}`);
    }
    // 'murmur2' and 'murmur2_random' both use toPositive(h) % n; 2^31 - 1 keeps all 31 bits.
    t.equal(partitionForKey(key, 0x7fffffff, 'murmur2'), (expected & 0x7fffffff) % 0x7fffffff);
  });
});

t.test('librdkafka rdfnv1a.c unit test', async (t) => {
  LIBRDKAFKA_KEYS.forEach((key, i) => {
    const expected = RDFNV1A_GO[i];
    // With n = 2^31 - 1 the partition keeps everything but the top bit of the hash.
    t.equal(partitionForKey(key, 0x7fffffff, 'fnv1a'), expected % 0x7fffffff, `string ${JSON.stringify(key)}`);
    for (let shift = 1; shift < 4; shift++) {
      t.equal(partitionForKey(unalignedCopy(key, shift), 0x7fffffff, 'fnv1a_random'), expected % 0x7fffffff,
        `buffer at offset ${shift}: ${JSON.stringify(key)}`);
    }
  });
  // The null key is hashed as "" by 'fnv1a' (the unit test's NULL row) and left undecided by fnv1a_random.
  t.equal(partitionForKey(null, 0x7fffffff, 'fnv1a'), 0x7ee3623b);
  t.equal(partitionForKey(null, 0x7fffffff, 'fnv1a_random'), -1);
});

// librdkafka tests/0048-partitioner.c do_test_partitioners (v2.12): keys NULL, "",
// "23456" ("123456" + 1), a long string and "hejsan"; -1 where the partitioner is random.
t.test('librdkafka tests/0048-partitioner.c', async (t) => {
  const keys = [null, '', '23456', 'this is another string with more length to it perhaps', 'hejsan'];
  const table = (n) => ({
    consistent: [0x0 % n, 0x0 % n, 0xb1b451d7 % n, 0xb0150df7 % n, 0xd077037e % n], // 'crc32' command on OSX
    consistent_random: [-1, -1, 0xb1b451d7 % n, 0xb0150df7 % n, 0xd077037e % n],
    murmur2: [0x106e08d9 % n, 0x106e08d9 % n, 0x058d780f % n, 0x4f7703da % n, 0x5ec19395 % n], // tests/java/Murmur2Cli
    murmur2_random: [-1, 0x106e08d9 % n, 0x058d780f % n, 0x4f7703da % n, 0x5ec19395 % n],
    fnv1a: [0x7ee3623b % n, 0x7ee3623b % n, 0x27e6f469 % n, 0x155e3e5f % n, 0x17b1e27a % n], // Go hash/fnv
    fnv1a_random: [-1, 0x7ee3623b % n, 0x27e6f469 % n, 0x155e3e5f % n, 0x17b1e27a % n],
  });
  for (const n of [7, 17]) { // the test's quick and full partition counts
    for (const [partitioner, expected] of Object.entries(table(n))) {
      t.same(keys.map((k) => partitionForKey(k, n, partitioner)), expected, `${partitioner}, ${n} partitions`);
      t.same(Array.from(partitionForKeys(keys, n, partitioner)), expected, `${partitioner}, ${n} partitions, batch`);
      t.same(keys.map((k) => partitionForKey(k == null ? k : Buffer.from(k), n, partitioner)), expected,
        `${partitioner}, ${n} partitions, Buffer keys`);
    }
  }
});

t.test('the default partitioner is murmur2_random, the Java producer\'s', async (t) => {
  t.equal(partitionForKey('hejsan', 17), 0x5ec19395 % 17);
  t.equal(partitionForKey(undefined, 17), -1);
});
