'use strict';
// What several benchmarks share: their --name=value flags (numbers checked) and the median of their rounds.

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

/**
 * The number given as --name=value in `args` (flags()), or `fallback` without the flag. A value
 * that is not a number (or a bare --name), one that is not an integer when `integer`, or one
 * outside [min, max] is a RangeError naming the flag: a benchmark never runs on a flag it misread.
 */
function number(args, name, fallback, { min = -Infinity, max = Infinity, integer = false } = {}) {
  const given = args[name];
  if (given === undefined) return fallback;
  const v = typeof given === 'string' && given.trim() !== '' ? Number(given) : NaN;
  if (!Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
    throw new RangeError(`--${name} must be ${integer ? 'an integer' : 'a number'} in [${min}, ${max}], got ${given === true ? 'no value' : JSON.stringify(given)}`);
  }
  return v;
}

/** The median of `xs` (the upper one of an even count); NaN for none. */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : NaN;
}

module.exports = { flags, number, median };
