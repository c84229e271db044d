'use strict';
// Differential test: our partitions against librdkafka's own hash functions (compiled from
// the sources node-rdkafka ships, test/c/librdkafka-hashes.c) for 100,000+ random keys, all
// six partitioners and a range of partition counts. The partitioners' rules on top of the
// hashes are restated here from rd_kafka_msg_partitioner_* (librdkafka src/rdkafka_msg.c, v2.12).
const t = require('tap');
const zlib = require('node:zlib');
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2');
const { murmur2, partitionForKey, partitionForKeys, PARTITIONERS } = require('../..');
const { randomKeys, wireBytes } = require('../lib/random-keys');
const { librdkafkaHashes } = require('../lib/librdkafka-oracle');

const COUNTS = [1, 2, 3, 4, 7, 12, 17, 48, 100, 1000, 65536, 0x7fffffff];

// FNV-1a of each of these is 0x80000000 (INT32_MIN), whose abs() wraps to itself: found by
// running FNV-1a's invertible last steps backwards from that value.
const FNV1A_INT32_MIN = ['qqk42v', Buffer.from('e7a3006e79', 'hex'), Buffer.from('eecf032328', 'hex')];

// Keys longer than the 64 KiB key region, so that chunked hashing is compared too.
const LONG = [Buffer.alloc(65536, 7), Buffer.alloc(65537, 9), 'x'.repeat(70001), 'é'.repeat(40000), Buffer.alloc(200003, 1)];

const keys = [null, undefined, '', Buffer.alloc(0), ...FNV1A_INT32_MIN, ...LONG, ...randomKeys(100000, 0x4b414641)];
const hashes = librdkafkaHashes(keys);

/** What librdkafka's partitioner `name` returns, from librdkafka's own hashes of the key. */
function expected(name, key, h, n) {
  const isNull = key == null;
  const isEmpty = !isNull && key.length === 0;
  switch (name) {
    case 'murmur2_random': return isNull ? -1 : (h.murmur2 & 0x7fffffff) % n;
    case 'murmur2': return (h.murmur2 & 0x7fffffff) % n;
    case 'consistent_random': return isNull || isEmpty ? -1 : h.crc32 % n;
    case 'consistent': return h.crc32 % n;
    case 'fnv1a_random': return isNull ? -1 : h.fnv1a % n;
    case 'fnv1a': return h.fnv1a % n;
  }
  throw new Error(name);
}

t.test('the librdkafka oracle agrees with the fixed points we know', async (t) => {
  t.equal(hashes[keys.indexOf('qqk42v')].fnv1a, 0x80000000, 'rd_fnv1a gives 2^31 for an INT32_MIN hash');
  t.equal(hashes[0].crc32, 0, 'rd_crc32 of the empty key');
});

t.test('murmur2 equals librdkafka\'s rd_murmur2 (Java\'s Utils.murmur2) for every key', async (t) => {
  let bad = 0;
  keys.forEach((key, i) => {
    if (key == null) return;
    if (murmur2(key) !== (hashes[i].murmur2 | 0) && bad++ < 5) t.fail(`key ${wireBytes(key).toString('hex').slice(0, 80)}`);
  });
  t.equal(bad, 0, `${keys.length - 2} keys`);
});

t.test('the oracle\'s murmur2 and CRC-32 agree with KafkaJS and zlib on 20,000 keys', async (t) => {
  let bad = 0;
  for (let i = 0; i < 20000; i++) {
    if (keys[i] == null) continue;
    const bytes = wireBytes(keys[i]);
    if (kafkajsMurmur2(bytes) !== (hashes[i].murmur2 | 0)) bad++;
    if (zlib.crc32(bytes) !== hashes[i].crc32) bad++;
  }
  t.equal(bad, 0);
});

for (const name of PARTITIONERS) {
  t.test(`partitionForKey and partitionForKeys equal librdkafka's '${name}'`, async (t) => {
    for (const n of COUNTS) {
      let bad = 0;
      const batch = partitionForKeys(keys, n, name);
      t.equal(batch.length, keys.length);
      for (let i = 0; i < keys.length; i++) {
        const want = expected(name, keys[i], hashes[i], n);
        const single = partitionForKey(keys[i], n, name);
        if ((single !== want || batch[i] !== want) && bad++ < 3) {
          t.fail(`n=${n} key#${i} ${keys[i] == null ? keys[i] : wireBytes(keys[i]).toString('hex').slice(0, 80)}: ` +
            `single ${single}, batch ${batch[i]}, librdkafka ${want}`);
        }
      }
      t.equal(bad, 0, `${keys.length} keys, ${n} partitions`);
    }
  });
}

// partitionForKeys writes a run of 8 or more string keys with one join and one native write
// (falling back key by key when one is not ASCII). In `keys` the kinds alternate, so runs are
// short; here the same keys come grouped by kind: long runs of ASCII strings (crossing the
// 64 KiB key region and the batch table), runs of UTF-8 strings, runs broken by one null,
// Buffer or non-ASCII key.
t.test('partitionForKeys on long runs of string keys equals librdkafka', async (t) => {
  const byKind = (f) => keys.map((key, i) => i).filter((i) => f(keys[i]));
  const ascii = byKind((k) => typeof k === 'string' && /^[\x00-\x7f]*$/.test(k));
  const other = byKind((k) => !(typeof k === 'string' && /^[\x00-\x7f]*$/.test(k)));
  const order = [];
  for (let a = 0, o = 0; a < ascii.length || o < other.length;) {
    const run = 1 + (a % 5000); // runs of 1 to 5000 ASCII keys, then one other key
    for (let j = 0; j < run && a < ascii.length; j++) order.push(ascii[a++]);
    if (o < other.length) order.push(other[o++]);
  }
  t.ok(ascii.length > 20000, `premise: ${ascii.length} ASCII string keys`);
  for (const name of ['murmur2_random', 'consistent', 'fnv1a']) {
    for (const n of [7, 100]) {
      const batch = partitionForKeys(order.map((i) => keys[i]), n, name);
      let bad = 0;
      order.forEach((i, j) => {
        const want = expected(name, keys[i], hashes[i], n);
        if (batch[j] !== want && bad++ < 3) t.fail(`${name} n=${n} position ${j} key#${i}: batch ${batch[j]}, librdkafka ${want}`);
      });
      t.equal(bad, 0, `${name}, ${n} partitions: ${order.length} keys`);
    }
  }
});

t.test('a Uint8Array key hashes like the Buffer of the same bytes', async (t) => {
  const buffers = keys.filter((key) => Buffer.isBuffer(key));
  const differing = buffers.filter((key) => {
    const u8 = new Uint8Array(key);
    return partitionForKey(u8, 1000, 'fnv1a') !== partitionForKey(key, 1000, 'fnv1a') || murmur2(u8) !== murmur2(key);
  });
  t.ok(buffers.length > 20000);
  t.equal(differing.length, 0, `${buffers.length} Buffer keys`);
});
