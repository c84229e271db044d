'use strict';
// A randomized model of what producers and librdkafka write for the resequencer's tests
// (resequencer-simulation.test.js, resequencer-group-records.test.js): many producers send the
// same keys, which turn hot (ANCHOR on the key's normal partition), are spread over several
// partitions (SPREAD, each naming its predecessor), and cool (RETURN on the normal partition,
// then cold messages there); each producer batches per partition and flushes its batches at
// random moments, so the partitions' logs interleave producers and runs arbitrarily, each
// producer's messages of one partition staying in send order.
const { encodeOrderHeader, ORDER_HEADER, ORDER_ANCHOR, ORDER_SPREAD, ORDER_RETURN } = require('../../..');

function rng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
}

/** Partition logs of a simulated run: [[{ producer, key, index, header, partition }]]. */
function simulate({ seed, producers, keys, partitions, messages, hotKeys, headerVersion = 2 }) {
  const random = rng(seed);
  const logs = Array.from({ length: partitions }, () => []);
  const state = [];
  for (let p = 0; p < producers; p++) {
    const id = (0xa000 + p).toString(16).padStart(16, '0');
    state.push({ id, sequence: 0, keys: new Map(), batches: Array.from({ length: partitions }, () => []) });
  }
  const normal = (k) => (k * 7919) % partitions;
  let sent = 0;
  while (sent < messages) {
    const p = Math.floor(random() * producers);
    const s = state[p];
    // Hot keys are the first few, most of the traffic.
    const k = random() < 0.7 ? Math.floor(random() * hotKeys) : Math.floor(random() * keys);
    let ks = s.keys.get(k);
    if (!ks) s.keys.set(k, (ks = { hot: false, index: 0, previous: 0, previousAt: -1, width: 1 }));
    let kind = 'c';
    let partition = normal(k);
    if (!ks.hot && k < hotKeys && random() < 0.05) {
      ks.hot = true;
      ks.width = 2 + Math.floor(random() * (partitions - 1));
      kind = 'a';
    } else if (ks.hot && random() < 0.02) {
      ks.hot = false;
      kind = 'r';
    } else if (ks.hot) {
      kind = 's';
      partition = (normal(k) + Math.floor(random() * ks.width)) % partitions;
    }
    let header;
    if (kind !== 'c') {
      const sequence = ++s.sequence;
      const previous = kind === 'a' ? 0 : ks.previous;
      const code = kind === 'a' ? ORDER_ANCHOR : kind === 's' ? ORDER_SPREAD : ORDER_RETURN;
      header = headerVersion === 1
        ? `1;${kind};${s.id};${sequence};${previous};${ks.width};${partitions};0`
        : encodeOrderHeader(code, s.id, sequence, previous, ks.width, partitions, 0, kind === 'a' ? -1 : ks.previousAt);
      ks.previous = kind === 'r' ? 0 : sequence;
      ks.previousAt = partition;
    }
    s.batches[partition].push({ producer: p, key: k, index: ks.index++, header, partition });
    sent++;
    // librdkafka sends a partition's batch when it is full or lingered: here, at random.
    if (random() < 0.15) {
      const q = Math.floor(random() * partitions);
      logs[q].push(...s.batches[q]);
      s.batches[q] = [];
    }
  }
  for (let q = 0; q < partitions; q++) for (const s of state) logs[q].push(...s.batches[q]);
  return logs;
}

/** Reads the logs in a random interleaving, some partitions held back for a while. */
function readOrder(logs, seed) {
  const random = rng(seed);
  const next = logs.map(() => 0);
  const order = [];
  const backUntil = logs.map(() => 0);
  let remaining = logs.reduce((s, l) => s + l.length, 0);
  while (remaining > 0) {
    const p = Math.floor(random() * logs.length);
    if (next[p] === logs[p].length) continue;
    if (backUntil[p] > order.length && random() < 0.98) continue;
    if (random() < 0.001) backUntil[p] = order.length + Math.floor(random() * 2000);
    const run = 1 + Math.floor(random() * 50);
    for (let i = 0; i < run && next[p] < logs[p].length; i++) {
      order.push([p, next[p]++]);
      remaining--;
    }
  }
  return order;
}

function toMessage(m, offset) {
  return {
    topic: 't', partition: m.partition, offset, key: `key-${m.key}`, value: m,
    headers: m.header === undefined ? [] : [{ other: 'x' }, { [ORDER_HEADER]: m.header }],
  };
}

module.exports = { rng, simulate, readOrder, toMessage };
