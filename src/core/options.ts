// The options of the partitioner and of every producer, as schemas (src/core/schema.ts): each
// option's type, range and default stated once, here (the consumers' and the LagMonitor's in
// group-options.ts). Each class resolves its options once, at construction: unknown names are
// rejected, a bad value is named by its path, and the defaults are filled in; nothing is
// checked per message.

import { PARTITIONERS, PartitionerName } from './hash';
import { InvalidOptionError } from './errors';
import { isKafkaLibrary, type KafkaLibrary } from './library';
import { Field, Fields, MAX_TIMER_MS, boolean, checksOnly, custom, defaultsOf, integer, number, object, oneOf, resolve } from './schema';

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
  /**
   * Asked once when a key turns hot (and again only if it has left the table of tracked keys
   * since): false keeps the key on its own partition, unmarked, for as long as it is hot — for
   * keys whose order must never be split. It is still reported hot (with `spreadable: false`).
   * Called with the key as given (a string, or a copy of its bytes) and the topic; a function
   * that throws counts as false, and the error is emitted as 'warning'.
   */
  readonly spreadable?: (key: string | Buffer, topic: string) => boolean;
  /** A key is hot when its share of its topic's recent traffic exceeds this many fair shares (1/n). */
  readonly hotThreshold?: number;
  /** A hot key cools when its share falls below this many fair shares (below hotThreshold: hysteresis). */
  readonly coolThreshold?: number;
  /**
   * A key whose normal partition is overloaded (above the mean by more than
   * balanceTolerance) may turn hot from this many fair shares on (from half of it where the
   * partition loads measure the excess well) when it is the key whose rate fits the excess
   * best, and cools below half of it; 0 turns this off. Lets partitions heavy with cold traffic
   * shed the traffic balance needs.
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
  /**
   * A split key (one spread over several partitions) stays on each partition it picks for
   * about this long (ms) — but for no more than a quarter of a partition's recent messages —
   * before it picks again; 0: its runs are hotRun's (as they are until the clock first ticks,
   * in a synchronous loop). A consumer group restores a split key's order by
   * waiting, at each change of partition, for the member that handled its predecessor to
   * commit it (DynamicConsumer's groupOrder 'wait'): a few changes a second keep that wait a
   * small part of the key's time.
   */
  readonly splitRunMs?: number;
  /** Topics with state at once; the least recently used one is forgotten to make room. */
  readonly maxTopics?: number;
  /** The largest partition count of a topic. */
  readonly maxPartitions?: number;
}

export interface ResolvedOptions {
  readonly partitioner: PartitionerName;
  readonly spread: boolean;
  readonly relocate: boolean;
  readonly spreadable?: (key: string | Buffer, topic: string) => boolean;
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
  readonly splitRunMs: number;
  readonly maxTopics: number;
  readonly maxPartitions: number;
}

const horizon = (): Field<Horizon> => object<Horizon>({ messages: number(1, 1e12), ms: number(1, 1e12) }, { exactlyOne: true });

const SKETCH_FIELDS: Fields = {
  width: integer(16, 1 << 24).default(16384),
  depth: integer(1, 16).default(4),
  sampling: integer(1, 64).default(4),
};

/** DynamicPartitioner's options (also taken by DynamicProducer and the KafkaJS adapter). */
const PARTITIONER_FIELDS: Fields = {
  partitioner: oneOf(PARTITIONERS).default('murmur2_random'),
  spread: boolean.default(true),
  relocate: boolean.default(true),
  spreadable: custom<(key: string | Buffer, topic: string) => boolean>('a function (key, topic) => boolean', (v) => typeof v === 'function'),
  hotThreshold: number(1e-6, 1e6).default(0.1),
  coolThreshold: number(0, 1e6).default(0.05),
  reliefThreshold: number(0, 1e6).default(0.025),
  horizon: horizon().default(Object.freeze({ messages: 20_000 })),
  loadHorizon: horizon().default(Object.freeze({ messages: 10_000 })),
  sketch: object(SKETCH_FIELDS).default(defaultsOf(SKETCH_FIELDS)),
  maxTrackedKeys: integer(1, 1 << 20).default(1024),
  spreadFactor: number(0, 1e6).default(1),
  balanceTolerance: number(0, 1e6).default(0.02),
  maxSpread: integer(0, 0x7fffffff).default(0),
  minHotMessages: number(0, 1e12).default(16),
  warmupMessages: number(0, 1e12).default(200),
  stickyRun: integer(1, 1e9).default(256),
  hotRun: integer(1, 1e6).default(8),
  splitRunMs: number(0, 3_600_000).default(2000),
  maxTopics: integer(1, 1 << 16).default(64),
  maxPartitions: integer(1, 1 << 20).default(1024),
};

export const DEFAULTS: ResolvedOptions = defaultsOf(PARTITIONER_FIELDS);

/** The names of DynamicPartitioner's options. */
export const PARTITIONER_OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(PARTITIONER_FIELDS));

const PARTITIONER_SCHEMA = object<ResolvedOptions>(PARTITIONER_FIELDS, {
  refine(o, path) {
    if (o.coolThreshold >= o.hotThreshold) {
      throw new InvalidOptionError(`${path}.coolThreshold`, `below ${path}.hotThreshold (${o.hotThreshold})`, o.coolThreshold);
    }
    if (o.reliefThreshold > o.hotThreshold) {
      throw new InvalidOptionError(`${path}.reliefThreshold`, `at most ${path}.hotThreshold (${o.hotThreshold})`, o.reliefThreshold);
    }
    if (o.maxTopics * o.maxPartitions > 1 << 24) {
      throw new InvalidOptionError(`${path}.maxPartitions`, `at most 2^24 / ${path}.maxTopics (${Math.floor((1 << 24) / o.maxTopics)})`, o.maxPartitions);
    }
  },
});

/** Checks DynamicPartitioner's `options` against the schema and fills in the defaults (a frozen copy). */
export function resolveOptions(options: unknown = {}): ResolvedOptions {
  return resolve(PARTITIONER_SCHEMA, options);
}

/**
 * The client library (node-rdkafka's API: Producer, KafkaConsumer, CODES), e.g.
 * require('@confluentinc/kafka-javascript'); absent: node-rdkafka.
 */
export const KAFKA = custom<KafkaLibrary>('a node-rdkafka-style module (with Producer, KafkaConsumer and CODES), e.g. require(\'@confluentinc/kafka-javascript\')', isKafkaLibrary);

/** 'spread': order headers on the messages of spread keys; 'none': never. */
const ORDER_HEADERS = oneOf(['spread', 'none'] as const).default('spread');

/**
 * Traced sends (OpenTelemetry): 'keep', a message that carries a `traceparent` of its own keeps
 * it (a forwarded message's); 'replace', the producer span's replaces it (and its `tracestate`).
 */
const TRACE_HEADERS = oneOf(['keep', 'replace'] as const).default('keep');

// DynamicProducer ---------------------------------------------------------------------------

/** DynamicProducer's own options, resolved. */
export interface ProducerSettings {
  readonly metadataRefreshMs: number;
  readonly maxQueued: number;
  readonly pollIntervalMs: number;
  readonly orderHeaders: 'spread' | 'none';
  readonly traceHeaders: 'keep' | 'replace';
  readonly queuePenalty: boolean;
  readonly prometheus?: unknown;
  readonly producerId?: Buffer;
  readonly kafka?: KafkaLibrary;
  readonly engine: 'auto' | 'native' | 'client';
  readonly nativeHandles: number;
}

/**
 * 'native': the batch engine (native/, over the librdkafka the client library loaded);
 * 'client': the client library's own produce() and reports; 'auto': native when it is built.
 */
export const ENGINE = oneOf(['auto', 'native', 'client'] as const).default('auto');

/**
 * The native engine's librdkafka producer handles, partition p on handle p % n: more than one
 * keeps more than one produce request in progress per broker (docs/native.md, "Handles").
 */
const NATIVE_HANDLES = 2;
const MAX_NATIVE_HANDLES = 16;

const PRODUCER_FIELDS: Fields = {
  metadataRefreshMs: integer(100, MAX_TIMER_MS).default(30_000),
  maxQueued: integer(1).default(100_000),
  pollIntervalMs: integer(0, MAX_TIMER_MS).default(5),
  orderHeaders: ORDER_HEADERS,
  traceHeaders: TRACE_HEADERS,
  queuePenalty: boolean.default(true),
  // Whether prom-client is installed, and this one of its Registries, is checked as the gauges are registered.
  prometheus: custom('a prom-client Registry', (v) => typeof v === 'object' && v !== null),
  producerId: custom('a Buffer of 8 bytes', (v) => Buffer.isBuffer(v) && v.length === 8),
  kafka: KAFKA,
  engine: ENGINE,
  nativeHandles: integer(1, MAX_NATIVE_HANDLES).default(NATIVE_HANDLES),
};

export const PRODUCER_DEFAULTS: ProducerSettings = defaultsOf(PRODUCER_FIELDS);

/** The names of DynamicProducer's own options (besides the partitioner's). */
export const PRODUCER_OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(PRODUCER_FIELDS));

/**
 * A producer's options: `fields`, its own settings (defaults filled in), beside the
 * partitioner's options. Those are checked here (so that an unknown name lists all the valid
 * ones) and handed on as given: DynamicPartitioner fills in their defaults.
 */
function producerResolver<T>(fields: Fields): (options: unknown) => { producer: T; partitioner: Record<string, unknown> } {
  const schema = object<Record<string, unknown>>({ ...checksOnly(PARTITIONER_FIELDS), ...fields });
  return (options) => {
    const all = resolve(schema, options);
    const producer: Record<string, unknown> = {};
    const partitioner: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(all)) {
      if (Object.hasOwn(fields, key)) producer[key] = value;
      else partitioner[key] = value;
    }
    return { producer: Object.freeze(producer) as T, partitioner };
  };
}

/** DynamicProducer's options: its own settings, defaults filled in, and the partitioner's options as given. */
export const resolveProducerOptions = producerResolver<ProducerSettings>(PRODUCER_FIELDS);

// KafkaJS adapter ---------------------------------------------------------------------------

const KAFKAJS_SCHEMA = object<{ orderHeaders: 'spread' | 'none' } & Record<string, unknown>>({ ...checksOnly(PARTITIONER_FIELDS), orderHeaders: ORDER_HEADERS });

/** createKafkaJsPartitioner's options: orderHeaders (default filled in), and the partitioner's options as given. */
export function resolveKafkaJsOptions(options: unknown): { orderHeaders: 'spread' | 'none'; partitioner: Record<string, unknown> } {
  const { orderHeaders, ...partitioner } = resolve(KAFKAJS_SCHEMA, options);
  return { orderHeaders, partitioner };
}

// wrapKafkaJsProducer -----------------------------------------------------------------------

/** wrapKafkaJsProducer's own options, resolved. */
export interface KafkaJsProducerSettings {
  readonly orderHeaders: 'spread' | 'none';
  readonly traceHeaders: 'keep' | 'replace';
  readonly metadataRefreshMs: number;
  readonly metadataTimeoutMs: number;
  readonly prometheus?: unknown;
  readonly producerId?: Buffer;
  readonly admin?: unknown;
}

const KAFKAJS_PRODUCER_FIELDS: Fields = {
  orderHeaders: ORDER_HEADERS,
  traceHeaders: TRACE_HEADERS,
  metadataRefreshMs: integer(100, MAX_TIMER_MS).default(30_000),
  metadataTimeoutMs: integer(1, MAX_TIMER_MS).default(5_000),
  prometheus: PRODUCER_FIELDS.prometheus,
  producerId: PRODUCER_FIELDS.producerId,
  admin: custom('an admin client with fetchTopicMetadata()', (v) => typeof v === 'object' && v !== null && typeof (v as { fetchTopicMetadata?: unknown }).fetchTopicMetadata === 'function'),
};

const resolveKafkaJsProducer = producerResolver<KafkaJsProducerSettings>(KAFKAJS_PRODUCER_FIELDS);

/** wrapKafkaJsProducer's options: its own settings, defaults filled in, and the partitioner's options as given. */
export function resolveKafkaJsProducerOptions(options: unknown): { producer: KafkaJsProducerSettings; partitioner: Record<string, unknown> } {
  return resolveKafkaJsProducer(options);
}

// @platformatic/kafka ------------------------------------------------------------------------

/** Kafka's murmur2 partitioners: what the producer reduces itself (`% partitionsCount`) while a count is not known. */
const MURMUR2 = oneOf(['murmur2_random', 'murmur2'] as const, " (the @platformatic/kafka adapters follow Kafka's murmur2)").default('murmur2_random');

/** createPlatformaticPartitioner's options (orderHeaders: only 'none', required there unless spread is false: a hook cannot write headers). */
export const resolvePlatformaticPartitionerOptions = producerResolver<{ readonly partitioner: 'murmur2_random' | 'murmur2'; readonly orderHeaders?: 'none' }>({
  partitioner: MURMUR2, orderHeaders: oneOf(['none'] as const, ' (a hook cannot write headers: wrapPlatformaticProducer can)'),
});

/** wrapPlatformaticProducer's own options, resolved (headerType: what the order header goes to the producer's header serializers as). */
export type PlatformaticProducerSettings = Omit<KafkaJsProducerSettings, 'admin'> & { readonly partitioner: 'murmur2_random' | 'murmur2'; readonly headerType: 'string' | 'buffer' };
const { admin: _admin, ...PLATFORMATIC_PRODUCER_FIELDS }: Fields = { ...KAFKAJS_PRODUCER_FIELDS, partitioner: MURMUR2, headerType: oneOf(['string', 'buffer'] as const).default('string') };
export const resolvePlatformaticProducerOptions = producerResolver<PlatformaticProducerSettings>(PLATFORMATIC_PRODUCER_FIELDS);
