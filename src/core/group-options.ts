// The options of what reads a consumer group's topics: the consumers (DynamicConsumer,
// wrapKafkaJsConsumer, wrapPlatformaticConsumer), the Resequencer and the LagMonitor, as schemas
// (src/core/schema.ts), resolved once at construction like the producers' options (options.ts).

import { KAFKA, ENGINE } from './options';
import type { KafkaLibrary } from './library';
import { FAILURE_FIELDS, type ResolvedFailureOptions, checkBackoff } from './failure-options';
import { Fields, MAX_TIMER_MS, custom, defaultsOf, integer, list, name, number, object, oneOf, resolve } from './schema';

// Resequencer -------------------------------------------------------------------------------

export interface ResolvedResequencerOptions {
  readonly maxBufferedMessages: number;
  readonly maxBufferedBytes: number;
  readonly maxWaitMs: number;
  readonly maxChainIdleMs: number;
  readonly maxChains: number;
}

const RESEQUENCER_FIELDS: Fields = {
  maxBufferedMessages: integer(0).default(10_000),
  maxBufferedBytes: integer(0).default(64 * 1024 * 1024),
  maxWaitMs: integer(0).default(30_000),
  maxChainIdleMs: integer(0).default(3_600_000),
  maxChains: integer(1).default(100_000),
};

export const RESEQUENCER_DEFAULTS: ResolvedResequencerOptions = defaultsOf(RESEQUENCER_FIELDS);

const RESEQUENCER_SCHEMA = object<ResolvedResequencerOptions>(RESEQUENCER_FIELDS);

export function resolveResequencerOptions(options: unknown): ResolvedResequencerOptions {
  return resolve(RESEQUENCER_SCHEMA, options);
}

// DynamicConsumer ---------------------------------------------------------------------------

export interface ResolvedConsumerOptions extends ResolvedFailureOptions {
  readonly commitIntervalMs: number;
  readonly batchSize: number;
  readonly maxPending: number;
  readonly fetchTimeoutMs: number;
  readonly handlerRetries: number;
  readonly retryBackoffMs: number;
  readonly concurrency: number;
  readonly ordering: 'key' | 'partition' | 'none';
  readonly revokeTimeoutMs: number;
  readonly handlerBatchSize: number;
  readonly groupOrder: 'auto' | 'flag' | 'wait';
  /** The Resequencer's options, defaults filled in; absent when none were given. */
  readonly resequencer?: ResolvedResequencerOptions;
  readonly kafka?: KafkaLibrary;
  readonly engine: 'auto' | 'native' | 'client';
  /** Exactly once: the producer whose transactions the commits go into (a DynamicProducer, checked by the consumer). */
  readonly transaction?: { readonly producer: object; readonly intervalMs?: number };
}

// Every bound is setTimeout's (a larger delay fires at once); 0 allowed for the two that turn retries off.
const CONSUMER_FIELDS: Fields = {
  commitIntervalMs: integer(1, MAX_TIMER_MS).default(250),
  batchSize: integer(1, MAX_TIMER_MS).default(500),
  maxPending: integer(1, MAX_TIMER_MS).default(5000),
  fetchTimeoutMs: integer(1, MAX_TIMER_MS).default(100),
  handlerRetries: integer(0, MAX_TIMER_MS).default(2),
  retryBackoffMs: integer(0, MAX_TIMER_MS).default(100),
  concurrency: integer(1, 65_536).default(1),
  ordering: oneOf(['key', 'partition', 'none'] as const).default('key'),
  revokeTimeoutMs: integer(0, MAX_TIMER_MS).default(10_000),
  handlerBatchSize: integer(1, 65_536).default(100),
  groupOrder: oneOf(['auto', 'flag', 'wait'] as const).default('auto'),
};

export const CONSUMER_DEFAULTS: Omit<ResolvedConsumerOptions, 'resequencer'> = defaultsOf(CONSUMER_FIELDS);

// `transaction.producer` is checked further by the consumer (transactional.id, its engine).
const CONSUMER_SCHEMA = object<ResolvedConsumerOptions>({ resequencer: RESEQUENCER_SCHEMA, ...CONSUMER_FIELDS, ...FAILURE_FIELDS, kafka: KAFKA, engine: ENGINE,
  transaction: object({
    producer: custom<object>('a DynamicProducer with transactional.id', (v) => typeof v === 'object' && v !== null && 'transactionsOf' in v).require(),
    intervalMs: integer(1, MAX_TIMER_MS) }) }, { refine: checkBackoff });

export function resolveConsumerOptions(options: unknown): ResolvedConsumerOptions {
  return resolve(CONSUMER_SCHEMA, options);
}

// wrapKafkaJsConsumer -----------------------------------------------------------------------

/** The KafkaJS admin client wrapKafkaJsConsumer reads committed offsets with (KafkaJS 2.x's consumer): what is used of it. */
export interface KafkaJsConsumerAdmin {
  connect(): Promise<void>;
  fetchOffsets(request: { groupId: string; topics: string[] }):
    Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string; metadata: string | null }> }>>;
}

/**
 * wrapKafkaJsConsumer's options, resolved: DynamicConsumer's, less those of its own fetching,
 * and the admin client of KafkaJS 2.x's consumer (whether it is required depends on the consumer: checked there).
 */
export type ResolvedKafkaJsConsumerOptions = Pick<ResolvedConsumerOptions, 'commitIntervalMs' | 'maxPending' | 'handlerRetries' | 'retryBackoffMs' | 'resequencer' | 'ordering' | 'groupOrder'>
  & ResolvedFailureOptions & {
  readonly admin?: KafkaJsConsumerAdmin;
  readonly groupProtocol?: 'classic' | 'consumer';
};

const KAFKAJS_ADMIN = custom<KafkaJsConsumerAdmin>('a KafkaJS admin client (kafka.admin(): connect() and fetchOffsets())', (v) =>
  typeof v === 'object' && v !== null && typeof (v as { connect?: unknown }).connect === 'function' && typeof (v as { fetchOffsets?: unknown }).fetchOffsets === 'function');

const KAFKAJS_CONSUMER_SCHEMA = object<ResolvedKafkaJsConsumerOptions>({
  resequencer: RESEQUENCER_SCHEMA,
  ...Object.fromEntries(['commitIntervalMs', 'maxPending', 'handlerRetries', 'retryBackoffMs', 'ordering', 'groupOrder'].map((name) => [name, CONSUMER_FIELDS[name]])),
  ...FAILURE_FIELDS,
  admin: KAFKAJS_ADMIN,
  groupProtocol: oneOf(['classic', 'consumer'] as const),
}, { refine: checkBackoff });

export function resolveKafkaJsConsumerOptions(options: unknown): ResolvedKafkaJsConsumerOptions {
  return resolve(KAFKAJS_CONSUMER_SCHEMA, options);
}

// LagMonitor --------------------------------------------------------------------------------

export interface ResolvedLagMonitorOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  readonly intervalMs: number;
  readonly holdHandoffsMs: number;
  readonly penaltyGain: number;
  readonly kafka?: KafkaLibrary;
}

const LAG_MONITOR_SCHEMA = object<ResolvedLagMonitorOptions>({
  groupId: name('a consumer group id').require(),
  topics: list(name('a topic name'), 'a non-empty array of topic names').require(),
  intervalMs: integer(10, MAX_TIMER_MS).default(1000),
  holdHandoffsMs: integer(0, MAX_TIMER_MS).default(10_000),
  // More lowers lag and latency and spreads more messages (docs/performance.md, the slow-consumer scenario).
  penaltyGain: number(0, 100).default(3),
  kafka: KAFKA,
});

/** LagMonitor's options; `options` itself is required. */
export function resolveLagMonitorOptions(options: unknown): ResolvedLagMonitorOptions {
  return resolve(LAG_MONITOR_SCHEMA, options === undefined ? null : options);
}
