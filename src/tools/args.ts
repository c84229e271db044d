// The command lines of kdp, the demos and the benchmarks (bench/common.js): one table of flags
// per command, read by Node's own util.parseArgs. Each flag declares its type, default and
// help; numbers their range; --help (-h) prints the command's description and the table. A
// flag the table does not hold, a missing or empty value, a number that is not one or is out
// of range: a UsageError naming the flag and what it accepts, before the command does any work.

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The values read so far, by flag name: what a computed default or bound is given. */
export type ReadValues = Readonly<Record<string, unknown>>;

/** A value, or one computed from the flags read before it (see FlagSpec). */
export type Computed<T> = T | ((values: ReadValues) => T);

export interface FlagSpec {
  /** 'number': given as text, read with Number() and checked against integer, min and max. */
  readonly type: 'string' | 'boolean' | 'number';
  readonly help: string;
  /**
   * The value without the flag (booleans: false; multiple: []). A function is given the other
   * flags' values: a flag with a computed default, min, max or why is read after every flag
   * without one, in the table's order, and sees them all (and the computed ones above it).
   */
  readonly default?: Computed<string | number | undefined>;
  /** How --help shows the default, when it is computed or absent (e.g. "the library's"). */
  readonly defaultText?: string;
  /** The value's placeholder in --help: N, X, LIST... (numbers: N or X, strings: VALUE). */
  readonly arg?: string;
  readonly integer?: boolean;
  readonly min?: Computed<number>;
  readonly max?: Computed<number>;
  /** What a computed range is, for --help ("an integer in [1, maxPartitions]"). */
  readonly accepts?: string;
  /** Why the range is what it is: appended to the range in an error. */
  readonly why?: Computed<string>;
  /** The values a string flag may take. */
  readonly choices?: readonly string[];
  /**
   * A string flag's value made from its text (JSON.parse, a split...): what it throws is a
   * UsageError naming the flag. Not applied to the default.
   */
  readonly parse?: (text: string) => unknown;
  /** A string flag that may be given more than once: its values in order. */
  readonly multiple?: boolean;
  readonly short?: string;
  /** The flag means something only with another (a UsageError without it, saying why). */
  readonly needs?: { readonly flag: string; readonly why: string };
  /** Passed by the command to its own child processes: listed apart in --help. */
  readonly internal?: boolean;
}

export type Flags = Readonly<Record<string, FlagSpec>>;

export interface Command<F extends Flags = Flags> {
  /** The prefix of its error lines: "kdp", "demo", "bench/spread.js". */
  readonly name: string;
  /** How it is run, before its flags: "kdp simulate", "npm run bench:spread --". */
  readonly usage: string;
  /** One paragraph: what it does (fileHeader() reads a file's). */
  readonly description: string;
  readonly flags: F;
  /** Printed after the flags by --help: what the output means, more on the flags. */
  readonly notes?: string;
}

/** A string flag's value: what its parse returns, else its text. */
type StringOf<S extends FlagSpec> = S extends { readonly parse: (text: string) => infer R } ? R : string;

type ValueOf<S extends FlagSpec> = S['type'] extends 'number'
  ? number
  : S['type'] extends 'boolean'
    ? boolean
    : S extends { readonly multiple: true }
      ? StringOf<S>[]
      : StringOf<S>;

/** The flags' values by name: a flag without a default (and not boolean, not multiple) may be undefined. */
export type FlagValues<F extends Flags> = {
  -readonly [K in keyof F]: F[K]['type'] extends 'boolean'
    ? boolean
    : F[K] extends { readonly multiple: true }
      ? ValueOf<F[K]>
      : F[K] extends { readonly default: string | number | ((values: ReadValues) => string | number) }
        ? ValueOf<F[K]>
        : ValueOf<F[K]> | undefined;
};

/** A bad command line: the user's to fix (flagsOrExit, kdp and the demos exit with code 2). */
export class UsageError extends Error {
  readonly code = 'ERR_USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

const computed = <T>(x: Computed<T>, values: ReadValues): T => (typeof x === 'function' ? (x as (v: ReadValues) => T)(values) : x);

/** What a number flag accepts: "an integer in [1, 1024]", "a number >= 0.001", "an integer". */
function accepts(integer: boolean | undefined, min: number, max: number): string {
  const kind = integer ? 'an integer' : 'a number';
  if (min > -Infinity && max < Infinity) return `${kind} in [${min}, ${max}]`;
  if (min > -Infinity) return `${kind} >= ${min}`;
  if (max < Infinity) return `${kind} <= ${max}`;
  return kind;
}

/** parseArgs' errors, in one line and in the words of the other errors here. */
function usageError(err: Error): UsageError {
  const m = err.message;
  const unknown = /^Unknown option '([^']+)'/.exec(m);
  if (unknown) return new UsageError(`unknown flag ${unknown[1]}`);
  const missing = /^Option '(-[^ ']+)(?:, )?(--[^ ']*)? <value>' argument missing/.exec(m);
  if (missing) return new UsageError(`${missing[2] ?? missing[1]} needs a value`);
  const ambiguous = /^Option '([^']+)' argument is ambiguous/.exec(m);
  if (ambiguous) return new UsageError(`${ambiguous[1]} needs a value (one starting with '-' goes as ${ambiguous[1]}=-...)`);
  const noValue = /^Option '(-[^ ']+)(?:, )?(--[^ ']*)?' does not take an argument/.exec(m);
  if (noValue) return new UsageError(`${noValue[2] ?? noValue[1]} takes no value`);
  const positional = /^Unexpected argument '([^']*)'/.exec(m);
  if (positional) return new UsageError(`unexpected argument ${JSON.stringify(positional[1])} (flags only)`);
  return new UsageError(m.split('\n')[0]);
}

/** A flag's value from its text (undefined: not given), or a UsageError naming it and what it accepts. */
function read(name: string, spec: FlagSpec, given: string | boolean | string[] | undefined, values: ReadValues): unknown {
  if (spec.type === 'boolean') return given === true;
  if (spec.multiple) {
    const list = (given as string[] | undefined) ?? [];
    return list.map((text) => readString(name, spec, text));
  }
  if (given === undefined) return computed(spec.default, values);
  const text = given as string;
  if (spec.type === 'string') return readString(name, spec, text);
  const min = computed(spec.min, values) ?? -Infinity;
  const max = computed(spec.max, values) ?? Infinity;
  const v = text.trim() === '' ? NaN : Number(text);
  if (!Number.isFinite(v) || (spec.integer && !Number.isInteger(v)) || v < min || v > max) {
    // Why the range is what it is: for a number outside it, not for text that is no number.
    const why = spec.why === undefined || !Number.isFinite(v) ? '' : computed(spec.why, values);
    throw new UsageError(`--${name} must be ${accepts(spec.integer, min, max)}${why}, got ${JSON.stringify(text)}`);
  }
  return v;
}

function readString(name: string, spec: FlagSpec, text: string): unknown {
  if (text === '') throw new UsageError(`--${name} needs a value${spec.arg ? ` (${spec.arg})` : ''}`);
  if (spec.choices && !spec.choices.includes(text)) {
    throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')}, got ${JSON.stringify(text)}`);
  }
  if (!spec.parse) return text;
  try {
    return spec.parse(text);
  } catch (err) {
    throw new UsageError(`--${name}: ${(err as Error).message}, got ${JSON.stringify(text)}`);
  }
}

const isComputed = (spec: FlagSpec): boolean => [spec.default, spec.min, spec.max, spec.why].some((x) => typeof x === 'function');

/**
 * The command's flags from `argv`, every declared one present (its default when not given), or
 * null when --help (-h) is given. A bad command line is a UsageError.
 */
export function parseFlags<F extends Flags>(command: Command<F>, argv: readonly string[]): FlagValues<F> | null {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, spec] of Object.entries(command.flags)) {
    options[name] = { type: spec.type === 'boolean' ? 'boolean' : 'string' };
    if (spec.multiple) options[name].multiple = true;
    if (spec.short) options[name].short = spec.short;
  }
  let given: Record<string, string | boolean | string[] | undefined>;
  try {
    given = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as typeof given;
  } catch (err) {
    const e = err as Error & { code?: string };
    if (typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) throw usageError(e);
    throw err;
  }
  if (given.help) return null;
  const names = Object.keys(command.flags);
  for (const name of names) {
    const needs = command.flags[name].needs;
    if (needs && given[name] !== undefined && (given[needs.flag] === undefined || given[needs.flag] === false)) {
      throw new UsageError(`--${name} needs --${needs.flag} (${needs.why})`);
    }
  }
  const values: Record<string, unknown> = {};
  const order = [...names.filter((n) => !isComputed(command.flags[n])), ...names.filter((n) => isComputed(command.flags[n]))];
  for (const name of order) values[name] = read(name, command.flags[name], given[name], values);
  return Object.fromEntries(names.map((n) => [n, values[n]])) as FlagValues<F>;
}

/** `text` broken into lines of at most `width` characters (a longer word alone on its line; a range as [1, 9] kept whole). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+(?![^[\s]*\])/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.length ? lines : [''];
}

/** A flag's --help entry: "--name ARG" and its help, what it accepts and its default. */
function entry(name: string, spec: FlagSpec): [string, string] {
  const arg = spec.type === 'boolean' ? '' : ` ${spec.arg ?? (spec.type === 'number' ? (spec.integer ? 'N' : 'X') : 'VALUE')}`;
  const flag = `${spec.short ? `-${spec.short}, ` : ''}--${name}${arg}`;
  const facts: string[] = [];
  if (spec.type === 'number') {
    const fixed = typeof spec.min !== 'function' && typeof spec.max !== 'function';
    facts.push(
      spec.accepts ??
        (fixed
          ? accepts(spec.integer, (spec.min as number) ?? -Infinity, (spec.max as number) ?? Infinity)
          : accepts(spec.integer, -Infinity, Infinity)),
    );
  }
  if (spec.choices) facts.push(`one of ${spec.choices.join(', ')}`);
  if (spec.multiple) facts.push('repeatable');
  const shown = spec.defaultText ?? (spec.default === undefined || typeof spec.default === 'function' ? undefined : String(spec.default));
  if (shown !== undefined) facts.push(`default ${shown}`);
  return [flag, facts.length ? `${spec.help} (${facts.join('; ')})` : spec.help];
}

const WIDTH = 100;

/** What --help prints: the usage line, the description, every flag (the internal ones apart), the notes. */
export function helpText(command: Command): string {
  const all = Object.entries(command.flags);
  const rows = (list: Array<[string, FlagSpec]>) => list.map(([name, spec]) => entry(name, spec));
  const pub = [...rows(all.filter(([, s]) => !s.internal)), ['-h, --help', 'this text'] as [string, string]];
  const internal = rows(all.filter(([, s]) => s.internal));
  const column = Math.min(30, Math.max(...[...pub, ...internal].map(([flag]) => flag.length)) + 2);
  const lines = (list: Array<[string, string]>) =>
    list.flatMap(([flag, help]) => {
      const text = wrap(help, WIDTH - column - 2);
      // A flag longer than the column gets its help on the next line.
      const first = flag.length + 2 <= column ? [`  ${flag.padEnd(column)}${text.shift()}`] : [`  ${flag}`];
      return [...first, ...text.map((t) => `  ${''.padEnd(column)}${t}`)];
    });
  const out = [`usage: ${command.usage} [flags]`, '', command.description.trim(), '', ...lines(pub)];
  if (internal.length) out.push('', 'Internal (what the command passes to its own child processes):', ...lines(internal));
  if (command.notes) out.push('', command.notes.trimEnd());
  return `${out.join('\n')}\n`;
}

/** The lines a bad command line prints: the error, and where the flags are listed. */
export function usageErrorText(command: Command, err: UsageError): string {
  return `${command.name}: ${err.message}\n(${command.usage} --help lists the flags)\n`;
}

/**
 * For a command's main module: its flags, or the process ends: after --help has printed
 * helpText() with exit code 0, after a bad command line has printed usageErrorText() (no
 * stack) with exit code 2.
 */
export function flagsOrExit<F extends Flags>(command: Command<F>, argv: readonly string[] = process.argv.slice(2)): FlagValues<F> {
  let values: FlagValues<F> | null;
  try {
    values = parseFlags(command, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(usageErrorText(command, err));
    process.exit(2);
  }
  if (values === null) {
    process.stdout.write(helpText(command));
    process.exit(0);
  }
  return values;
}

/**
 * The first paragraph of `file`'s header comment (its leading `//` lines up to an empty one,
 * after a #! line and 'use strict'), without the slashes: a command's description, kept where
 * its source says it.
 */
export function fileHeader(file: string): string {
  const out: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const t = line.trim();
    if (!out.length && (t === '' || t.startsWith('#!') || /^['"]use strict['"];?$/.test(t))) continue;
    if (!t.startsWith('//')) break;
    const text = t.replace(/^\/\/ ?/, '');
    if (text.trim() === '') break;
    out.push(text);
  }
  return out.join('\n');
}
