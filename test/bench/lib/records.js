'use strict';
// Hand-made consumer records for the bench:e2e figures' tests (no Kafka): one consumer's rows
// [n, seq, flags, kind] of producer 0 and key 0, handled one ms apart, in row order.

const { summarizeRun, COLUMNS } = require('../../../bench/e2e/stats');

// The kind column as bench/e2e/stats.js documents it: the order header's kind (moved 3,
// spread 2), plus 8 when the key was split.
const MOVED = 3;
const SPREAD = 2;
const SPLIT = 8;

/** The records of one consumer, as bench/e2e/consumer.js writes them. */
function part(rows) {
  const out = { length: rows.length };
  for (const name of COLUMNS) out[name] = new Float64Array(rows.length);
  rows.forEach(([n, seq, flags, kind], i) => {
    out.n[i] = n;
    out.seq[i] = seq;
    out.flags[i] = flags;
    out.kind[i] = kind;
    out.at[i] = 1000 + i;
    out.sent[i] = 900;
  });
  return out;
}

/** summarizeRun over those records, every message sent and acknowledged. */
function run(rows) {
  const producers = [{ sent: rows.length, ackedMask: new Uint8Array(rows.length).fill(1) }];
  return summarizeRun({ producers, parts: [part(rows)], consumers: 1, keys: 1 });
}

module.exports = { MOVED, SPREAD, SPLIT, part, run };
