// Order restoration for @platformatic/kafka's Consumer (2.x, pure JavaScript, an ES module for
// Node >= 22, never imported here: the application gives its consumer): the ordered-delivery
// engine (src/delivery/delivery.ts) over the MessagesStream its consume() gives.
//
// run({ topics, handler, concurrency }) calls consume() with autocommit false and reads the
// stream's 'data' events into the engine, the stream paused while maxPending released messages
// wait. Its commits carry no metadata (consumer-port.ts), so groupOrder is 'flag'
// (docs/consumer.md says what that costs). Rebalances: 'consumer:group:rebalance' when the group
// starts one (the engine commits what is safe of every partition: under the classic protocol's
// eager assignment every partition is revoked) and 'consumer:group:join' with the new
// assignment (the engine's joined(): partitions leaving committed again and forgotten, those
// coming start fresh, those kept keep what they hold).

import { EventEmitter } from 'node:events';
import type { Resequencer } from '../delivery/resequencer';
import type { PartitionOffset } from '../delivery/dispatch';
import { Delivery } from '../delivery/delivery';
import type { TopicPartition } from '../delivery/port';
import { ORDER_VALUE } from '../delivery/message-order';
import { ORDER_HEADER } from '../partitioner/headers';
import { PlatformaticPort } from './consumer-port';
import type {
  PlatformaticConsumed, PlatformaticConsumerLike, PlatformaticConsumerOptions, PlatformaticConsumedMessage, PlatformaticMessageHandler, PlatformaticRunConfig,
  PlatformaticStreamLike,
} from './consumer-types';
import { resolveKafkaJsConsumerOptions, type ResolvedKafkaJsConsumerOptions } from '../core/options';
import { type HandlerError, InvalidArgTypeError, InvalidOptionError, type KafkaError, StateError, toKafkaError } from '../core/errors';

export type {
  PlatformaticConsumerLike, PlatformaticConsumerOptions, PlatformaticConsumedMessage, PlatformaticMessageHandler, PlatformaticRunConfig, PlatformaticStreamLike,
} from './consumer-types';

const RUN_FIELDS = ['topics', 'handler', 'concurrency', 'consume'];
/** The options it takes (those of wrapKafkaJsConsumer but admin). */
const PLATFORMATIC_OPTIONS = ['resequencer', 'commitIntervalMs', 'maxPending', 'handlerRetries', 'retryBackoffMs', 'ordering', 'groupOrder'];

export declare interface PlatformaticDynamicConsumer {
  /** One failed call of the handler (it gets the message again unless the retries are used up). */
  on(event: 'handlerError', listener: (err: HandlerError, message: PlatformaticConsumedMessage) => void): this;
  /** The run ended (stop(), the handler's retries used up on a message, or the stream failed): its error, if any. */
  on(event: 'stopped', listener: (error: HandlerError | KafkaError | undefined) => void): this;
  on(event: 'assigned' | 'revoked', listener: (partitions: Array<{ topic: string; partition: number }>) => void): this;
  on(event: 'committed', listener: (offsets: PartitionOffset[]) => void): this;
  /** A KafkaError: a commit refused while the group rebalances, or a failed read of committed offsets. */
  on(event: 'warning', listener: (err: KafkaError) => void): this;
  /** A KafkaError: a commit that failed (made again next time). */
  on(event: 'error', listener: (err: KafkaError) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

/** @platformatic/kafka's consumer, its messages reaching the application through a Resequencer. */
export class PlatformaticDynamicConsumer extends EventEmitter {
  readonly consumer: PlatformaticConsumerLike;
  readonly resequencer: Resequencer<PlatformaticConsumed>;
  /** groupOrder as it applies: 'flag' (the consumer's commits carry no handled records). */
  readonly groupOrder = 'flag' as const;
  private readonly options: ResolvedKafkaJsConsumerOptions;
  private readonly port: PlatformaticPort;
  private readonly delivery: Delivery<PlatformaticConsumed>;
  private handler: PlatformaticMessageHandler | undefined;
  private readonly onData = (m: PlatformaticConsumedMessage) => this.read(m);
  private readonly onStreamError = (err: unknown) => this.delivery.fail(toKafkaError(err, 'stream'));
  private readonly onRebalance = () => this.delivery.assignment.rebalancing();
  private readonly onJoin = (payload: { assignments?: ReadonlyArray<{ topic: string; partitions: number[] }> } | undefined) =>
    this.sync(payload?.assignments ?? this.consumer.assignments ?? []);

  constructor(consumer: PlatformaticConsumerLike, options: PlatformaticConsumerOptions = {}) {
    super();
    if (typeof consumer !== 'object' || consumer === null || typeof consumer.consume !== 'function' || typeof consumer.commit !== 'function' ||
      typeof consumer.listCommittedOffsets !== 'function' || typeof consumer.on !== 'function') {
      throw new InvalidArgTypeError('consumer', "@platformatic/kafka's Consumer (new Consumer({ groupId, bootstrapBrokers, ... }))", consumer);
    }
    this.options = resolveKafkaJsConsumerOptions(options);
    // The resolver is wrapKafkaJsConsumer's: its option of KafkaJS's own consumer has no use here.
    if (this.options.admin !== undefined) throw InvalidOptionError.unknown('options.admin', PLATFORMATIC_OPTIONS);
    if (this.options.groupOrder === 'wait') {
      throw new InvalidOptionError('options.groupOrder', "'auto' or 'flag' (@platformatic/kafka commits no metadata: there are no handled records to wait for)", 'wait');
    }
    this.consumer = consumer;
    this.port = new PlatformaticPort(consumer);
    this.delivery = new Delivery<PlatformaticConsumed>(this.port, { ...this.options, groupOrder: 'flag', afterStop: 'idle' }, {
      handle: (m, info) => this.handler!(m.message, info),
      handlerError: (error, m) => this.emit('handlerError', error, m.message),
      emit: (event, ...args) => this.emit(event, ...args),
      listenerCount: (event) => this.listenerCount(event),
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
    this.resequencer = this.delivery.resequencer;
  }

  /** The consumer's MessagesStream while running. */
  get stream(): PlatformaticStreamLike | null {
    return this.port.stream;
  }

  /**
   * Consumes `topics` with the consumer's consume() (autocommit false; mode 'committed' unless
   * `consume.mode` says otherwise) and hands each message to `handler`, one at a time (up to
   * `concurrency` at once, one per key by default), spread keys in produce order. Resolves once
   * the stream is there; the run ends with stop(), when the handler keeps failing on a message
   * or when the stream fails (the 'stopped' event carries the error).
   */
  async run(config: PlatformaticRunConfig): Promise<void> {
    if (typeof config !== 'object' || config === null) throw new InvalidArgTypeError('config', 'an object with topics and handler', config);
    for (const key of Object.keys(config)) if (!RUN_FIELDS.includes(key)) throw InvalidOptionError.unknown(`config.${key}`, RUN_FIELDS);
    const { topics, handler, concurrency = 1, consume = {} } = config;
    if (!Array.isArray(topics) || topics.length === 0 || !topics.every((t) => typeof t === 'string' && t.length > 0)) {
      throw new InvalidArgTypeError('config.topics', 'a non-empty array of topic names', topics);
    }
    if (typeof handler !== 'function') throw new InvalidArgTypeError('config.handler', 'a function', handler);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 65_536) throw new InvalidOptionError('config.concurrency', 'an integer from 1 to 65536', concurrency);
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
    let stream: PlatformaticStreamLike;
    try {
      stream = await this.consumer.consume({ mode: 'committed', ...consume, topics, autocommit: false });
    } catch (err) {
      this.unlisten();
      this.handler = undefined;
      this.delivery.unrun();
      this.delivery.life.phase = 'idle';
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
    if (this.delivery.pressure.full()) this.port.stream?.pause();
  }

  /** The consumer's assignment (after a join), to the engine. */
  private sync(assignments: ReadonlyArray<{ topic: string; partitions: number[] }>): void {
    const list: TopicPartition[] = [];
    for (const { topic, partitions } of assignments) for (const partition of partitions) list.push({ topic, partition });
    this.delivery.assignment.joined(list);
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    return this.delivery.safeOffset(topic, partition);
  }

  /** Messages held by the resequencer, waiting for the handler and in calls. */
  metrics(): { held: number; waiting: number; inFlight: number } {
    const { held, waiting, inFlight } = this.delivery.metrics();
    return { held, waiting, inFlight };
  }

  /**
   * Ends the run: nothing more is read or handed out once the handler has finished what was
   * released (for up to `timeoutMs`; what is left then is read again on the next start), the
   * safe offsets are committed and the stream is closed. The consumer stays open (and in its
   * group): close it with its close(), or run() again. Rejects with a KafkaError when that final
   * commit fails. Nothing to do when not running.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    return this.delivery.stop(timeoutMs);
  }

  private unlisten(): void {
    this.consumer.removeListener('consumer:group:rebalance', this.onRebalance);
    this.consumer.removeListener('consumer:group:join', this.onJoin);
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
    this[ORDER_VALUE] = orderValueOf(message);
  }
}

/** A message's key as the Resequencer reads it: a Buffer or string as it is; a deserialized key as text. */
function keyOf(key: unknown): Buffer | string | null {
  if (key === undefined || key === null) return null;
  if (typeof key === 'string' || Buffer.isBuffer(key)) return key;
  if (key instanceof Uint8Array) return Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  if (typeof key === 'object') {
    try {
      return JSON.stringify(key) ?? String(key);
    } catch {
      return String(key);
    }
  }
  return String(key);
}

const ORDER_HEADER_BYTES = Buffer.from(ORDER_HEADER);

/** The order header's value among the stream's header entries (a Buffer or string name), or null. */
function orderValueOf(m: PlatformaticConsumedMessage): unknown {
  const entries = m.headerEntries;
  if (entries === undefined) return null;
  for (let i = 0; i < entries.length; i++) {
    const name = entries[i][0];
    if (name === ORDER_HEADER || (Buffer.isBuffer(name) && name.length === ORDER_HEADER_BYTES.length && name.equals(ORDER_HEADER_BYTES))) return entries[i][1] ?? null;
  }
  return null;
}

/**
 * Wraps @platformatic/kafka's Consumer (`new Consumer({ groupId, bootstrapBrokers, ... })`) so
 * that the messages of its stream reach a handler in restored order, with the offsets committed
 * only below what was handled: use the wrapper's run({ topics, handler }) and stop() instead of
 * the consumer's consume() (close the consumer itself when done).
 */
export function wrapPlatformaticConsumer(consumer: PlatformaticConsumerLike, options: PlatformaticConsumerOptions = {}): PlatformaticDynamicConsumer {
  return new PlatformaticDynamicConsumer(consumer, options);
}
