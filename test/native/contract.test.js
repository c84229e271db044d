'use strict';
// The boundary between the native engine and the TypeScript side is defined once, in
// native/contract.js; native/src/contract.h and src/native/contract.ts are generated from it
// (scripts/native-contract.js). These tests fail when either side drifts from the source, when
// the built addon was compiled with other numbers or exports other functions, when the source
// holds what the generator would not carry, and when the C room's files stop calling each other
// one way, emitting events or making errors in one place.
const t = require('tap');
const { readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');
const { numbers, generateC, generateTs, load, C_TARGET, TS_TARGET } = require('../../scripts/native-contract');
const { nativeBuilt } = require('../lib/native-built');

const contract = load();
const SRC = path.join(__dirname, '..', '..', 'native', 'src');

t.test('native/src/contract.h and src/native/contract.ts are exactly what native/contract.js generates', async (t) => {
  t.equal(readFileSync(C_TARGET, 'utf8'), generateC(contract), 'C: run `node scripts/native-contract.js` after changing native/contract.js');
  t.equal(readFileSync(TS_TARGET, 'utf8'), generateTs(contract), 'TypeScript: the same');
});

t.test('the compiled TypeScript mirror has every number of the contract, with its value, and nothing else', async (t) => {
  const mirror = require('../../build/native/contract');
  const all = numbers(contract);
  for (const name of ['PRODUCE_ROW_SIZE', 'HEADER_ROW_VALUE_LENGTH', 'MESSAGE_ROW_ERROR', 'EVENT_COMMITTED', 'JOB_COMMITTED', 'ASSIGN_REMOVE']) {
    t.ok(all.some(([n]) => n === name), `premise: ${name} is in the contract`);
  }
  for (const [name, value] of all) t.equal(mirror[name], value, name);
  t.same(Object.keys(mirror).sort(), all.map(([n]) => n).sort(), 'and nothing else');
});

t.test('the rows are numbered from 0 in the order given, and each event kind is distinct', async (t) => {
  const all = new Map(numbers(contract).map(([n, v]) => [n, v]));
  // Independent of the generator: the layouts as consume.c and produce.c were first written.
  t.equal(all.get('PRODUCE_ROW_SIZE'), 6, 'a produce row: value at/length, key at/length, first header, count');
  t.equal(all.get('HEADER_ROW_SIZE'), 4, 'a header row: name at/length, value at/length');
  t.equal(all.get('MESSAGE_ROW_SIZE'), 11, 'a consumed message: 11 numbers');
  t.equal(all.get('MESSAGE_ROW_ERROR'), 10, 'its error code last');
  const kinds = contract.events.map((e) => e.value);
  t.equal(new Set(kinds).size, kinds.length, 'no kind means two things');
  t.not(all.get('EVENT_DELIVERY_FAILED'), all.get('EVENT_REBALANCE'), "a producer's failed delivery and a consumer's rebalance differ");
});

t.test('the built addon was compiled with the same numbers and exports the same functions', { skip: !nativeBuilt() && 'the native engine is not built here' }, async (t) => {
  require('node-rdkafka'); // its librdkafka first, as src/native/addon.ts loads them
  const addon = require('node-gyp-build')(path.join(__dirname, '..', '..', 'native'));
  const compiled = addon.contract();
  const all = numbers(contract);
  for (const [name, value] of all) t.equal(compiled[name], value, `${name} in the addon`);
  t.equal(Object.keys(compiled).length, all.length, 'and nothing else');
  t.same(Object.getOwnPropertyNames(addon).sort(), contract.functions.map(([n]) => n).sort(), 'exports: the functions the contract lists');
});

t.test('a changed value is a drift on both sides', async (t) => {
  const changed = { ...contract, events: contract.events.map((e) => (e.name === 'REBALANCE' ? { ...e, value: 7 } : e)) };
  t.not(generateC(changed), readFileSync(C_TARGET, 'utf8'));
  t.not(generateTs(changed), readFileSync(TS_TARGET, 'utf8'));
  const moved = { ...contract, rows: contract.rows.map((r) => (r.name === 'PRODUCE_ROW' ? { ...r, fields: [...r.fields].reverse() } : r)) };
  t.not(generateC(moved), readFileSync(C_TARGET, 'utf8'), 'fields reordered: other numbers');
});

t.test('the generator refuses a contract it would not carry', async (t) => {
  const event = contract.events[0];
  for (const [bad, why, label] of [
    [{ ...contract, events: [...contract.events, { ...event, name: 'OTHER' }] }, /kind 1 given twice/, 'two events of one kind'],
    [{ ...contract, events: [...contract.events, { ...event, value: 99 }] }, /EVENT_STATS defined twice/, 'one name twice'],
    [{ ...contract, enums: [['lower', '', [['A', 1, '']]]] }, /not an upper-case C identifier/, 'a lower-case name'],
    [{ ...contract, enums: [['BIG', '', [['A', 2 ** 31, '']]]] }, /not an int32/, 'a value past int32'],
    [{ ...contract, functions: [...contract.functions, contract.functions[0]] }, /function version defined twice/, 'a function twice'],
    [{ ...contract, functions: [['bad_name', '(): void', '']] }, /not a camel-case identifier/, 'a snake-case function'],
  ]) {
    t.throws(() => generateC(bad), why, label);
    t.throws(() => generateTs(bad), why, `${label} (TypeScript)`);
  }
});

/** The C room: each file's text with its comments and strings blanked. */
function room() {
  const files = {};
  for (const name of readdirSync(SRC).filter((f) => f.endsWith('.c'))) {
    files[name] = readFileSync(path.join(SRC, name), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/[^\n]*/g, '')
      .replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
  }
  return files;
}

t.test("the C room's files call each other one way: no circle", async (t) => {
  const files = room();
  const owner = new Map();
  for (const [file, text] of Object.entries(files)) {
    for (const m of text.matchAll(/^[a-z_][\w \t*]*?\b(kdp_\w+)\(/gm)) owner.set(m[1], file);
  }
  t.ok(owner.get('kdp_throw') === 'napi.c' && owner.get('kdp_emit') === 'events.c', 'premise: definitions found');
  const calls = new Map(Object.keys(files).map((f) => [f, new Set()]));
  for (const [file, text] of Object.entries(files)) {
    for (const m of text.matchAll(/\b(kdp_\w+)\(/g)) {
      const callee = owner.get(m[1]);
      if (callee !== undefined && callee !== file) calls.get(file).add(callee);
    }
  }
  t.ok(calls.get('produce.c').has('napi.c') && calls.get('handle.c').has('hurry.c'), 'premise: calls found');
  // The order handle.h states: each file calls only files before it.
  const order = ['napi.c', 'events.c', 'hurry.c', 'handle.c', 'jobs.c', 'produce.c', 'consume.c', 'addon.c'];
  t.same(Object.keys(files).sort(), [...order].sort(), 'every file of the room has its place');
  for (const [file, callees] of calls) {
    for (const callee of callees) t.ok(order.indexOf(callee) < order.indexOf(file), `${file} calls ${callee}, which comes before it`);
  }
});

t.test('one way to emit an event and one way to make an error, in C', async (t) => {
  const files = room();
  for (const [file, text] of Object.entries(files)) {
    if (file !== 'events.c') t.notMatch(text, /on_event\s*,\s*&/, `${file} does not call onEvent itself`);
    if (file !== 'napi.c') t.notMatch(text, /napi_create_error|napi_throw\(/, `${file} makes no error of its own`);
  }
  t.match(files['events.c'], /napi_get_reference_value\(env, h->on_event/, 'premise: events.c calls onEvent');
});
