'use strict';
// Runs librdkafka's own rd_murmur2 / rd_crc32 / rd_fnv1a (see test/c/librdkafka-hashes.c),
// compiled with gcc from the librdkafka sources inside node-rdkafka, on a list of keys.
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync } = require('node:fs');
const { join, dirname } = require('node:path');
const os = require('node:os');
const { wireBytes } = require('./random-keys');

const librdkafka = join(dirname(require.resolve('node-rdkafka/package.json')), 'deps', 'librdkafka');
const source = join(__dirname, '..', 'c', 'librdkafka-hashes.c');
const binary = join(os.tmpdir(), `kdp-librdkafka-hashes-${process.pid}`);

/** Compiles the oracle; returns an error message, or null when it is ready. */
function build() {
  if (existsSync(binary)) return null;
  mkdirSync(dirname(binary), { recursive: true });
  const src = join(librdkafka, 'src');
  // The unit-test functions in rdmurmur2.c/rdfnv1a.c refer to the test framework, which
  // we neither link nor call.
  const args = ['-O2', '-I', src, '-I', librdkafka, source, join(src, 'rdmurmur2.c'), join(src, 'rdfnv1a.c'),
    '-o', binary, '-Wl,--unresolved-symbols=ignore-all', '-lz'];
  const r = spawnSync('gcc', args, { encoding: 'utf8' });
  if (r.error) return `gcc could not run: ${r.error.message}`;
  return r.status === 0 ? null : `gcc failed:\n${r.stderr}`;
}

/** [{ murmur2, crc32, fnv1a }] as unsigned 32-bit values, one per key (null keys hash as ""). */
function librdkafkaHashes(keys) {
  const error = build();
  if (error) throw new Error(error);
  const parts = [];
  for (const key of keys) {
    const bytes = key == null ? Buffer.alloc(0) : wireBytes(key);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(bytes.length);
    parts.push(len, bytes);
  }
  const r = spawnSync(binary, [], { input: Buffer.concat(parts), maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`librdkafka oracle exited with ${r.status}: ${r.stderr}`);
  const out = r.stdout;
  if (out.length !== keys.length * 12) throw new Error(`librdkafka oracle gave ${out.length / 12} rows for ${keys.length} keys`);
  return keys.map((_, i) => ({
    murmur2: out.readUInt32LE(i * 12),
    crc32: out.readUInt32LE(i * 12 + 4),
    fnv1a: out.readUInt32LE(i * 12 + 8),
  }));
}

module.exports = { librdkafkaHashes };
