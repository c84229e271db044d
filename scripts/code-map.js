#!/usr/bin/env node
'use strict';
// Writes the code maps of docs/design.md ("Where the code is") and docs/native.md (the native
// room) from the files themselves: one table row per file of src/, assembly/ and native/src/,
// its role the first sentence of the comment it opens with. The rows stand between the marker
// comments `<!-- code-map:NAME begin -->` and `<!-- code-map:NAME end -->`; nothing else of the
// pages is touched, so a file moved, added or described anew changes the map and nothing drifts.
//
//   node scripts/code-map.js          writes both tables
//   node scripts/code-map.js --check  exits 1 when a table is not what it would write
//                                     (test/house.test.js runs it)

const { readFileSync, writeFileSync, readdirSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');

/**
 * The folders in the order a reader meets them, from the ground up (the layers of src/ as
 * test/house.test.js checks them; the send path's stages in their order).
 */
const FOLDERS = [
  'assembly', 'src/core', 'src/partitioner', 'src/native',
  'src/producer', 'src/producer/take', 'src/producer/place', 'src/producer/hold', 'src/producer/hand-over', 'src/producer/settle',
  'src/delivery', 'src/consumer', 'src/kafkajs', 'src/platformatic', 'src/tools', 'src', 'native/src',
];

/** The maps: the page, and which folders its table covers. */
const MAPS = [
  { name: 'design', page: 'docs/design.md', folders: FOLDERS.filter((f) => f !== 'native/src') },
  { name: 'native', page: 'docs/native.md', folders: ['native/src', 'src/native'] },
];

const SOURCE = /\.(ts|c|h)$/;

/** The source files directly in `folder` (a path from the root), by name. */
function filesIn(folder) {
  const dir = join(ROOT, folder);
  return readdirSync(dir)
    .filter((name) => SOURCE.test(name) && statSync(join(dir, name)).isFile())
    .sort()
    .map((name) => `${folder}/${name}`);
}

/** Every folder holding source files under src/, assembly/ and native/src/ (for the check that FOLDERS names them all). */
function sourceFolders() {
  const out = [];
  const walk = (folder) => {
    const dir = join(ROOT, folder);
    const entries = readdirSync(dir);
    if (entries.some((name) => SOURCE.test(name))) out.push(folder);
    for (const name of entries) if (statSync(join(dir, name)).isDirectory()) walk(`${folder}/${name}`);
  };
  for (const top of ['src', 'assembly', 'native/src']) walk(top);
  return out;
}

/**
 * A file's role: the first sentence of its opening `//` comment (a generated file's: the line
 * after the one that says so), up to a list or a blank comment line.
 */
function roleOf(file) {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const text = [];
  let generated = false;
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "'use strict';" || line.startsWith('#!')) continue;
    if (!line.startsWith('//')) break;
    const body = line.replace(/^\/\/\s?/, '');
    if (body === '' || /^[-*]\s/.test(body) || /^\s{2,}/.test(raw.replace(/^\s*\/\/\s?/, ''))) {
      if (text.length > 0) break;
      continue;
    }
    if (text.length === 0 && /^Generated /.test(body)) {
      generated = true;
      continue;
    }
    text.push(body);
  }
  if (text.length === 0) throw new Error(`${file}: no opening comment giving its role`);
  let sentence = text.join(' ');
  const end = sentence.search(/\.(\s|$)/);
  if (end >= 0) sentence = sentence.slice(0, end + 1);
  sentence = sentence.replace(/:$/, '.');
  if (generated) sentence += ' (generated)';
  return sentence.replace(/\|/g, '\\|');
}

/** The table of a map. */
function table(map) {
  const rows = ['| file | role |', '|---|---|'];
  for (const folder of map.folders) {
    for (const file of filesIn(folder)) rows.push(`| \`${file}\` | ${roleOf(file)} |`);
  }
  return rows.join('\n');
}

/** The page with its map's table written between the markers. */
function written(map, page) {
  const begin = `<!-- code-map:${map.name} begin -->`;
  const end = `<!-- code-map:${map.name} end -->`;
  const from = page.indexOf(begin);
  const to = page.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${map.page}: no ${begin} ... ${end} markers`);
  return `${page.slice(0, from + begin.length)}\n${table(map)}\n${page.slice(to)}`;
}

/** What differs from what the script would write: a line per page, empty when all is current. */
function check() {
  const problems = [];
  const missing = sourceFolders().filter((folder) => !FOLDERS.includes(folder));
  if (missing.length > 0) problems.push(`scripts/code-map.js: FOLDERS does not name ${missing.join(', ')}`);
  for (const map of MAPS) {
    const page = readFileSync(join(ROOT, map.page), 'utf8');
    if (written(map, page) !== page) problems.push(`${map.page}: its code map differs from the tree (node scripts/code-map.js)`);
  }
  return problems;
}

if (require.main === module) {
  if (process.argv.includes('--check')) {
    const problems = check();
    for (const problem of problems) console.error(problem);
    process.exit(problems.length === 0 ? 0 : 1);
  }
  for (const map of MAPS) {
    const path = join(ROOT, map.page);
    const page = readFileSync(path, 'utf8');
    const next = written(map, page);
    if (next !== page) {
      writeFileSync(path, next);
      console.log(`wrote ${relative(ROOT, path)}`);
    }
  }
}

module.exports = { check, roleOf, FOLDERS };
