#!/usr/bin/env node
'use strict';
// Writes src/core/abi.ts, the TypeScript mirror of assembly/abi.ts (the contract between the
// WebAssembly core and the TypeScript side), from that file: each `export const NAME: type =
// integer;` with the comments around it. Any other statement stops the script, so the
// mirror cannot silently miss a definition.
//
//   node scripts/abi.js          writes src/core/abi.ts (npm run build:wasm runs it)
//   node scripts/abi.js --check  exits 1 when src/core/abi.ts is not what it would write

const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const SOURCE = join(__dirname, '..', 'assembly', 'abi.ts');
const TARGET = join(__dirname, '..', 'src', 'core', 'abi.ts');
const TYPES = new Set(['i32', 'u32', 'usize']);
const DEFINITION = /^export const ([A-Z][A-Z0-9_]*): ([a-z0-9]+) = (-?(?:0x[0-9a-fA-F]+|\d+));$/;

/** The definitions of an assembly/abi.ts text: [{ name, value, line }]; throws on anything else. */
function parse(text) {
  const definitions = [];
  const names = new Set();
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('//') || line.startsWith('/**') || line.startsWith('*')) return;
    const m = DEFINITION.exec(line);
    if (!m) throw new Error(`assembly/abi.ts:${i + 1}: not of the form \`export const NAME: type = integer;\`: ${line}`);
    const [, name, type, literal] = m;
    if (!TYPES.has(type)) throw new Error(`assembly/abi.ts:${i + 1}: type ${type} is not one of ${[...TYPES].join(', ')}`);
    if (names.has(name)) throw new Error(`assembly/abi.ts:${i + 1}: ${name} defined twice`);
    const value = Number(literal);
    if (!Number.isSafeInteger(value) || value < -(2 ** 31) || value > 2 ** 32 - 1) {
      throw new Error(`assembly/abi.ts:${i + 1}: ${literal} is not a 32-bit integer`);
    }
    names.add(name);
    definitions.push({ name, value, line: i + 1 });
  });
  return definitions;
}

/** The text of src/core/abi.ts for an assembly/abi.ts text: its comments kept, its types dropped. */
function generate(text) {
  parse(text); // throws on what the mirror would not carry
  const body = text
    .split('\n')
    .map((raw) => {
      const m = DEFINITION.exec(raw.trim());
      return m ? `export const ${m[1]} = ${m[3]};` : raw.replace(/\s+$/, '');
    })
    .join('\n')
    .replace(/^(\/\/[^\n]*\n)+\n/, ''); // the source's header: replaced by the one below
  return (
    '// Generated from assembly/abi.ts by scripts/abi.js (npm run build:wasm): do not edit.\n' +
    '// The numbers the WebAssembly core and the TypeScript side agree on; see assembly/abi.ts.\n\n' +
    body.replace(/\n*$/, '\n')
  );
}

module.exports = { parse, generate, SOURCE, TARGET };

if (require.main === module) {
  const wanted = generate(readFileSync(SOURCE, 'utf8'));
  if (process.argv.includes('--check')) {
    let have = '';
    try { have = readFileSync(TARGET, 'utf8'); } catch { /* missing: differs */ }
    if (have !== wanted) {
      console.error('src/core/abi.ts differs from what assembly/abi.ts gives: run node scripts/abi.js');
      process.exit(1);
    }
  } else {
    writeFileSync(TARGET, wanted);
  }
}
