// Order restoration for @platformatic/kafka's Consumer (never imported here: the application gives it): the ordered-delivery engine
// (src/delivery/delivery.ts) over the MessagesStream its consume() gives.

import { OrderedConsumer } from '../delivery/ordered-consumer';
import { checkConcurrency, checkTopics } from '../delivery/options';
import type { TopicPartition } from '../delivery/port';
import { keyOf, ORDER_VALUE, orderValueAmong } from '../delivery/message-order';
import { partitionKey } from '../core/partition-key';
import { PlatformaticPort } from './consumer-port';
import type {
  PlatformaticConsumed, PlatformaticConsumerLike, PlatformaticConsumerOptions, PlatformaticConsumedMessage, PlatformaticMessageHandler, PlatformaticRunConfig,
  PlatformaticStreamLike,
} from './consumer-types';
import { resolveKafkaJsConsumerOptions, type ResolvedKafkaJsConsumerOptions } from '../core/group-options';
import { checkDeadLetterTopic } from '../core/failure-options';
import { platformaticDeadLetters } from './dead-letter-sink';
import { type HandlerError, InvalidArgTypeError, InvalidOptionError, type KafkaError, StateError, toKafkaError } from '../core/errors';

export type {
  PlatformaticConsumerLike, PlatformaticConsumerOptions, PlatformaticConsumedMessage, PlatformaticMessageHandler, PlatformaticRunConfig, PlatformaticStreamLike,
} from './consumer-types';

const RUN_FIELDS = ['topics', 'handler', 'concurrency', 'consume'];
/** The options it takes (those of wrapKafkaJsConsumer but admin). */
const PLATFORMATIC_OPTIONS = ['resequencer', 'commitIntervalMs', 'maxPending', 'handlerRetries', 'retryBackoffMs', 'retryBackoffMaxMs', 'onFailure', 'deadLetter', 'prometheus', 'ordering', 'groupOrder'];

/**
 * @platformatic/kafka's consumer, its messages reaching the application through the engine. stop() closes the stream; the consumer
 * stays open and in its group (close it with its close(), or run() again).
 */
export class PlatformaticDynamicConsumer extends OrderedConsumer<PlatformaticConsumed, PlatformaticConsumedMessage, [error: HandlerError | KafkaError | undefined]> {
  readonly consumer: PlatformaticConsumerLike;
  /** groupOrder as it applies: 'flag' (the consumer's commits carry no handled records). */
  readonly groupOrder = 'flag' as const;
  private readonly options: ResolvedKafkaJsConsumerOptions;
  private readonly port: PlatformaticPort;
  private handler: PlatformaticMessageHandler | undefined;
  private readonly onData = (m: PlatformaticConsumedMessage) => this.read(m);
  private readonly onStreamError = (err: unknown) => this.delivery.fail(toKafkaError(err, 'stream'));
  private readonly onRebalance = () => this.delivery.assignment.rebalancing();
  private readonly onJoin = (payload: { assignments?: ReadonlyArray<{ topic: string; partitions: number[] }>; generationId?: unknown } | undefined) => {
    // KIP-848's join (groupProtocol 'consumer') carries no generation: its changes come with heartbeats, without a join event.
    if (payload !== undefined && !('generationId' in payload)) this.incremental = true;
    this.sync(payload?.assignments ?? this.consumer.assignments ?? []);
  };
  /** Under KIP-848, after a heartbeat's answer: the assignment it changed (revoked partitions too), to the engine. */
  private readonly onHeartbeat = () => {
    if (this.incremental && this.delivery.phase === 'running' && this.changed(this.consumer.assignments ?? [])) this.sync(this.consumer.assignments ?? []);
  };
  /** The group runs KIP-848's protocol (seen at its join). */
  private incremental = false;

  constructor(consumer: PlatformaticConsumerLike, options: PlatformaticConsumerOptions = {}) {
    super();
    if (typeof consumer !== 'object' || consumer === null || typeof consumer.consume !== 'function' || typeof consumer.commit !== 'function' ||
      typeof consumer.listCommittedOffsets !== 'function' || typeof consumer.on !== 'function') {
      throw new InvalidArgTypeError('consumer', "@platformatic/kafka's Consumer (new Consumer({ groupId, bootstrapBrokers, ... }))", consumer);
    }
    this.options = resolveKafkaJsConsumerOptions(options);
    // The resolver is wrapKafkaJsConsumer's: its option of KafkaJS's own consumer has no use here.
    if (this.options.admin !== undefined) throw InvalidOptionError.unknown('options.admin', PLATFORMATIC_OPTIONS);
    // The protocol is the consumer's own option (groupProtocol: 'consumer' in new Consumer({...})).
    if (this.options.groupProtocol !== undefined) throw InvalidOptionError.unknown('options.groupProtocol', PLATFORMATIC_OPTIONS);
    if (this.options.groupOrder === 'wait') {
      throw new InvalidOptionError('options.groupOrder', "'auto' or 'flag' (@platformatic/kafka commits no metadata: there are no handled records to wait for)", 'wait');
    }
    this.consumer = consumer;
    this.port = new PlatformaticPort(consumer);
    const deadLetter = this.options.deadLetter;
    this.deliver(this.port, {
      ...this.options, groupOrder: 'flag', afterStop: 'idle', groupId: consumer.groupId,
      deadLetter: deadLetter === undefined ? undefined : { sink: platformaticDeadLetters(deadLetter), maxParkMs: deadLetter.maxParkMs },
    }, {
      handle: (m, info) => this.handler!(m.message, info),
      handlerError: (error, m) => this.emit('handlerError', error, m.message),
      payload: (m) => m.message,
      resume: () => {
        if (this.delivery.phase === 'running') this.port.stream?.resume();
      },
      ending: () => {
        this.unlisten();
        this.port.stream?.removeListener('error', this.onStreamError);
      },
      halting: () => {
        this.port.stream?.removeListener('data', this.onData);
        this.port.stream?.pause();
        this.delivery.pressure.release();
      },
      ended: (failure) => {
        this.handler = undefined;
        this.emit('stopped', failure);
      },
    });
  }

  /** The consumer's MessagesStream while running. */
  get stream(): PlatformaticStreamLike | null {
    return this.port.stream;
  }

  /**
   * Consumes `topics` with the consumer's consume() (autocommit false; mode 'committed' unless `consume.mode` says otherwise) and hands
   * each message to `handler` (up to `concurrency` at once), spread keys in produce order. Resolves once the stream is there; the run
   * ends with stop(), when the handler's retries on a message are used up, or when the stream fails ('stopped' carries the error).
   */
  async run(config: PlatformaticRunConfig): Promise<void> {
    if (typeof config !== 'object' || config === null) throw new InvalidArgTypeError('config', 'an object with topics and handler', config);
    for (const key of Object.keys(config)) if (!RUN_FIELDS.includes(key)) throw InvalidOptionError.unknown(`config.${key}`, RUN_FIELDS);
    const { topics, handler, concurrency = 1, consume = {} } = config;
    checkTopics(topics, 'config.topics');
    checkDeadLetterTopic(this.options.deadLetter, topics);
    if (typeof handler !== 'function') throw new InvalidArgTypeError('config.handler', 'a function', handler);
    checkConcurrency(concurrency, 'config.concurrency');
    if (typeof consume !== 'object' || consume === null) throw new InvalidArgTypeError('config.consume', "an object of the consumer's consume() options", consume);
    if (consume.autocommit !== undefined && consume.autocommit !== false) {
      throw new InvalidOptionError('config.consume.autocommit', 'false (offsets are committed here, only below what was handled)', consume.autocommit);
    }
    if ('topics' in consume) throw new InvalidOptionError('config.consume.topics', 'absent (config.topics says them)', consume.topics);
    if (this.delivery.phase !== 'idle') throw new StateError(`run() while ${this.delivery.phase}`);
    this.handler = handler;
    this.delivery.run(concurrency);
    this.consumer.on('consumer:group:rebalance', this.onRebalance);
    this.consumer.on('consumer:group:join', this.onJoin);
    this.consumer.on('consumer:heartbeat:end', this.onHeartbeat);
    let stream: PlatformaticStreamLike;
    try {
      stream = await this.consumer.consume({ mode: 'committed', ...consume, topics, autocommit: false });
    } catch (err) {
      this.unlisten();
      this.handler = undefined;
      this.delivery.unrun('idle');
      throw toKafkaError(err, 'consume');
    }
    this.port.stream = stream;
    // Joined before the stream was made (consume() joins the group first): its assignment.
    this.sync(this.consumer.assignments ?? []);
    stream.on('error', this.onStreamError);
    stream.on('data', this.onData);
  }

  /** A message of the stream: to the engine (once: what a join makes the stream read again is dropped there). */
  private read(m: PlatformaticConsumedMessage): void {
    if (this.delivery.phase !== 'running') return;
    const c = new Consumed(m, Number(m.offset));
    // Not (yet) known here as this consumer's: its assignment may have changed without a join event.
    if (!this.delivery.assignment.admit(c)) {
      this.sync(this.consumer.assignments ?? []);
      if (!this.delivery.assignment.admit(c)) return;
    }
    // Too many released messages wait for the handler: the stream pauses (again: the client may resume it on a rebalance).
    if (this.delivery.pressure.on) this.port.stream?.pause();
  }

  /** The consumer's assignment (after a join), to the engine. */
  private sync(assignments: ReadonlyArray<{ topic: string; partitions: number[] }>): void {
    const list: TopicPartition[] = [];
    for (const { topic, partitions } of assignments) for (const partition of partitions) list.push({ topic, partition });
    this.delivery.assignment.joined(list);
  }

  /** Whether `assignments` differ from the partitions the engine owns. */
  private changed(assignments: ReadonlyArray<{ topic: string; partitions: number[] }>): boolean {
    const owned = this.delivery.assignment;
    let n = 0;
    for (const { topic, partitions } of assignments) {
      for (const partition of partitions) {
        if (!owned.has(partitionKey(topic, partition))) return true;
        n++;
      }
    }
    return n !== owned.owned.size;
  }

  private unlisten(): void {
    this.consumer.removeListener('consumer:group:rebalance', this.onRebalance);
    this.consumer.removeListener('consumer:group:join', this.onJoin);
    this.consumer.removeListener('consumer:heartbeat:end', this.onHeartbeat);
  }
}

/** A message of the stream as the Resequencer reads it (one shape for all, its order header's value found once). */
class Consumed implements PlatformaticConsumed {
  readonly topic: string;
  readonly partition: number;
  readonly key: Buffer | string | null;
  readonly value: Buffer | null;
  readonly [ORDER_VALUE]: unknown;

  constructor(readonly message: PlatformaticConsumedMessage, readonly offset: number) {
    this.topic = message.topic;
    this.partition = message.partition;
    this.key = keyOf(message.key);
    this.value = Buffer.isBuffer(message.value) ? message.value : null;
    this[ORDER_VALUE] = orderValueAmong(message.headerEntries);
  }
}

/**
 * Wraps @platformatic/kafka's Consumer (`new Consumer({ groupId, bootstrapBrokers, ... })`) so that its stream's messages reach a handler
 * in restored order, committed only below what was handled: use the wrapper's run() and stop(), not consume(); close the consumer when done.
 */
export function wrapPlatformaticConsumer(consumer: PlatformaticConsumerLike, options: PlatformaticConsumerOptions = {}): PlatformaticDynamicConsumer {
  return new PlatformaticDynamicConsumer(consumer, options);
}
