// Order restoration for consumers of the KafkaJS API, Confluent's (@confluentinc/kafka-javascript) and KafkaJS 2.x's: the
// ordered-delivery engine (src/delivery/delivery.ts) over the consumer's run(), what differs between them in a host (consumer-host.ts).
// The client commits nothing itself (it would commit past messages the Resequencer holds), and resolveOffset() cannot follow the
// engine's safe offsets (a partition's moves when another's message arrives): the engine commits with commitOffsets(), with the records.

import type { ConsumedMessage } from '../delivery/resequencer';
import { partitionKey } from '../delivery/dispatch';
import { OrderedConsumer } from '../delivery/ordered-consumer';
import { checkConcurrency } from '../delivery/options';
import type {
  Consumed, KafkaJsBatchPayload, KafkaJsConsumerLike, KafkaJsConsumerOptions, KafkaJsEachMessage, KafkaJsEachMessagePayload,
  KafkaJsRunConfig, KafkaJsSubscription,
} from './consumer-types';
import type { ConsumerHost } from './consumer-host';
import { ConfluentHost, isConfluentConsumer } from './host-confluent';
import { KafkaJsHost, isKafkaJs2Consumer } from './host-kafkajs';
import { resolveKafkaJsConsumerOptions, type ResolvedKafkaJsConsumerOptions } from '../core/group-options';
import { checkDeadLetterTopic } from '../core/failure-options';
import { kafkaJsDeadLetters } from './dead-letter-sink';
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

/**
 * A KafkaJS-API consumer whose messages reach the application through the engine. stop() ends the client's run: KafkaJS's may then
 * connect() and run() again (disconnect() closes it); Confluent's is disconnected (it connects once).
 */
export class KafkaJsDynamicConsumer extends OrderedConsumer<Consumed, KafkaJsEachMessagePayload, [error: HandlerError | undefined]> {
  readonly consumer: KafkaJsConsumerLike;
  /** options.groupOrder as it applies ('auto' is 'wait': this consumer's commits carry the records). */
  readonly groupOrder: 'flag' | 'wait';
  private readonly options: ResolvedKafkaJsConsumerOptions;
  private readonly host: ConsumerHost;
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
      this.host = new ConfluentHost(consumer, this.options.groupProtocol);
    } else {
      if (this.options.groupProtocol === 'consumer') {
        throw new InvalidOptionError('options.groupProtocol', "'classic' or absent with KafkaJS 2.x's consumer", 'consumer',
          "options.groupProtocol 'consumer' (KIP-848): KafkaJS 2.x's consumer has no such protocol (it joins with JoinGroup and SyncGroup only); " +
          "use DynamicConsumer or Confluent's KafkaJS-compatible consumer with 'group.protocol': 'consumer' in its configuration");
      }
      if (this.options.admin === undefined) {
        throw new InvalidOptionError('options.admin', 'a KafkaJS admin client (kafka.admin())', undefined,
          "options.admin is required with KafkaJS's consumer: it has no committed(), so the group's committed offsets and handled records are read with a KafkaJS admin client's fetchOffsets() (kafka.admin())");
      }
      this.host = new KafkaJsHost(consumer, this.options.admin);
    }
    this.groupOrder = this.options.groupOrder === 'flag' ? 'flag' : 'wait';
    this.consumer = consumer;
    const payloadOf = (m: Consumed): KafkaJsEachMessagePayload => ({ topic: m.topic, partition: m.partition, message: m.message, heartbeat: NO_HEARTBEAT });
    const deadLetter = this.options.deadLetter;
    this.deliver(this.host, {
      ...this.options, groupOrder: this.groupOrder, afterStop: this.host.runsAgain ? 'idle' : 'stopped',
      deadLetter: deadLetter === undefined ? undefined : { sink: kafkaJsDeadLetters(deadLetter), maxParkMs: deadLetter.maxParkMs },
    }, {
      handle: (m, info) => this.eachMessage!(payloadOf(m), info),
      handlerError: (error, m) => this.emit('handlerError', error, payloadOf(m)),
      payload: payloadOf,
      resume: () => this.wake(),
      halting: () => this.delivery.pressure.release(),
      ended: (failure) => {
        this.eachMessage = undefined;
        this.emit('stopped', failure);
      },
    });
    warnIfBothLoaded();
  }

  /**
   * Connects the consumer (unless connected; KafkaJS's: and the `admin` client). Confluent's configured to commit by itself
   * (kafkaJS.autoCommit or enable.auto.commit not false) is disconnected and refused with an InvalidOptionError.
   */
  connect(): Promise<void> {
    const assignment = this.delivery.assignment;
    return this.delivery.connect(async () => {
      try {
        await this.host.connect({
          assigned: (partitions) => assignment.assigned(partitions), revoked: (partitions) => assignment.revoked(partitions),
          rebalancing: () => assignment.rebalancing(), joined: (partitions) => assignment.joined(partitions),
          crashed: (error) => this.delivery.crashed(error),
        });
      } catch (err) {
        if (!(err instanceof KafkaError) && !this.host.runsAgain) this.delivery.life.to('stopped');
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
    checkDeadLetterTopic(this.options.deadLetter, topics ?? [topic!], 'options.deadLetter.topic');
    const phase = this.delivery.phase;
    if (phase !== 'connected' && phase !== 'running') throw new StateError(`subscribe() while ${phase}`);
    try {
      await this.host.subscribe(subscription);
    } catch (err) {
      throw toKafkaError(err, 'subscribe');
    }
  }

  /**
   * Starts the consumer's run(), each message to `eachMessage` through the Resequencer (up to partitionsConsumedConcurrently at once),
   * spread keys in produce order. Resolves once started; the run ends with stop(), or when eachMessage's retries on a message are used
   * up ('stopped' carries the HandlerError). No eachBatch: docs/consumer.md says why.
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
    checkConcurrency(concurrency, 'config.partitionsConsumedConcurrently');
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

  /** The consumer's eachBatch: the messages to the engine; while the queue is full it waits, heartbeating to keep KafkaJS's membership. */
  private async batch(payload: KafkaJsBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    // Resolved whole at once: the client's next fetch starts at the resolved offset, and the engine keeps what it took.
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
    const drained = new Promise<boolean>((resolve) => { this.drained = () => resolve(true); });
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

  /** stop(), and KafkaJS's consumer disconnected (Confluent's is, by stop()). */
  async disconnect(timeoutMs?: number): Promise<void> {
    await this.stop(timeoutMs);
    if (this.host.runsAgain) await this.host.disconnect();
  }
}

/**
 * Wraps a consumer of the KafkaJS API, Confluent's (`new KafkaJS.Kafka(config).consumer({ kafkaJS: { groupId, autoCommit: false } })`)
 * or KafkaJS 2.x's (`new Kafka(config).consumer({ groupId })`, with `options.admin`), so that its messages reach `eachMessage` in
 * restored order, committed only below what was handled; use the wrapper's connect / subscribe / run / stop (or disconnect).
 */
export function wrapKafkaJsConsumer(consumer: KafkaJsConsumerLike, options: KafkaJsConsumerOptions = {}): KafkaJsDynamicConsumer {
  return new KafkaJsDynamicConsumer(consumer, options);
}
