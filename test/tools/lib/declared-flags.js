'use strict';
// Preloaded (node -r) by test/tools/help.test.js into a command run with --help: every
// util.parseArgs call writes the flags it was given to stderr, one line
// `declared-flags ["name",...]`, so that the test can check that --help lists each of them.
const util = require('node:util');

const parseArgs = util.parseArgs;
util.parseArgs = (config) => {
  process.stderr.write(`declared-flags ${JSON.stringify(Object.keys(config?.options ?? {}))}\n`);
  return parseArgs(config);
};
