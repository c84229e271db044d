// Options of DynamicPartitioner: defaults in one frozen object, validated once at
// construction (unknown keys rejected, messages naming the option path).

import { PARTITIONERS, PartitionerName } from './hash';
import { InvalidOptionError } from './errors';

/** A half-life for the decay of counts: in messages of all topics, or in milliseconds. */
export type Horizon = { readonly messages: number } | { readonly ms: number };

export interface SketchOptions {
  /** Counters per row (rounded up to a power of two). */
  readonly width?: number;
  /** Rows. */
  readonly depth?: number;
  /**
   * A message of a key that is not tracked updates the sketch once in this many messages on
   * average (randomly spaced), with as much weight; 1 = every message. Tracked keys are
   * always counted exactly.
   */
  readonly sampling?: number;
}

export interface DynamicPartitionerOptions {
  /** The librdkafka partitioner cold keys follow, as in partitionForKey. */
  readonly partitioner?: PartitionerName;
  /** false: detect and report hot keys, never move them (strict per-key order). */
  readonly spread?: boolean;
  /**
   * true: a hot key that fits whole in one partition (its load + the key's within
   * balanceTolerance of the mean) is moved there whole, and split over several partitions only
   * when none has room for it; false: every hot key is split.
   */
  readonly relocate?: boolean;
  /** A key is hot when its share of its topic's recent traffic exceeds this many fair shares (1/n). */
  readonly hotThreshold?: number;
  /** A hot key cools when its share falls below this many fair shares (below hotThreshold: hysteresis). */
  readonly coolThreshold?: number;
  /**
   * A key whose normal partition is overloaded (above the mean by more than
   * balanceTolerance) is hot already above this many fair shares, and cools below half of
   * it; 0 turns this off. Lets partitions heavy with cold traffic shed their biggest keys.
   */
  readonly reliefThreshold?: number;
  /** How fast key counts fade (so a key that cools down stops being hot): a half-life in messages (all topics) or milliseconds. */
  readonly horizon?: Horizon;
  /** How fast partition loads fade (how long an overload is remembered and paid back): a half-life. */
  readonly loadHorizon?: Horizon;
  readonly sketch?: SketchOptions;
  /** Keys tracked exactly (hot ones and candidates); bounds hotKeys(). */
  readonly maxTrackedKeys?: number;
  /** A hot key starts with ceil(spreadFactor x share x n) partitions (at least 2). */
  readonly spreadFactor?: number;
  /**
   * A hot key gets one more partition while even the least loaded of its partitions is
   * above the topic's mean load by more than this fraction.
   */
  readonly balanceTolerance?: number;
  /** At most this many partitions per hot key; 0 = all of the topic's. */
  readonly maxSpread?: number;
  /** A hot key has at least this many recent messages. */
  readonly minHotMessages?: number;
  /** No key of a topic is hot before the topic has this many recent messages. */
  readonly warmupMessages?: number;
  /** Messages of null keys per sticky run (on the least loaded partition). */
  readonly stickyRun?: number;
  /**
   * At most this many messages of a hot key go together to its least loaded allowed partition
   * before it is chosen again (fewer where a run would move a partition's load by more than
   * half of balanceTolerance).
   */
  readonly hotRun?: number;
  /** Topics with state at once; the least recently used one is forgotten to make room. */
  readonly maxTopics?: number;
  /** The largest partition count of a topic. */
  readonly maxPartitions?: number;
}

export interface ResolvedOptions {
  readonly partitioner: PartitionerName;
  readonly spread: boolean;
  readonly relocate: boolean;
  readonly hotThreshold: number;
  readonly coolThreshold: number;
  readonly reliefThreshold: number;
  readonly horizon: Horizon;
  readonly loadHorizon: Horizon;
  readonly sketch: Required<SketchOptions>;
  readonly maxTrackedKeys: number;
  readonly spreadFactor: number;
  readonly balanceTolerance: number;
  readonly maxSpread: number;
  readonly minHotMessages: number;
  readonly warmupMessages: number;
  readonly stickyRun: number;
  readonly hotRun: number;
  readonly maxTopics: number;
  readonly maxPartitions: number;
}

export const DEFAULTS: ResolvedOptions = Object.freeze({
  partitioner: 'murmur2_random',
  spread: true,
  relocate: true,
  hotThreshold: 0.1,
  coolThreshold: 0.05,
  reliefThreshold: 0.025,
  horizon: Object.freeze({ messages: 20_000 }),
  loadHorizon: Object.freeze({ messages: 10_000 }),
  sketch: Object.freeze({ width: 16384, depth: 4, sampling: 4 }),
  maxTrackedKeys: 1024,
  spreadFactor: 1,
  balanceTolerance: 0.02,
  maxSpread: 0,
  minHotMessages: 16,
  warmupMessages: 200,
  stickyRun: 256,
  hotRun: 8,
  maxTopics: 64,
  maxPartitions: 1024,
} as const);

type Check = (value: unknown, path: string) => void;

function number(min: number, max: number, integer: boolean): Check {
  const expected = `${integer ? 'an integer' : 'a number'} in [${min}, ${max}]`;
  return (value, path) => {
    if (typeof value !== 'number' || !(value >= min && value <= max) || (integer && !Number.isInteger(value))) {
      throw new InvalidOptionError(path, expected, value);
    }
  };
}

const bool: Check = (value, path) => {
  if (typeof value !== 'boolean') throw new InvalidOptionError(path, 'true or false', value);
};

const partitioner: Check = (value, path) => {
  if (typeof value !== 'string' || !(PARTITIONERS as readonly string[]).includes(value)) {
    throw new InvalidOptionError(path, `one of ${PARTITIONERS.map((p) => `'${p}'`).join(', ')}`, value);
  }
};

function object(fields: Record<string, Check>, exactlyOne = false): Check {
  const names = Object.keys(fields);
  return (value, path) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new InvalidOptionError(path, `an object with ${exactlyOne ? 'one of' : 'keys among'} ${names.join(', ')}`, value);
    }
    const given = Object.keys(value);
    for (const key of given) {
      if (!names.includes(key)) {
        throw InvalidOptionError.unknown(`${path}.${key}`, names);
      }
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) fields[key](v, `${path}.${key}`);
    }
    if (exactlyOne && given.filter((k) => (value as Record<string, unknown>)[k] !== undefined).length !== 1) {
      throw new InvalidOptionError(path, `exactly one of ${names.join(', ')}`, value);
    }
  };
}

const SCHEMA = object({
  partitioner,
  spread: bool,
  relocate: bool,
  hotThreshold: number(1e-6, 1e6, false),
  coolThreshold: number(0, 1e6, false),
  reliefThreshold: number(0, 1e6, false),
  horizon: object({ messages: number(1, 1e12, false), ms: number(1, 1e12, false) }, true),
  loadHorizon: object({ messages: number(1, 1e12, false), ms: number(1, 1e12, false) }, true),
  sketch: object({ width: number(16, 1 << 24, true), depth: number(1, 16, true), sampling: number(1, 64, true) }),
  maxTrackedKeys: number(1, 1 << 20, true),
  spreadFactor: number(0, 1e6, false),
  balanceTolerance: number(0, 1e6, false),
  maxSpread: number(0, 0x7fffffff, true),
  minHotMessages: number(0, 1e12, false),
  warmupMessages: number(0, 1e12, false),
  stickyRun: number(1, 1e9, true),
  hotRun: number(1, 1e6, true),
  maxTopics: number(1, 1 << 16, true),
  maxPartitions: number(1, 1 << 20, true),
});

/** Checks `options` against the schema and fills in the defaults. */
export function resolveOptions(options: unknown = {}): ResolvedOptions {
  SCHEMA(options, 'options');
  const o = options as DynamicPartitionerOptions;
  // Copies, frozen: later changes to the caller's objects change nothing here.
  const horizon = (h: Horizon | undefined, fallback: Horizon): Horizon =>
    Object.freeze(h === undefined ? { ...fallback } : 'messages' in h && h.messages !== undefined ? { messages: h.messages } : { ms: (h as { ms: number }).ms });
  const resolved: ResolvedOptions = {
    ...DEFAULTS,
    ...definedOnly(o),
    horizon: horizon(o.horizon, DEFAULTS.horizon),
    loadHorizon: horizon(o.loadHorizon, DEFAULTS.loadHorizon),
    sketch: Object.freeze({ ...DEFAULTS.sketch, ...definedOnly(o.sketch ?? {}) }),
  };
  if (resolved.coolThreshold >= resolved.hotThreshold) {
    throw new InvalidOptionError('options.coolThreshold', `below options.hotThreshold (${resolved.hotThreshold})`, resolved.coolThreshold);
  }
  if (resolved.reliefThreshold > resolved.hotThreshold) {
    throw new InvalidOptionError('options.reliefThreshold', `at most options.hotThreshold (${resolved.hotThreshold})`, resolved.reliefThreshold);
  }
  if (resolved.maxTopics * resolved.maxPartitions > 1 << 24) {
    throw new InvalidOptionError('options.maxPartitions', `at most 2^24 / options.maxTopics (${Math.floor((1 << 24) / resolved.maxTopics)})`, resolved.maxPartitions);
  }
  return Object.freeze(resolved);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
