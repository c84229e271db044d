'use strict';
// Cross-check against the real Kafka Java client: murmur2(key) must equal
// org.apache.kafka.common.utils.Utils.murmur2(bytes), and partitionForKey(key, n) must equal
// Utils.toPositive(Utils.murmur2(bytes)) % n, for random keys given as node-rdkafka would
// send them (a string as its UTF-8 bytes, a Buffer as is). All keys go to one Java process
// running test/java/Murmur2Fixture.java (see there for its line format).
//
// Needs a JDK (11+) on PATH; without one the test is skipped with a visible message. The
// jars come from test/java/pom.xml via Maven, fetched here when missing.
// KDP_CROSSCHECK_SEED=<uint32> replays another key set.

const t = require('tap');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { murmur2, partitionForKey, partitionForKeys } = require('../..');

const JAVA_DIR = path.join(__dirname, '..', 'java');
const LIB_DIR = path.join(JAVA_DIR, 'target', 'lib');
const FIXTURE = path.join(JAVA_DIR, 'Murmur2Fixture.java');
const KAFKA_JAR = 'kafka-clients-4.4.0.jar';
// Utils has a static slf4j Logger: without slf4j-api on the classpath, Utils.murmur2
// throws NoClassDefFoundError: org/slf4j/LoggerFactory.
const SLF4J_JAR = /^slf4j-api-.*\.jar$/;
const MVN_ARGS = [
  '-q', '-B', 'dependency:copy-dependencies',
  '-DoutputDirectory=target/lib', '-DincludeArtifactIds=kafka-clients,slf4j-api',
];

const PARTITION_COUNTS = [1, 2, 3, 7, 12, 48, 100, 1000, 2147483647];
const KEYS_PER_CATEGORY = 6000;
const MAX_LENGTH = 2048;
const DEFAULT_SEED = 0x5eed2024;

// ---- seeded PRNG (mulberry32, shared with the other tests) ----

const { prng: mulberry32 } = require('../lib/random-keys');

function makeKeys(seed) {
  const rnd = mulberry32(seed);
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1)); // inclusive
  const pick = (array) => array[Math.floor(rnd() * array.length)];

  // Mostly short keys (as real keys are), but every size up to MAX_LENGTH shows up.
  const length = () => {
    const r = rnd();
    if (r < 0.45) return int(0, 16);
    if (r < 0.75) return int(17, 64);
    if (r < 0.92) return int(65, 512);
    return int(513, MAX_LENGTH);
  };

  const codePoint = {
    1: () => int(0, 0x7f),
    2: () => int(0x80, 0x7ff),
    3: () => {
      const c = int(0x800, 0xffff - 0x800); // skip the surrogate block
      return c < 0xd800 ? c : c + 0x800;
    },
    4: () => int(0x10000, 0x10ffff),
  };
  const EDGE_CODE_POINTS = [0, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xfffe, 0xffff, 0x10000, 0x10ffff];
  const utf8Char = () => {
    const r = rnd();
    if (r < 0.03) return String.fromCodePoint(pick(EDGE_CODE_POINTS));
    return String.fromCodePoint(codePoint[pick([1, 2, 3, 4])]());
  };
  const highSurrogate = () => String.fromCharCode(int(0xd800, 0xdbff));
  const lowSurrogate = () => String.fromCharCode(int(0xdc00, 0xdfff));

  const generators = {
    // Any 7-bit char, control chars and NUL included, biased to printable.
    ascii: (n) => {
      let s = '';
      for (let i = 0; i < n; i++) s += String.fromCharCode(rnd() < 0.8 ? int(0x20, 0x7e) : int(0, 0x7f));
      return s;
    },
    // n code points of 1 to 4 UTF-8 bytes (4-byte ones are surrogate pairs in JS).
    utf8: (n) => {
      let s = '';
      for (let i = 0; i < n; i++) s += utf8Char();
      return s;
    },
    // Valid text with lone surrogates in it: high at the end, high before a non-low,
    // low alone, low then high (a reversed pair), and valid pairs next to them.
    surrogates: (n) => {
      let s = n > 0 && rnd() < 0.2 ? lowSurrogate() : '';
      while (s.length < n) {
        const r = rnd();
        if (r < 0.2) s += highSurrogate();
        else if (r < 0.35) s += lowSurrogate();
        else if (r < 0.45) s += lowSurrogate() + highSurrogate();
        else if (r < 0.55) s += highSurrogate() + lowSurrogate();
        else s += utf8Char();
      }
      if (n > 0 && rnd() < 0.2) s = s.slice(0, n - 1) + highSurrogate();
      return s.slice(0, n); // may cut a pair in two: one more lone high surrogate
    },
    // Arbitrary bytes: Buffers, Buffers that are views at odd offsets into a larger
    // buffer, and plain Uint8Arrays.
    bytes: (n) => {
      const r = rnd();
      const offset = r < 0.3 ? int(1, 15) : 0;
      const backing = r < 0.15 ? new Uint8Array(offset + n + int(0, 7)) : Buffer.alloc(offset + n + int(0, 7));
      for (let i = 0; i < backing.length; i++) backing[i] = int(0, 255);
      if (offset > 0) return backing.subarray(offset, offset + n);
      return r < 0.15 ? backing.subarray(0, n) : Buffer.from(backing.subarray(0, n));
    },
  };

  const keys = []; // { category, key }
  for (const [category, generate] of Object.entries(generators)) {
    // Every length 0..64 once (all murmur2 tail cases, the short-string fast path), then random.
    for (let n = 0; n <= 64; n++) keys.push({ category, key: generate(n) });
    for (let i = 0; i < KEYS_PER_CATEGORY; i++) keys.push({ category, key: generate(length()) });
  }
  // Beyond the 2048 above: keys around the 64 KiB key region of the WebAssembly core, the
  // longer ones hashed through it in chunks (src/core/hash.ts streamHash).
  const ascii = generators.ascii;
  const bytes = generators.bytes;
  for (const n of [21845, 21846, 30000, 65535, 65536, 65537, 65538, 65539, 65540, 131075, 200001]) {
    keys.push({ category: 'long', key: ascii(n) });
    keys.push({ category: 'long', key: bytes(n) });
  }
  keys.push({ category: 'long', key: generators.utf8(30000) });
  keys.push({ category: 'long', key: generators.surrogates(40000) });
  return keys;
}

/** The bytes node-rdkafka puts on the wire for a key. */
function wireBytes(key) {
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key.buffer, key.byteOffset, key.byteLength);
}

function shortHex(bytes) {
  const LIMIT = 96;
  const hex = Buffer.from(bytes.subarray(0, LIMIT)).toString('hex');
  return bytes.length > LIMIT ? `${hex}... (${bytes.length} bytes)` : hex || '(empty)';
}

// ---- the Java side ----

function hasJava() {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore' });
  return !(probe.error && probe.error.code === 'ENOENT');
}

function findJars() {
  const files = fs.existsSync(LIB_DIR) ? fs.readdirSync(LIB_DIR) : [];
  const slf4j = files.find((f) => SLF4J_JAR.test(f));
  if (!files.includes(KAFKA_JAR) || !slf4j) return null;
  return [path.join(LIB_DIR, KAFKA_JAR), path.join(LIB_DIR, slf4j)];
}

/** Fetches the jars with Maven; returns an error message, or null on success. */
function fetchJars(t) {
  const started = Date.now();
  const mvn = spawnSync('mvn', MVN_ARGS, {
    cwd: JAVA_DIR,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (mvn.error) return `could not run mvn ${MVN_ARGS.join(' ')}: ${mvn.error.message}`;
  if (mvn.status !== 0) {
    return `mvn ${MVN_ARGS.join(' ')} (in ${JAVA_DIR}) failed with status ${mvn.status}:\n${mvn.stdout}`;
  }
  if (!findJars()) return `mvn succeeded but ${KAFKA_JAR} and slf4j-api are not both in ${LIB_DIR}:\n${mvn.stdout}`;
  t.comment(`fetched the kafka-clients jars with Maven in ${Date.now() - started} ms`);
  return null;
}

/** Runs the fixture once over all keys; returns its rows, [murmur2, [p...]], or throws. */
function runJava(jars, wire) {
  const counts = PARTITION_COUNTS.join(',');
  const input = wire.map((b) => `${b.length === 0 ? '-' : b.toString('hex')} ${counts}\n`).join('');
  const java = spawnSync('java', ['-cp', jars.join(path.delimiter), FIXTURE], {
    input,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (java.error) throw new Error(`java failed to run: ${java.error.message}`);
  if (java.status !== 0) {
    throw new Error(`java exited with status ${java.status} (signal ${java.signal}):\n${java.stderr}`);
  }
  const lines = java.stdout.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => {
    const [hash, partitions] = line.split(' ');
    return [Number(hash), (partitions || '').split(',').map(Number)];
  });
}

// ---- the test ----

if (!hasJava()) {
  t.comment('no JDK: Java cross-check skipped');
  t.test('Java cross-check', { skip: 'no JDK: Java cross-check skipped (java is not on PATH)' });
} else {
  t.test('murmur2 and partitionForKey match kafka-clients 4.4.0 Utils', { timeout: 300000 }, async (t) => {
    const started = Date.now();
    let jars = findJars();
    if (!jars) {
      t.comment(`kafka-clients jars missing in ${LIB_DIR}: fetching them with Maven`);
      const error = fetchJars(t);
      if (error) {
        t.fail(error);
        return;
      }
      jars = findJars();
    }

    const seed = process.env.KDP_CROSSCHECK_SEED !== undefined ? Number(process.env.KDP_CROSSCHECK_SEED) >>> 0 : DEFAULT_SEED;
    const keys = makeKeys(seed);
    const wire = keys.map(({ key }) => wireBytes(key));
    const totalBytes = wire.reduce((sum, b) => sum + b.length, 0);
    t.comment(`seed ${seed}: ${keys.length} keys, ${totalBytes} bytes`);

    const javaStarted = Date.now();
    let rows;
    try {
      rows = runJava(jars, wire);
    } catch (error) {
      t.fail(error.message);
      return;
    }
    t.comment(`Java answered ${rows.length} rows in ${Date.now() - javaStarted} ms`);
    t.equal(rows.length, keys.length, 'Java answered one row per key');

    const categories = [...new Set(keys.map((k) => k.category))];
    const stats = Object.fromEntries(categories.map((c) => [c, { keys: 0, hash: [], partition: [], batch: [] }]));
    const compared = Math.min(rows.length, keys.length);
    for (let i = 0; i < compared; i++) {
      const { category, key } = keys[i];
      const [javaHash, javaPartitions] = rows[i];
      const s = stats[category];
      s.keys++;
      const hash = murmur2(key);
      if (hash !== javaHash) s.hash.push({ i, key: shortHex(wire[i]), murmur2: hash, java: javaHash });
      PARTITION_COUNTS.forEach((n, j) => {
        const p = partitionForKey(key, n);
        if (p !== javaPartitions[j]) s.partition.push({ i, key: shortHex(wire[i]), n, partitionForKey: p, java: javaPartitions[j] });
      });
    }
    // The batch path too: partitionForKeys packs many keys into one WebAssembly call.
    const keyList = keys.slice(0, compared).map((k) => k.key);
    PARTITION_COUNTS.forEach((n, j) => {
      const batch = partitionForKeys(keyList, n);
      for (let i = 0; i < compared; i++) {
        if (batch[i] !== rows[i][1][j]) {
          stats[keys[i].category].batch.push({ i, key: shortHex(wire[i]), n, partitionForKeys: batch[i], java: rows[i][1][j] });
        }
      }
    });

    const FIRST = 5;
    for (const category of categories) {
      const s = stats[category];
      t.equal(s.hash.length, 0, `${category} (${s.keys} keys): murmur2 equals Utils.murmur2`, { firstMismatches: s.hash.slice(0, FIRST) });
      t.equal(s.partition.length, 0, `${category} (${s.keys} keys x ${PARTITION_COUNTS.length} counts): partitionForKey equals toPositive(murmur2) % n`, {
        firstMismatches: s.partition.slice(0, FIRST),
      });
      t.equal(s.batch.length, 0, `${category}: partitionForKeys equals toPositive(murmur2) % n`, { firstMismatches: s.batch.slice(0, FIRST) });
    }
    t.comment(`compared ${compared} keys x ${PARTITION_COUNTS.length} partition counts in ${Date.now() - started} ms`);
  });
}
