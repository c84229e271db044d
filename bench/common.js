'use strict';
// What several benchmarks share: their --name=value flags and the median of their rounds.

/**
 * The command line's flags as { name: value }: `--name=value` gives the string after the first
 * '=' (a value may hold '='), `--name` alone gives true.
 */
function flags(argv = process.argv.slice(2)) {
  return Object.fromEntries(argv.map((a) => {
    const flag = a.replace(/^--/, '');
    const at = flag.indexOf('=');
    return at === -1 ? [flag, true] : [flag.slice(0, at), flag.slice(at + 1)];
  }));
}

/** The median of `xs` (the upper one of an even count); NaN for none. */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : NaN;
}

module.exports = { flags, median };
