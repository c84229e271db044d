'use strict';
// What several benchmarks share: their command lines (kdp's parser, build/tools/args), the
// median of their rounds, and how a benchmark whose rows run in processes of their own starts.

const path = require('node:path');
const { flagsOrExit, fileHeader } = require('../build/tools/args');

/**
 * The flags of the benchmark `file` (its __filename) as declared in `declared` (src/tools/args.ts:
 * type, default, help; numbers integer, min, max), every one present, numbers as numbers. --help
 * prints the first paragraph of the file's header comment and the flags, and exits 0; a bad
 * command line prints one line naming the flag and exits 2, before the benchmark does any work.
 * `usage`: how it is run (default `node bench/<file>`); `notes`: more text after the flags.
 */
function flags(file, declared, { usage, notes } = {}) {
  const name = `bench/${path.basename(file)}`;
  return flagsOrExit({ name, usage: usage ?? `node ${name}`, description: fileHeader(file), flags: declared, notes });
}

/** The median of `xs` (the upper one of an even count); NaN for none. */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : NaN;
}

/** Whether Confluent's client, a peer that is not a dependency, is installed (bash scripts/install-confluent.sh). */
function confluentInstalled() {
  try {
    require.resolve('@confluentinc/kafka-javascript');
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs one row in this process (`childName`, the parent's --child=ROW: `child(childName)`) or the
 * whole benchmark (`main()`); either failing prints its error and exits 1.
 */
function start(childName, child, main) {
  (childName !== undefined ? child(childName) : main()).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { flags, median, confluentInstalled, start };
