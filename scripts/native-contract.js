#!/usr/bin/env node
'use strict';
// Writes the two sides of the native boundary from native/contract.js, its one source:
// native/src/contract.h (the C side: #defines, the export list, the functions' prototypes, the
// numbers by name for the addon's contract()) and src/native/contract.ts (the TypeScript side:
// the same numbers, the events as a tuple type, the objects and the addon's interface). The
// contract is checked before anything is written: names of the C identifier form, no name twice,
// a table's fields numbered from 0, events of distinct kinds.
//
//   node scripts/native-contract.js          writes both (npm run build:native and build:ts run it)
//   node scripts/native-contract.js --check  exits 1 when either is not what it would write

const { readFileSync, writeFileSync, mkdirSync } = require('node:fs');
const { dirname, join } = require('node:path');

const SOURCE = join(__dirname, '..', 'native', 'contract.js');
const C_TARGET = join(__dirname, '..', 'native', 'src', 'contract.h');
const TS_TARGET = join(__dirname, '..', 'src', 'native', 'contract.ts');
const NAME = /^[A-Z][A-Z0-9_]*$/;
const FUNCTION = /^[a-z][A-Za-z0-9]*$/;
const PROPERTY = /^[a-z][A-Za-z0-9]*\??$/;

/** Every number of the contract as [name, value, doc], in order; throws on a contract it would not carry. */
function numbers(contract) {
  const out = [];
  const seen = new Set();
  const add = (name, value, doc) => {
    if (!NAME.test(name)) throw new Error(`native/contract.js: ${name} is not an upper-case C identifier`);
    if (seen.has(name)) throw new Error(`native/contract.js: ${name} defined twice`);
    if (!Number.isSafeInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) throw new Error(`native/contract.js: ${name} = ${value} is not an int32`);
    seen.add(name);
    out.push([name, value, doc]);
  };
  for (const row of contract.rows) {
    row.fields.forEach(([field, doc], i) => add(`${row.name}_${field}`, i, doc));
    add(`${row.name}_SIZE`, row.fields.length, 'numbers per row');
  }
  const kinds = new Set();
  for (const event of contract.events) {
    if (kinds.has(event.value)) throw new Error(`native/contract.js: event kind ${event.value} given twice`);
    kinds.add(event.value);
    add(`EVENT_${event.name}`, event.value, `${event.doc}: (${event.args.map(([a]) => a).join(', ')})`);
    add(`EVENT_${event.name}_ARGC`, event.args.length, 'its arguments after the kind');
  }
  for (const [group, , values] of contract.enums) for (const [name, value, doc] of values) add(`${group}_${name}`, value, doc);
  return out;
}

function check(contract) {
  numbers(contract);
  const names = new Set();
  for (const [name] of contract.functions) {
    if (!FUNCTION.test(name)) throw new Error(`native/contract.js: function ${name} is not a camel-case identifier`);
    if (names.has(name)) throw new Error(`native/contract.js: function ${name} defined twice`);
    names.add(name);
  }
  for (const [name, , props] of contract.objects) {
    for (const [prop] of props) if (!PROPERTY.test(prop)) throw new Error(`native/contract.js: ${name}.${prop} is not a property name`);
  }
}

const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const upper = (name) => snake(name).replace(/^_/, '').toUpperCase();
/** A comment's text made safe for C's and TypeScript's block comments. */
const text = (doc) => doc.replace(/\*\//g, '* /');

function generateC(contract) {
  check(contract);
  const lines = [
    '// Generated from native/contract.js by scripts/native-contract.js: do not edit.',
    '// The numbers, names and functions the addon and the TypeScript side (src/native/contract.ts) agree on.',
    '#ifndef KDP_CONTRACT_H',
    '#define KDP_CONTRACT_H',
    '',
    '#include <node_api.h>',
  ];
  const all = numbers(contract);
  let at = 0;
  const block = (title, count) => {
    lines.push('', `/* ${text(title)} */`);
    for (const [name, value, doc] of all.slice(at, at + count)) lines.push(`#define KDP_${name} ${value} /* ${text(doc)} */`);
    at += count;
  };
  for (const row of contract.rows) block(row.doc, row.fields.length + 1);
  block("Events: onEvent(kind, ...args) on the JS thread, each kind's arguments after it.", contract.events.length * 2);
  for (const [group, doc, values] of contract.enums) block(`${group}: ${doc}.`, values.length);
  for (const [name, doc, props] of contract.objects) {
    lines.push('', `/* ${text(doc)} Its property names. */`);
    for (const [prop] of props) {
      const bare = prop.replace('?', '');
      lines.push(`#define KDP_${upper(name.replace(/^Native/, ''))}_${upper(bare)} "${bare}"`);
    }
  }
  lines.push('', "/* The addon's functions: each napi_value kdp_<name in snake case>(napi_env, napi_callback_info), exported as <name>. */");
  lines.push('#define KDP_FUNCTIONS(X) \\');
  contract.functions.forEach(([name], i) => lines.push(`  X("${name}", kdp_${snake(name)})${i + 1 < contract.functions.length ? ' \\' : ''}`));
  for (const [name, , doc] of contract.functions) lines.push(`napi_value kdp_${snake(name)}(napi_env env, napi_callback_info info); /* ${text(doc)} */`);
  lines.push('', "/* The numbers above by name, for contract(). */");
  lines.push('#define KDP_CONTRACT_NUMBERS(X) \\');
  all.forEach(([name], i) => lines.push(`  X("${name}", KDP_${name})${i + 1 < all.length ? ' \\' : ''}`));
  lines.push('', '#endif', '');
  return lines.join('\n');
}

function generateTs(contract) {
  check(contract);
  const lines = [
    '// Generated from native/contract.js by scripts/native-contract.js: do not edit.',
    '// The numbers, events, objects and functions the addon (native/src/contract.h) and this side agree on.',
    '',
    "import type { Buffer } from 'node:buffer';",
  ];
  const all = numbers(contract);
  let at = 0;
  const block = (title, count) => {
    lines.push('', `// ${title}`);
    for (const [name, value, doc] of all.slice(at, at + count)) lines.push(`/** ${text(doc)} */`, `export const ${name} = ${value};`);
    at += count;
  };
  for (const row of contract.rows) block(row.doc, row.fields.length + 1);
  block("Events: onEvent(kind, ...args) on the JS thread, each kind's arguments after it.", contract.events.length * 2);
  for (const [group, doc, values] of contract.enums) block(`${group}: ${doc}.`, values.length);
  lines.push('', '/** An event as onEvent receives it: its kind, then its arguments. */', 'export type NativeEvent =');
  contract.events.forEach((event, i) => {
    const args = event.args.map(([name, type]) => `${name}: ${type}`).join(', ');
    lines.push(`  | [kind: typeof EVENT_${event.name}, ${args}]${i + 1 === contract.events.length ? ';' : ''}`);
  });
  for (const [name, doc, props] of contract.objects) {
    lines.push('', `/** ${text(doc)} */`, `export interface ${name} {`);
    for (const [prop, type, pdoc] of props) lines.push(`  /** ${text(pdoc)} */`, `  ${prop}: ${type};`);
    lines.push('}');
  }
  lines.push('', "/** An error the addon made: librdkafka's code and its text. */", 'export interface NativeError extends Error {', '  code: number;',
    "  /** A transaction's call: librdkafka's classes of the error (rd_kafka_error_t), under node-rdkafka's names. */",
    '  isRetriable?: boolean;', '  isTxnRequiresAbort?: boolean;', '  isFatal?: boolean;', '}');
  lines.push('', "/** The addon's functions (native/src/addon.c exports them from native/src/contract.h's list). */", 'export interface NativeAddon {');
  for (const [name, signature, doc] of contract.functions) lines.push(`  /** ${text(doc)} */`, `  ${name}${signature};`);
  lines.push('}', '');
  return lines.join('\n');
}

/** The contract, read afresh (not from require's cache: a test may have changed the file's text). */
function load() {
  delete require.cache[require.resolve(SOURCE)];
  return require(SOURCE);
}

module.exports = { numbers, generateC, generateTs, load, SOURCE, C_TARGET, TS_TARGET };

if (require.main === module) {
  const contract = load();
  const wanted = [[C_TARGET, generateC(contract)], [TS_TARGET, generateTs(contract)]];
  if (process.argv.includes('--check')) {
    let stale = false;
    for (const [target, text] of wanted) {
      let have = '';
      try { have = readFileSync(target, 'utf8'); } catch { /* missing: differs */ }
      if (have !== text) {
        console.error(`${target} differs from what native/contract.js gives: run node scripts/native-contract.js`);
        stale = true;
      }
    }
    process.exit(stale ? 1 : 0);
  }
  for (const [target, text] of wanted) {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
}
