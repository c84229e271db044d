// A small declarative schema for the options objects of the public classes: each option is a
// Field (a check that names the option's path, and an optional default); object() puts fields
// together, rejects names it does not know (own keys only: `toString` is no option), checks
// the values given and fills in the defaults, in one place. Run once, at construction.

import { InvalidOptionError } from './errors';

const hasOwn = Object.prototype.hasOwnProperty;

/** The largest delay setTimeout / setInterval honour (a larger one fires after 1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** One option: how a value given for it is checked, and what it is when absent. */
export class Field<T> {
  constructor(
    /** Checks a value that is not undefined (throws InvalidOptionError naming `path`); returns what to keep. */
    readonly check: (value: unknown, path: string) => T,
    /** The value when the option is absent or undefined; undefined: it stays absent. */
    readonly fallback?: T,
    /** Absent is an error (the check is run on undefined, and says what was expected). */
    readonly required = false,
  ) {}

  /** This field, with `value` when absent. */
  default(value: T): Field<T> {
    return new Field(this.check, value, false);
  }

  /** This field, mandatory. */
  require(): Field<T> {
    return new Field(this.check, undefined, true);
  }

  /** This field's check alone: absent stays absent (for options handed on to a class that applies its own defaults). */
  checkOnly(): Field<T> {
    return new Field(this.check, undefined, this.required);
  }
}

export type Fields = Readonly<Record<string, Field<unknown>>>;

/** A field of any value that passes `test`; `expected` says what would. */
export function custom<T>(expected: string, test: (value: unknown) => boolean): Field<T> {
  return new Field((value, path) => {
    if (!test(value)) throw new InvalidOptionError(path, expected, value);
    return value as T;
  });
}

/** A number in [min, max]; `integer`: a whole one. */
function numeric(min: number, max: number, integer: boolean): Field<number> {
  const kind = integer ? 'an integer' : 'a number';
  const expected = max === Number.MAX_SAFE_INTEGER ? `${kind} >= ${min}` : `${kind} in [${min}, ${max}]`;
  return custom(expected, (v) => typeof v === 'number' && v >= min && v <= max && (!integer || Number.isInteger(v)));
}

/** An integer in [min, max] (max: Number.MAX_SAFE_INTEGER, said as `>= min`). */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER): Field<number> {
  return numeric(min, max, true);
}

/** A number in [min, max] (NaN and the infinities are outside any range). */
export function number(min: number, max: number): Field<number> {
  return numeric(min, max, false);
}

export const boolean: Field<boolean> = custom('true or false', (v) => typeof v === 'boolean');

/** One of a fixed set of strings; the message lists them. */
export function oneOf<T extends string>(values: readonly T[], note = ''): Field<T> {
  return custom(`one of ${values.map((v) => `'${v}'`).join(', ')}${note}`, (v) => typeof v === 'string' && (values as readonly string[]).includes(v));
}

/** A non-empty string; `what` says what it names. */
export function name(what: string): Field<string> {
  return custom(`a non-empty string (${what})`, (v) => typeof v === 'string' && v.length > 0);
}

/** A non-empty array of `item`s, copied; a bad item is named by its index. */
export function list<T>(item: Field<T>, expected: string): Field<readonly T[]> {
  return new Field((value, path) => {
    if (!Array.isArray(value) || value.length === 0) throw new InvalidOptionError(path, expected, value);
    return Object.freeze(value.map((v, i) => item.check(v, `${path}[${i}]`)));
  });
}

export interface ObjectRules<T> {
  /** Exactly one of the fields must be given (a unit: { messages } or { ms }). */
  readonly exactlyOne?: boolean;
  /** Checks between fields, on the resolved object (defaults filled in); `path` is the object's. */
  readonly refine?: (resolved: T, path: string) => void;
}

/**
 * An object of `fields`: the result is a frozen copy with the values given (undefined = absent)
 * and the defaults of the others; an unknown name is an InvalidOptionError listing the valid ones.
 */
export function object<T>(fields: Fields, rules: ObjectRules<T> = {}): Field<T> {
  const names = Object.keys(fields);
  return new Field((value, path) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new InvalidOptionError(path, `an object with ${rules.exactlyOne ? 'one of' : 'keys among'} ${names.join(', ')}`, value);
    }
    const given = value as Record<string, unknown>;
    for (const key of Object.keys(given)) {
      if (!hasOwn.call(fields, key)) throw InvalidOptionError.unknown(`${path}.${key}`, names);
    }
    const out: Record<string, unknown> = {};
    let count = 0;
    for (const key of names) {
      const field = fields[key];
      const v = hasOwn.call(given, key) ? given[key] : undefined;
      if (v !== undefined) {
        out[key] = field.check(v, `${path}.${key}`);
        count++;
      } else if (field.required) {
        field.check(undefined, `${path}.${key}`);
      } else if (field.fallback !== undefined) {
        out[key] = field.fallback;
      }
    }
    if (rules.exactlyOne && count !== 1) throw new InvalidOptionError(path, `exactly one of ${names.join(', ')}`, value);
    const resolved = Object.freeze(out) as T;
    rules.refine?.(resolved, path);
    return resolved;
  });
}

/** Checks `options` (the argument named `options`; undefined: none given) against `schema`, defaults filled in. */
export function resolve<T>(schema: Field<T>, options: unknown, path = 'options'): T {
  return schema.check(options === undefined ? {} : options, path);
}

/** The defaults of `fields`, deeply frozen (nested objects are frozen by their fallbacks). */
export function defaultsOf<T>(fields: Fields): T {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(fields)) if (field.fallback !== undefined) out[key] = field.fallback;
  return Object.freeze(out) as T;
}

/** `fields` with their checks alone (no defaults), for options handed on to a class that resolves them itself. */
export function checksOnly(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, field.checkOnly()]));
}
