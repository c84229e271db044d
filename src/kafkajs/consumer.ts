// Order restoration for consumers of the KafkaJS API: Confluent's KafkaJS-compatible client
// (@confluentinc/kafka-javascript 1.x) and KafkaJS 2.x's own: the ordered-delivery engine
// (src/delivery/delivery.ts) over that consumer's own run(). What differs between the two
// clients is their host (consumer-host.ts); what is this adapter's own is eachBatch.
//
// The consumer commits nothing by itself: it would commit, as eachBatch returns, past messages
// the Resequencer still holds. resolveOffset() cannot stand in for the engine's commits either:
// a partition's safe offset moves when a message of another partition arrives, outside that
// partition's batch. So the consumer runs eachBatch with eachBatchAutoResolve false, each batch
// resolved whole as it is taken, and the engine commits with commitOffsets(), each offset with
// its handled record. A partition coming here hands out nothing before its previous owner's
// record is read: its first batch waits for that read.
//
// Stopping: Confluent's stop() is not implemented (it throws) and it connects once: stop() here
// disconnects it. KafkaJS's stops and runs again: stop() ends the run, disconnect() closes it.

import { EventEmitter } from 'node:events';
import type { Resequencer, ConsumedMessage } from '../delivery/resequencer';
import { type PartitionOffset, partitionKey } from '../delivery/dispatch';
import { Delivery } from '../delivery/delivery';
import type { RejoinCounts } from '../delivery/assignment';
import type { RecordCounts } from '../delivery/records';
import type {
  Consumed, KafkaJsBatchPayload, KafkaJsConsumerLike, KafkaJsConsumerOptions, KafkaJsEachMessage, KafkaJsEachMessagePayload,
  KafkaJsRunConfig, KafkaJsSubscription,
} from './consumer-types';
import type { ConsumerHost } from './consumer-host';
import { ConfluentHost, isConfluentConsumer } from './host-confluent';
import { KafkaJsHost, isKafkaJs2Consumer } from './host-kafkajs';
import { resolveKafkaJsConsumerOptions, type ResolvedKafkaJsConsumerOptions } from '../core/options';
import { type HandlerError, InvalidArgTypeError, InvalidOptionError, KafkaError, StateError, toKafkaError } from '../core/errors';
import { warnIfBothLoaded } from '../core/library';
import { within } from '../core/time';

export type {
  KafkaJsConsumedMessage, KafkaJsConsumerLike, KafkaJsConsumerOptions, KafkaJsEachMessage, KafkaJsEachMessagePayload, KafkaJsRunConfig,
  KafkaJsSubscription, ConfluentConsumerLike, KafkaJs2ConsumerLike, KafkaJsAdminClient,
} from './consumer-types';
export type { RejoinCounts } from '../delivery/assignment';

/** How often eachBatch heartbeats while it waits for the queue to drain (ms; KafkaJS sends one when its heartbeatInterval has passed). */
const HEARTBEAT_MS = 1000;

const NO_HEARTBEAT = async (): Promise<void> => {};

export declare interface KafkaJsDynamicConsumer {
  /** One failed call of eachMessage (it gets the message again unless the retries are used up). */
  on(event: 'handlerError', listener: (err: HandlerError, payload: KafkaJsEachMessagePayload) => void): this;
  /** The run ended (stop(), or `error`: the retries on a message were used up); Confluent's consumer is disconnected. */
  on(event: 'stopped', listener: (error: HandlerError | undefined) => void): this;
  on(event: 'assigned' | 'revoked', listener: (partitions: Array<{ topic: string; partition: number }>) => void): this;
  on(event: 'committed', listener: (offsets: PartitionOffset[]) => void): this;
  /** A KafkaError: a commit refused on revoke (or on KafkaJS's rebalance) while the group rebalances, or a failed read of committed offsets. */
  on(event: 'warning', listener: (err: KafkaError) => void): this;
  /** A KafkaError: a commit that failed (made again next time), or KafkaJS's run that crashed for good (the consumer stops). */
  on(event: 'error', listener: (err: KafkaError) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

/** A KafkaJS-API consumer whose messages reach the application through a Resequencer. */
export class KafkaJsDynamicConsumer extends EventEmitter {
  readonly consumer: KafkaJsConsumerLike;
  readonly resequencer: Resequencer<Consumed>;
  /** options.groupOrder as it applies ('auto' is 'wait': this consumer's commits carry the records). */
  readonly groupOrder: 'flag' | 'wait';
  private readonly options: ResolvedKafkaJsConsumerOptions;
  /** What differs between the clients: Confluent's, or KafkaJS's. */
  private readonly host: ConsumerHost;
  private readonly delivery: Delivery<Consumed>;
  private eachMessage: KafkaJsEachMessage | undefined;
  /** eachBatch waits on this while the queue is full (maxPending). */
  private drained: (() => void) | undefined;

  constructor(consumer: KafkaJsConsumerLike, options: KafkaJsConsumerOptions = {}) {
    super();
    const confluent = isConfluentConsumer(consumer);
    if (!confluent && !isKafkaJs2Consumer(consumer)) {
      throw new InvalidArgTypeError('consumer', "Confluent's KafkaJS consumer (new KafkaJS.Kafka(config).consumer(...)) or KafkaJS 2.x's (new Kafka(config).consumer({ groupId }))", consumer);
    }
    this.options = resolveKafkaJsConsumerOptions(options);
    if (confluent) {
      if (this.options.admin !== undefined) {
        throw new InvalidOptionError('options.admin', 'absent', this.options.admin, "options.admin is for KafkaJS 2.x's consumer: Confluent's reads the group's committed offsets itself");
      }
      this.host = new ConfluentHost(consumer);
    } else {
      if (this.options.admin === undefined) {
        throw new InvalidOptionError('options.admin', 'a KafkaJS admin client (kafka.admin())', undefined,
          "options.admin is required with KafkaJS's consumer: it has no committed(), so the group's committed offsets and handled records are read with a KafkaJS admin client's fetchOffsets() (kafka.admin())");
      }
      this.host = new KafkaJsHost(consumer, this.options.admin);
    }
    this.groupOrder = this.options.groupOrder === 'flag' ? 'flag' : 'wait';
    this.consumer = consumer;
    const payloadOf = (m: Consumed): KafkaJsEachMessagePayload => ({ topic: m.topic, partition: m.partition, message: m.message, heartbeat: NO_HEARTBEAT });
    this.delivery = new Delivery<Consumed>(this.host, {
      ...this.options, groupOrder: this.groupOrder, afterStop: this.host.runsAgain ? 'idle' : 'stopped',
    }, {
      handle: (m, info) => this.eachMessage!(payloadOf(m), info),
      handlerError: (error, m) => this.emit('handlerError', error, payloadOf(m)),
      emit: (event, ...args) => this.emit(event, ...args),
      listenerCount: (event) => this.listenerCount(event),
      resume: () => this.wake(),
      halting: () => this.delivery.pressure.release(),
      ended: (failure) => {
        this.eachMessage = undefined;
        this.emit('stopped', failure);
      },
    });
    this.resequencer = this.delivery.resequencer;
    warnIfBothLoaded();
  }

  /**
   * Connects the consumer (unless it is connected already; KafkaJS's: and the `admin` client).
   * Confluent's consumer configured to commit by itself (kafkaJS.autoCommit, or
   * enable.auto.commit, not false) is disconnected again and refused with an
   * InvalidOptionError: it would commit past messages still held.
   */
  connect(): Promise<void> {
    const assignment = this.delivery.assignment;
    return this.delivery.connect(async () => {
      try {
        await this.host.connect({
          assigned: (partitions) => assignment.assigned(partitions),
          revoked: (partitions) => assignment.revoked(partitions),
          rebalancing: () => assignment.rebalancing(),
          joined: (partitions) => assignment.joined(partitions),
          crashed: (error) => this.delivery.crashed(toKafkaError(error, 'run crashed')),
        });
      } catch (err) {
        if (!(err instanceof KafkaError) && !this.host.runsAgain) this.delivery.life.phase = 'stopped';
        throw err;
      }
    });
  }

  /** The consumer's subscribe(): `{ topic }` or `{ topics }` (names, or RegExps starting with ^), `replace` (Confluent's), `fromBeginning` (KafkaJS's). */
  async subscribe(subscription: KafkaJsSubscription): Promise<void> {
    if (typeof subscription !== 'object' || subscription === null) throw new InvalidArgTypeError('subscription', 'an object with topic or topics', subscription);
    const topicOk = (t: unknown) => (typeof t === 'string' && t.length > 0) || t instanceof RegExp;
    const { topic, topics, fromBeginning } = subscription;
    if (fromBeginning !== undefined && typeof fromBeginning !== 'boolean') throw new InvalidArgTypeError('subscription.fromBeginning', 'true or false', fromBeginning);
    if (topics !== undefined) {
      if (!Array.isArray(topics) || topics.length === 0 || !topics.every(topicOk)) throw new InvalidArgTypeError('subscription.topics', 'a non-empty array of topic names (or RegExps)', topics);
    } else if (!topicOk(topic)) {
      throw new InvalidArgTypeError('subscription.topic', 'a topic name (or a RegExp), when subscription.topics is absent', topic);
    }
    const phase = this.delivery.phase;
    if (phase !== 'connected' && phase !== 'running') throw new StateError(`subscribe() while ${phase}`);
    try {
      await this.host.subscribe(subscription);
    } catch (err) {
      throw toKafkaError(err, 'subscribe');
    }
  }

  /**
   * Starts the consumer's run(): each message goes through the Resequencer to `eachMessage`,
   * one at a time (up to partitionsConsumedConcurrently at once, one per key by default),
   * spread keys in produce order. Resolves once started (as the consumer's own run()); the run
   * ends with stop(), or when eachMessage keeps failing on a message (the 'stopped' event then
   * carries the HandlerError). Only `eachMessage` is taken: see docs/consumer.md for why not eachBatch.
   */
  async run(config: KafkaJsRunConfig): Promise<void> {
    if (typeof config !== 'object' || config === null) throw new InvalidArgTypeError('config', 'an object with eachMessage', config);
    for (const key of Object.keys(config)) {
      if (key === 'eachMessage' || key === 'partitionsConsumedConcurrently') continue;
      if (key === 'eachBatch') {
        throw new InvalidOptionError('config.eachBatch', 'absent', (config as unknown as Record<string, unknown>)[key],
          'config.eachBatch is not supported: restored order interleaves partitions, a batch holds one; use eachMessage');
      }
      throw InvalidOptionError.unknown(`config.${key}`, ['eachMessage', 'partitionsConsumedConcurrently']);
    }
    if (typeof config.eachMessage !== 'function') throw new InvalidArgTypeError('config.eachMessage', 'a function', config.eachMessage);
    const concurrency = config.partitionsConsumedConcurrently ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 65_536) {
      throw new InvalidOptionError('config.partitionsConsumedConcurrently', 'an integer from 1 to 65536', concurrency);
    }
    if (this.delivery.phase !== 'connected') throw new StateError(`run() while ${this.delivery.phase}`);
    this.eachMessage = config.eachMessage;
    this.delivery.run(concurrency);
    try {
      await this.host.run((payload) => this.batch(payload));
    } catch (err) {
      this.delivery.unrun();
      throw toKafkaError(err, 'run');
    }
  }

  /**
   * The consumer's eachBatch: the messages to the engine; while the queue is full (maxPending)
   * it waits, heartbeating (KafkaJS's: a long wait keeps the membership, and a rejection saying
   * the group rebalances goes to the client, which joins again).
   */
  private async batch(payload: KafkaJsBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    // Resolved at once: the consumer never seeks back to read again a message the engine has.
    if (messages.length > 0) payload.resolveOffset(messages[messages.length - 1].offset);
    // The partition just came here (or starts anew after a join): nothing of it goes before its previous owner's record is read.
    const assignment = this.delivery.assignment;
    const name = partitionKey(topic, partition);
    let waited = false;
    for (let wait = assignment.waitOf(name); wait !== undefined; wait = assignment.waitOf(name)) {
      if (!waited) this.delivery.records?.fetchedEarly(messages.length);
      waited = true;
      await wait;
    }
    // Stopping, revoked meanwhile, or the group rejoining (every partition is fetched again after the join).
    if (this.delivery.phase !== 'running' || assignment.rejoining) return;
    for (const message of messages) {
      const m: Consumed = { topic, partition, offset: Number(message.offset), key: message.key, value: message.value, size: message.size, headers: message.headers as ConsumedMessage['headers'], message };
      if (!assignment.admit(m)) return;
    }
    if (!this.delivery.pressure.full()) return;
    const drained = new Promise<boolean>((resolve) => {
      this.drained = () => resolve(true);
    });
    if (payload.heartbeat === undefined) {
      await drained;
      return;
    }
    while (await within(drained, HEARTBEAT_MS) !== true) {
      try {
        await payload.heartbeat();
      } catch (err) {
        this.delivery.pressure.release();
        throw err;
      }
    }
  }

  /** eachBatch goes on (the queue is down to half, or the run stops). */
  private wake(): void {
    const drained = this.drained;
    this.drained = undefined;
    drained?.();
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    return this.delivery.safeOffset(topic, partition);
  }

  /** What the consumer holds and does now (DynamicConsumer's metrics()), and what the group's rejoins did. */
  metrics(): { held: number; waiting: number; inFlight: number; records: RecordCounts; rejoins: RejoinCounts } {
    const m = this.delivery.metrics();
    return { ...m, records: m.records! };
  }

  /**
   * Ends the run: nothing more is handed out once eachMessage has finished what was released
   * (for up to `timeoutMs`; what is left then is read again on the next start), the safe
   * offsets are committed, and the client's run ends: KafkaJS's consumer is stopped (connect()
   * and run() may follow; disconnect() closes it), Confluent's is disconnected (it has no
   * stop(), and connects once: a new run needs a new consumer). Rejects with a KafkaError when
   * that final commit fails (after the run ended). Nothing to do on a consumer never connected.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    return this.delivery.stop(timeoutMs);
  }

  /** stop(), and KafkaJS's consumer disconnected (Confluent's is, by stop()). */
  async disconnect(timeoutMs?: number): Promise<void> {
    await this.stop(timeoutMs);
    if (this.host.runsAgain) await this.host.disconnect();
  }
}

/**
 * Wraps a consumer of the KafkaJS API — Confluent's (`new KafkaJS.Kafka(config).consumer({
 * kafkaJS: { groupId, autoCommit: false, ... } })`) or KafkaJS 2.x's (`new Kafka(config).consumer({
 * groupId })`, with `options.admin`, a KafkaJS admin client) — so that its messages reach
 * `eachMessage` in restored order, with the offsets committed only below what was handled; use
 * the wrapper's connect / subscribe / run / stop (or disconnect) instead of the consumer's.
 */
export function wrapKafkaJsConsumer(consumer: KafkaJsConsumerLike, options: KafkaJsConsumerOptions = {}): KafkaJsDynamicConsumer {
  return new KafkaJsDynamicConsumer(consumer, options);
}
