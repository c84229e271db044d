'use strict';
// The contract between the WebAssembly core and the TypeScript side is defined once, in
// assembly/abi.ts; src/core/abi.ts is generated from it (scripts/abi.js). These tests fail
// when the mirror drifts from its source, when the source holds something the generator
// would not carry over, and when the compiled module's regions disagree with the capacities.
const t = require('tap');
const { readFileSync } = require('node:fs');
const { parse, generate, SOURCE, TARGET } = require('../scripts/abi');

const source = readFileSync(SOURCE, 'utf8');

t.test('src/core/abi.ts is exactly what assembly/abi.ts generates', async (t) => {
  t.equal(readFileSync(TARGET, 'utf8'), generate(source), 'no drift: run `node scripts/abi.js` after changing assembly/abi.ts');
});

t.test('the compiled mirror has every definition of assembly/abi.ts, with its value', async (t) => {
  const mirror = require('../build/core/abi');
  const definitions = parse(source);
  const names = definitions.map((d) => d.name);
  for (const name of ['PARTITIONER_FNV1A', 'ORDER_MOVED', 'EVENT_BATCH_INDEX', 'CELL_LAST_ZERO', 'STATE_RELIEF', 'E_MOVE_AFTER', 'T_STICKY_LEFT']) {
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
  const { KEY_CAPACITY, BATCH_CAPACITY } = require('../build/core/abi');
  const { instantiate } = require('../build/core/wasm');
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
