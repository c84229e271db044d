'use strict';
// Shared helpers of the DynamicPartitioner tests: key streams, and an independent reference
// for decayed counts. The reference does not copy the implementation's forward weighting
// (one growing weight, periodic renormalisation, f32 sketch counters): it keeps, per key,
// a value and the time it was last updated, and decays it lazily by 2^(-(now - then) / H),
// in f64. Time is the message index (all topics), as for a { messages: H } horizon: at
// time `now`, the message of time t weighs 2^((t - now) / H); a message counted "now"
// weighs 1.
//
// Run directly (tap does), this file checks the reference against closed forms.

const { KeyStream, parseWorkload } = require('../../../build/tools/workload.js');

/** Decayed counts of keys 0..size-1 (and their total), exact in f64. */
class DecayedCounts {
  constructor(size, halfLife) {
    this.halfLife = halfLife;
    this.value = new Float64Array(size);
    this.at = new Float64Array(size);
    this.totalValue = 0;
    this.totalAt = 0;
  }

  /** Counts one message of key k at time `now` (weight `w`, default 1). */
  add(k, now, w = 1) {
    this.value[k] = this.get(k, now) + w;
    this.at[k] = now;
    this.totalValue = this.total(now) + w;
    this.totalAt = now;
  }

  /** Counts one message of no tracked key (it only adds to the total). */
  addOther(now, w = 1) {
    this.totalValue = this.total(now) + w;
    this.totalAt = now;
  }

  get(k, now) {
    const v = this.value[k];
    return v === 0 ? 0 : v * Math.pow(2, (this.at[k] - now) / this.halfLife);
  }

  total(now) {
    return this.totalValue === 0 ? 0 : this.totalValue * Math.pow(2, (this.totalAt - now) / this.halfLife);
  }

  share(k, now) {
    const t = this.total(now);
    return t > 0 ? this.get(k, now) / t : 0;
  }
}

/**
 * Decayed counts at the end of a stream of key indexes, computed directly from the
 * definition (each message i of N weighs 2^((i - N) / H)): a second, non-incremental
 * reference.
 */
function decayedAtEnd(indexes, size, halfLife, end = indexes.length) {
  const counts = new Float64Array(size);
  let total = 0;
  for (let i = 0; i < end; i++) {
    const w = Math.pow(2, (i - end) / halfLife);
    counts[indexes[i]] += w;
    total += w;
  }
  return { counts, total };
}

/** `messages` key indexes in [0, keys) from the package's seeded Zipf stream. */
function zipfIndexes(exponent, keys, messages, seed = 1) {
  const stream = new KeyStream(parseWorkload(exponent === 0 ? 'uniform' : `zipf:${exponent}`), keys, seed);
  const out = new Int32Array(messages);
  for (let i = 0; i < messages; i++) out[i] = stream.next();
  return out;
}

/** Zipf probabilities of ranks 0..keys-1 (rank r has probability ∝ 1/(r+1)^s), computed here. */
function zipfProbabilities(exponent, keys) {
  const p = new Float64Array(keys);
  let sum = 0;
  for (let r = 0; r < keys; r++) sum += p[r] = Math.pow(r + 1, -exponent);
  for (let r = 0; r < keys; r++) p[r] /= sum;
  return p;
}

function keyNames(count, prefix = 'key-') {
  return Array.from({ length: count }, (_, i) => `${prefix}${i}`);
}

/** mulberry32, seeded, for streams built by the tests themselves. */
const { prng } = require('../../lib/random-keys');

/**
 * Records 'hot' / 'cooled' events of a partitioner with the message index they happened
 * at (`clock.now` at the time of the event: the index of the message being decided).
 */
function recordEvents(partitioner, clock) {
  const events = [];
  partitioner.on('hot', (h) => events.push({ type: 'hot', at: clock.now, ...h }));
  partitioner.on('cooled', (h) => events.push({ type: 'cooled', at: clock.now, ...h }));
  return events;
}

/** The key of a HotKey as a string (Buffers as hex, null as '\0null'), for Map / Set use. */
function keyId(key) {
  if (key === null || key === undefined) return '\0null';
  return typeof key === 'string' ? key : `\0hex:${Buffer.from(key).toString('hex')}`;
}

module.exports = { DecayedCounts, decayedAtEnd, zipfIndexes, zipfProbabilities, keyNames, prng, recordEvents, keyId };

if (require.main === module) {
  const t = require('tap');

  t.test('the lazy reference matches closed forms', async (t) => {
    // One message per time step of key 0: after N steps its count is the geometric series
    // sum_{j=0}^{N-1} 2^(-j/H) = (1 - 2^(-N/H)) / (1 - 2^(-1/H)).
    const H = 100;
    const d = new DecayedCounts(2, H);
    for (let i = 0; i < 1000; i++) d.add(0, i);
    const series = (1 - Math.pow(2, -1000 / H)) / (1 - Math.pow(2, -1 / H));
    t.ok(Math.abs(d.get(0, 999) - series) < 1e-9 * series, 'geometric series');
    t.ok(Math.abs(d.total(999) - series) < 1e-9 * series, 'total');
    // After a half-life with no messages, half.
    t.ok(Math.abs(d.get(0, 999 + H) - series / 2) < 1e-9 * series, 'halves in H');
    t.equal(d.get(1, 999), 0, 'an unseen key counts 0');
  });

  t.test('the lazy reference and the direct definition agree', async (t) => {
    const idx = zipfIndexes(1.0, 50, 5000, 3);
    const d = new DecayedCounts(50, 700);
    for (let i = 0; i < idx.length; i++) d.add(idx[i], i);
    // decayedAtEnd weighs message i by 2^((i - N)/H); the lazy one by 2^((i - (N-1))/H):
    // the same up to the common factor 2^(-1/H), which shares do not see.
    const direct = decayedAtEnd(idx, 50, 700);
    for (let k = 0; k < 50; k++) {
      const a = d.share(k, idx.length - 1);
      const b = direct.counts[k] / direct.total;
      t.ok(Math.abs(a - b) <= 1e-12, `key ${k}: ${a} vs ${b}`);
    }
  });

  t.test('the Zipf stream has the Zipf frequencies', async (t) => {
    const keys = 100;
    const idx = zipfIndexes(1.0, keys, 200_000, 5);
    const freq = new Float64Array(keys);
    for (const k of idx) freq[k]++;
    const p = zipfProbabilities(1.0, keys);
    for (const r of [0, 1, 2, 9]) {
      const expected = p[r] * idx.length;
      t.ok(Math.abs(freq[r] - expected) < 5 * Math.sqrt(expected), `rank ${r}: ${freq[r]} vs ${expected.toFixed(0)}`);
    }
  });
}
