'use strict';
// npm run bench:spread — how much spreading the default policy does for the balance it gets,
// against an offline minimum, on Zipf workloads (100k keys, 1M messages) at 4, 12, 48 and 100
// partitions, plus a workload whose hot set moves every 200k messages.
//
// Per run (kdp simulate's engine, default options but for --tolerance):
// - spread: messages of spread keys (marked: an order header on a producer), as a share of all;
// - minimum: offlineMinimum() — the least traffic of whole keys that must leave their
//   partitions for every partition to be within the tolerance, with each key's share known —
//   at the partitioner's balanceTolerance (the like-for-like yardstick) and at the other of
//   0.02 and 0.05;
// - max/mean after warm-up (the run without its first window), the worst window after the
//   first against the noise of placing each message uniformly at random (≈ 1 + 2.5·√(n/W)),
//   and hot-key detection (truly hot keys missed, and false ones).
//
// --help lists the flags.

const { partitionForKeys, DEFAULTS } = require('..');
const { flags } = require('./common');

const args = flags(__filename, {
  json: { type: 'boolean', help: 'print the figures as JSON' },
  messages: { type: 'number', integer: true, min: 2, default: 1_000_000, help: 'messages per run' },
  window: {
    type: 'number', integer: true, min: 1, max: (v) => Math.floor(v.messages / 2), default: 100_000, accepts: 'an integer in [1, messages / 2]',
    why: ' (the figures after warm-up are of the windows after the first: --messages must hold two)', help: 'messages per window',
  },
  seed: { type: 'number', integer: true, min: 0, max: 0xffffffff, default: 1, help: "the key stream's seed" },
  tolerance: { type: 'number', arg: 'X', min: 0, max: 1e6, default: DEFAULTS.balanceTolerance, help: "the partitioner's balanceTolerance (the default is the partitioner's)" },
}, { usage: 'npm run bench:spread --' });

const { simulate, offlineMinimum } = require('../build/tools/simulate');
const { KeyStream, parseWorkload } = require('../build/tools/workload');

const JSON_OUT = args.json;
const MESSAGES = args.messages;
const WINDOW = args.window;
const SEED = args.seed;
const TOLERANCE = args.tolerance;
const KEYS = 100_000;
const OPTIONS = TOLERANCE === DEFAULTS.balanceTolerance ? {} : { balanceTolerance: TOLERANCE };
/** The other yardstick: the minimum at 0.05 beside a run at 0.02 (or any other), at 0.02 beside one at 0.05. */
const OTHER = TOLERANCE === 0.05 ? 0.02 : 0.05;

/** The offline minimum at `tolerance` for a Zipf workload over KEYS keys at n partitions. */
function minimumAt(workload, n, tolerance) {
  const stream = new KeyStream(parseWorkload(workload), KEYS, 1);
  const names = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
  const home = partitionForKeys(names, n, DEFAULTS.partitioner);
  const shares = new Float64Array(KEYS);
  for (let r = 0; r < KEYS; r++) shares[stream.keyOfRank(r)] = stream.probability(r);
  return offlineMinimum(shares, home, n, tolerance);
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const rows = [];
for (const s of ['0.8', '1.0', '1.2']) {
  for (const n of [4, 12, 48, 100]) {
    const workload = `zipf:${s}`;
    const r = simulate({ workload, keys: KEYS, messages: MESSAGES, partitions: n, window: WINDOW, seed: SEED, options: OPTIONS });
    const spread = r.dynamic.spreadMessages / MESSAGES;
    const noise = 1 + 2.5 * Math.sqrt(n / WINDOW);
    const worst = Math.max(...r.dynamic.windows.slice(1));
    rows.push({
      workload, partitions: n,
      spread, moved: r.dynamic.movedMessages / MESSAGES,
      minimum: r.dynamic.offlineMinimum, minimumOther: minimumAt(workload, n, OTHER),
      staticMaxMean: r.static.maxOverMean,
      maxMeanAfterWarmup: r.dynamic.maxOverMeanAfterWarmup, worstWindow: worst, noise,
      missed: r.detection.missed, falseHot: r.detection.falseHot, coldMessagesMoved: r.dynamic.coldMessagesMoved,
    });
    if (!JSON_OUT) process.stderr.write('.');
  }
}
const shift = simulate({ workload: 'shift:1.0:200000', keys: KEYS, messages: MESSAGES, partitions: 48, window: WINDOW, seed: SEED, options: OPTIONS });

const tolerance = (t) => `${t}${t === DEFAULTS.balanceTolerance ? ', the default' : ''}`;
if (JSON_OUT) {
  console.log(JSON.stringify({
    messages: MESSAGES, window: WINDOW, keys: KEYS, seed: SEED, tolerance: TOLERANCE, otherTolerance: OTHER, rows,
    shift: { partitions: 48, windowAfterShift: shift.dynamic.windowAfterShift, coldMessagesMoved: shift.dynamic.coldMessagesMoved },
  }, null, 2));
} else {
  process.stderr.write('\n');
  const options = TOLERANCE === DEFAULTS.balanceTolerance ? 'default options' : `default options but balanceTolerance ${TOLERANCE}`;
  console.log(`${options}, ${KEYS.toLocaleString('en-US')} keys, ${MESSAGES.toLocaleString('en-US')} messages, windows of ${WINDOW.toLocaleString('en-US')}, seed ${SEED}\n`);
  console.log(`| workload | partitions | spread | moved | minimum (tolerance ${tolerance(TOLERANCE)}) | spread / minimum | minimum at ${tolerance(OTHER)} | static max/mean | max/mean after warm-up | worst window (noise) | missed / false |`);
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.workload} | ${r.partitions} | ${pct(r.spread)} | ${pct(r.moved)} | ${pct(r.minimum)} | ${(r.spread / r.minimum).toFixed(2)} | ${pct(r.minimumOther)} | ` +
      `${r.staticMaxMean.toFixed(2)} | ${r.maxMeanAfterWarmup.toFixed(3)} | ${r.worstWindow.toFixed(3)} (${r.noise.toFixed(3)}) | ${r.missed} / ${r.falseHot} |`);
  }
  console.log(`\nhot set moving every 200k (Zipf 1.0, 48 partitions): max/mean in the window after each move ${shift.dynamic.windowAfterShift.length === 0 ? 'none (the run ends before the first move)' : shift.dynamic.windowAfterShift.map((x) => x.toFixed(3)).join(', ')}`);
}
