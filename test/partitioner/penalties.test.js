'use strict';
// setPartitionPenalty steers hot traffic (and null-key runs, see null-keys.test.js) away
// from a partition; cold keys never move; bad arguments throw typed errors.
const t = require('tap');
const { DynamicPartitioner, partitionForKeys, allowedPartitions, InvalidArgTypeError, OutOfRangeError } = require('../..');
const { prng, keyNames } = require('./lib/helpers');

const N = 48;
const names = keyNames(20_000, 'c-');
const normal = partitionForKeys(names, N);

/** The same stream (H: 20% of the traffic, the rest cold) with an optional penalty from step `from`. */
function run(penalty) {
  const p = new DynamicPartitioner();
  const rand = prng(81);
  const hot = new Set();
  p.on('hot', (h) => hot.add(h.key));
  p.on('cooled', (h) => hot.delete(h.key));
  const steps = 120_000;
  const from = 40_000;
  const onPartition = new Float64Array(N); // H's messages per partition after `from`
  let hMessages = 0;
  const cold = []; // [index, partition] of cold messages
  for (let i = 0; i < steps; i++) {
    if (penalty && i === from) p.setPartitionPenalty('t', penalty.partition, penalty.value);
    const isH = rand() < 0.2;
    const k = isH ? -1 : Math.floor(rand() * names.length);
    const key = isH ? 'H' : names[k];
    const wasHot = hot.has(key);
    const q = p.partition('t', key, N);
    if (isH && i >= from) { onPartition[q]++; hMessages++; }
    if (!isH && !wasHot) cold.push(i, q, normal[k]);
  }
  const h = p.hotKeys('t').find((x) => x.key === 'H');
  return { onPartition, hMessages, cold, width: h ? h.partitions : 0, p };
}

t.test('a penalty on a partition of a hot key\'s allowed set moves its traffic away from it', async (t) => {
  const base = run(null);
  t.ok(base.width >= 5, `premise: H spread over ${base.width} partitions`);
  const allowed = allowedPartitions('H', N, base.width);
  for (const [label, target] of [['its normal partition', allowed[0]], ['its second partition', allowed[1]]]) {
    const pen = run({ partition: target, value: 1 });
    const before = base.onPartition[target] / base.hMessages;
    const after = pen.onPartition[target] / pen.hMessages;
    t.comment(`${label} (${target}): H's share of messages there ${before.toFixed(4)} without penalty, ${after.toFixed(4)} with penalty 1`);
    t.ok(before > 0.5 / base.width, `premise: without a penalty, H uses partition ${target} (${before.toFixed(4)})`);
    t.ok(after < 0.25 * before, `with a penalty of 1 fair share, much less (${after.toFixed(4)})`);
    // Cold messages are identical in both runs: the same stream, and all at their normal partition.
    let wrong = 0;
    for (let i = 0; i < pen.cold.length; i += 3) if (pen.cold[i + 1] !== pen.cold[i + 2]) wrong++;
    t.equal(wrong, 0, `cold keys unaffected (${pen.cold.length / 3} cold messages at their normal partition)`);
  }
});

t.test('a larger penalty moves more', async (t) => {
  const base = run(null);
  const target = allowedPartitions('H', N, base.width)[1];
  const fractions = [0, 0.25, 1, 4].map((value) => {
    const r = value ? run({ partition: target, value }) : base;
    return r.onPartition[target] / r.hMessages;
  });
  t.comment(`H's share of messages on partition ${target} for penalties 0, 0.25, 1, 4: ${fractions.map((f) => f.toFixed(4)).join(', ')}`);
  for (let i = 1; i < fractions.length; i++) t.ok(fractions[i] <= fractions[i - 1] + 1e-3, `penalty ${[0, 0.25, 1, 4][i]}: not more than the smaller one`);
  t.ok(fractions[3] < 0.05 * fractions[0], 'a penalty of 4 fair shares nearly empties it');
});

t.test('setPartitionPenalty with bad arguments throws typed errors', async (t) => {
  const p = new DynamicPartitioner({ maxPartitions: 64 });
  p.partition('t', 'k', 12);
  for (const value of [-1, -1e-9, NaN, Infinity, -Infinity]) {
    const err = t.throws(() => p.setPartitionPenalty('t', 0, value), OutOfRangeError, `value ${value}`);
    t.equal(err.code, 'KDP_OUT_OF_RANGE');
    t.equal(err.argument, 'value');
    t.match(err.message, /^value must be a finite number >= 0, got /);
    t.ok(err instanceof RangeError);
  }
  for (const partition of [-1, 12, 13, 1.5, NaN, Infinity]) {
    const err = t.throws(() => p.setPartitionPenalty('t', partition, 1), OutOfRangeError, `partition ${partition}`);
    t.equal(err.argument, 'partition');
    t.match(err.message, /^partition must be an integer in \[0, 11\], got /);
  }
  // A topic not seen yet: any partition below maxPartitions.
  t.throws(() => p.setPartitionPenalty('new', 64, 1), { argument: 'partition', message: /\[0, 63\]/ });
  for (const topic of [42, null, undefined, {}, ['t']]) {
    const err = t.throws(() => p.setPartitionPenalty(topic, 0, 1), InvalidArgTypeError, `topic ${String(topic)}`);
    t.equal(err.code, 'KDP_INVALID_ARG_TYPE');
    t.equal(err.argument, 'topic');
    t.ok(err instanceof TypeError);
  }
  t.doesNotThrow(() => p.setPartitionPenalty('t', 11, 0), 'the last partition, value 0');
  t.doesNotThrow(() => p.setPartitionPenalty('t', 0, 1e9), 'a large finite value');
  t.same(Object.keys(p.stats().topics), ['t'], 'failed calls created no topic');
});

t.test('a value of the wrong type is an InvalidArgTypeError, as elsewhere in the API', async (t) => {
  // errors.ts: InvalidArgTypeError is "a value of the wrong type", OutOfRangeError "a number
  // outside what the argument allows" (numPartitions follows this: '4' -> InvalidArgTypeError).
  const p = new DynamicPartitioner();
  p.partition('t', 'k', 12);
  for (const value of ['1', null, undefined, {}, 1n]) {
    t.throws(() => p.setPartitionPenalty('t', 0, value), { name: 'InvalidArgTypeError', code: 'KDP_INVALID_ARG_TYPE', argument: 'value' }, `value ${typeof value}`);
  }
  for (const partition of ['0', null]) {
    t.throws(() => p.setPartitionPenalty('t', partition, 1), { name: 'InvalidArgTypeError', argument: 'partition' }, `partition ${typeof partition}`);
  }
});

t.test('a penalty set before a topic\'s first message applies once traffic comes', async (t) => {
  const p = new DynamicPartitioner({ stickyRun: 10 });
  p.setPartitionPenalty('fresh', 3, 100);
  const used = new Set();
  for (let i = 0; i < 400; i++) used.add(p.partition('fresh', null, 8));
  t.equal(used.size, 7, 'null runs visit 7 partitions');
  t.notOk(used.has(3), 'never the penalised one');
  t.equal(p.stats().topics.fresh.partitions, 8);
});
