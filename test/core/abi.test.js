'use strict';
// The contract between the WebAssembly core and the TypeScript side is defined once, in
// assembly/abi.ts; src/core/abi.ts is generated from it (scripts/abi.js). These tests fail
// when the mirror drifts from its source, when the source holds something the generator
// would not carry over, and when the compiled module's regions disagree with the capacities.
const t = require('tap');
const { readFileSync } = require('node:fs');
const { parse, generate, SOURCE, TARGET } = require('../../scripts/abi');

const source = readFileSync(SOURCE, 'utf8');

t.test('src/core/abi.ts is exactly what assembly/abi.ts generates', async (t) => {
  t.equal(readFileSync(TARGET, 'utf8'), generate(source), 'no drift: run `node scripts/abi.js` after changing assembly/abi.ts');
});

t.test('the compiled mirror has every definition of assembly/abi.ts, with its value', async (t) => {
  const mirror = require('../../build/core/abi');
  const definitions = parse(source);
  const names = definitions.map((d) => d.name);
  for (const name of ['PARTITIONER_FNV1A', 'ORDER_MOVED', 'EVENT_BATCH_INDEX', 'D_ZERO', 'STATE_RELIEF', 'E_MOVE_AFTER', 'T_STICKY_LEFT']) {
    t.ok(names.includes(name), `premise: ${name} read (the last of its group)`);
  }
  for (const { name, value, line } of definitions) t.equal(mirror[name], value, `${name} (assembly/abi.ts:${line})`);
  t.same(Object.keys(mirror).sort(), names.sort(), 'and nothing else');
});

t.test('a changed value is a drift', async (t) => {
  const changed = source.replace('export const ORDER_MOVED: i32 = 4;', 'export const ORDER_MOVED: i32 = 5;');
  t.not(changed, source, 'premise: the definition was found');
  t.not(generate(changed), readFileSync(TARGET, 'utf8'));
});

t.test('anything but `export const NAME: type = integer;` and comments stops the generator', async (t) => {
  for (const [bad, why] of [
    ['export const A: i32 = 1 + 2;', /not of the form/],
    ['export let A: i32 = 1;', /not of the form/],
    ['// @ts-ignore: decorator\n@inline export const A: i32 = 1;', /not of the form/],
    ['export const A: f64 = 1;', /type f64/],
    ['export const A: i32 = 1;\nexport const A: i32 = 2;', /defined twice/],
    ['export const A: i32 = 0x100000000;', /not a 32-bit integer/],
  ]) {
    t.throws(() => generate(`${source}\n${bad}\n`), why, bad);
  }
});

t.test('the compiled module agrees with the capacities: its regions hold them without overlap', async (t) => {
  const { KEY_CAPACITY, BATCH_CAPACITY } = require('../../build/core/abi');
  const { instantiate } = require('../../build/core/wasm');
  const x = instantiate().exports;
  const keys = x.keysPtr();
  const lengths = x.lengthsPtr();
  const results = x.resultsPtr();
  const regions = [
    ['keys', keys, KEY_CAPACITY],
    ['lengths', lengths, BATCH_CAPACITY * 4],
    ['results', results, BATCH_CAPACITY * 4],
  ].sort((a, b) => a[1] - b[1]);
  for (let i = 1; i < regions.length; i++) {
    const [name, at, size] = regions[i - 1];
    t.ok(at + size <= regions[i][1], `${name} (${size} bytes at ${at}) ends before ${regions[i][0]} starts (${regions[i][1]})`);
  }
});

t.test('configure() reads every parameter of P_* from what the options say', async (t) => {
  const abi = require('../../build/core/abi');
  const { DynamicPartitioner } = require('../..');
  const p = new DynamicPartitioner({
    sketch: { width: 2048, depth: 3, sampling: 2 }, maxTrackedKeys: 77, maxTopics: 5, maxPartitions: 96,
    horizon: { messages: 1000 }, loadHorizon: { ms: 500 }, hotThreshold: 0.3, coolThreshold: 0.2, reliefThreshold: 0.1,
    minHotMessages: 9, warmupMessages: 321, spreadFactor: 1.5, maxSpread: 7, spread: false, stickyRun: 33,
    balanceTolerance: 0.25, hotRun: 5, splitRunMs: 750, relocate: false, spreadable: () => true,
  });
  p.close();
  // What each parameter is, from the options above (README "DynamicPartitioner options").
  const expected = {
    P_SKETCH_WIDTH: 2048, P_SKETCH_DEPTH: 3, P_SAMPLING: 2, P_ENTRIES: 77, P_TOPICS: 5, P_PARTITIONS: 96,
    P_GROWTH: 2 ** (1 / 1000), P_LOAD_GROWTH: 1, // a time horizon grows by the clock, not per message
    P_HOT: 0.3, P_COOL: 0.2, P_RELIEF: 0.1, P_ADMIT: 0.05, // half the lowest hot line (relief, 0.1)
    P_MIN_HOT: 9, P_WARMUP: 321, P_SPREAD_FACTOR: 1.5, P_MAX_SPREAD: 7, P_SPREAD: 0, P_STICKY_RUN: 33,
    P_WIDEN_ABOVE: 1.25, P_HOT_RUN: 5, P_RELOCATE: 0, P_ASK_ON_HOT: 1, // a spreadable() was given
    P_SPLIT_RUN: 1, // timed runs (splitRunMs above 0)
  };
  const names = Object.keys(abi).filter((name) => name.startsWith('P_'));
  t.same(names.sort(), Object.keys(expected).sort(), 'one expected value per parameter');
  const base = p.core.exports.paramsPtr();
  for (const name of names) {
    t.ok(abi[name] + 8 <= abi.PARAMS_SIZE, `${name} lies in the region`);
    t.equal(p.core.f64[(base + abi[name]) >> 3], expected[name], name);
  }
  t.equal(new Set(names.map((n) => abi[n])).size, names.length, 'no two parameters share a place');
});
