// DynamicConsumer: node-rdkafka's KafkaConsumer (or the native engine's) → the ordered-delivery
// engine (src/delivery/delivery.ts) → the application. What is its own: the client
// (consumer-client.ts: cooperative-sticky, auto-commit refused), its port (client-port.ts), its
// fetch loop and the hold of it while the handler is behind (fetch-hold.ts), and its rebalance
// callback, which reports the assignment changes to the engine.

import { EventEmitter } from 'node:events';
import type * as Kafka from 'node-rdkafka';
import type { KafkaLibrary } from '../core/library';
import type { Resequencer, ConsumedMessage } from '../delivery/resequencer';
import type { HandledInfo } from '../delivery/dispatch';
import { Delivery } from '../delivery/delivery';
import type { RecordCounts } from '../delivery/records';
import type { DynamicConsumerOptions, MessageHandler, BatchHandler } from './consumer-options';
import type { Config } from '../core/config';
import { CONSUMER_DEFAULTS, ResolvedConsumerOptions, resolveConsumerOptions } from '../core/options';
import { type Connectable, connectClient } from '../core/connect';
import { makeConsumerClient } from './consumer-client';
import { ClientPort, type TopicPartitionOffset } from './client-port';
import { FetchHold } from './fetch-hold';
import { InvalidArgTypeError, StateError, toKafkaError } from '../core/errors';

export { CONSUMER_DEFAULTS };
export type { HandledInfo };
export type { DynamicConsumerOptions, MessageHandler, BatchHandler } from './consumer-options';

type Message = Kafka.Message & ConsumedMessage;

export class DynamicConsumer extends EventEmitter {
  readonly client: Kafka.KafkaConsumer;
  /** The client under the consumer: the native batch engine, or the client library's KafkaConsumer. */
  readonly engine: 'native' | 'client';
  readonly resequencer: Resequencer<Message>;
  /** The client library (options.kafka, or node-rdkafka). */
  private readonly library: KafkaLibrary;
  private readonly options: ResolvedConsumerOptions;
  private readonly delivery: Delivery<Message>;
  private handler: MessageHandler | undefined;
  private batchHandler: BatchHandler | undefined;
  /** Fetching held while the handler is behind, and the partitions paused in librdkafka. */
  private readonly hold: FetchHold;
  /** The last consume call found nothing: the next one waits for a message (fetchTimeoutMs). */
  private fetchedNothing = true;
  /** Settles the promise run() returned. */
  private settle: { resolve: () => void; reject: (err: Error) => void } | undefined;

  constructor(globalConfig: Config, topicConfig: Config = {}, options: DynamicConsumerOptions = {}) {
    super();
    if (typeof globalConfig !== 'object' || globalConfig === null) throw new InvalidArgTypeError('globalConfig', 'an object', globalConfig);
    if (typeof topicConfig !== 'object' || topicConfig === null) throw new InvalidArgTypeError('topicConfig', 'an object', topicConfig);
    this.options = resolveConsumerOptions(options);
    this.hold = new FetchHold({
      partitions: () => (this.delivery.phase === 'running' ? [...this.delivery.assignment.owned.values()] : []),
      pause: (partitions, paused) => (paused ? this.client.pause(partitions) : this.client.resume(partitions)),
      emit: (event) => this.emit(event),
      warn: (err) => this.emit('warning', err),
      fetch: () => this.fetch(),
    });
    const made = makeConsumerClient(globalConfig, topicConfig, options, this.options, (err, assignment) => this.rebalance(err, assignment));
    this.client = made.client;
    this.engine = made.engine;
    this.library = made.library;
    this.client.on('event.error', (err) => this.emit('error', toKafkaError(err, 'librdkafka')));
    // The native engine commits metadata: members share what they handled (docs/ordering.md).
    const port = new ClientPort(this.client, this.engine === 'native', () => this.hold.paused, (err) => this.emit('warning', err));
    this.delivery = new Delivery(port, { ...this.options, groupOrder: this.groupOrder, afterStop: 'idle' }, {
      handle: (message, info) => this.handler!(message, info),
      handleBatch: (messages, infos) => this.batchHandler!(messages, infos),
      handlerError: (error, message) => this.emit('handlerError', error, message),
      emit: (event, ...args) => this.emit(event, ...args),
      listenerCount: (event) => this.listenerCount(event),
      resume: () => this.hold.caughtUp(),
      halting: () => this.hold.stop(),
      ended: (failure, commitError) => this.ended(failure, commitError),
    });
    this.resequencer = this.delivery.resequencer;
  }

  /** options.groupOrder as it applies: 'auto' is 'wait' on the native engine (its commits carry the records), 'flag' on engine 'client'. */
  get groupOrder(): 'flag' | 'wait' {
    const asked = this.options.groupOrder;
    return asked !== 'auto' ? asked : this.engine === 'native' ? 'wait' : 'flag';
  }

  /** Connects the client; a StateError unless the consumer is new or stopped. */
  connect(timeoutMs = 30_000): Promise<void> {
    return this.delivery.connect(() => connectClient(this.client as unknown as Connectable, timeoutMs));
  }

  /**
   * Subscribes to `topics` and hands every message to `handler`, one at a time (or up to
   * `concurrency` at once, as `ordering` allows): spread keys in produce order, everything else
   * as it comes. A handler that throws or rejects gets the same message again, up to
   * `handlerRetries` times, before anything else of its key (or partition); then the consumer
   * stops (committing only below that message) and the promise rejects with a HandlerError.
   * Resolves when stop() has stopped it. Throws a StateError unless connect() has resolved and
   * the consumer is not running.
   */
  run(topics: string[], handler: MessageHandler): Promise<void> {
    if (typeof handler !== 'function') throw new InvalidArgTypeError('handler', 'a function', handler);
    return this.start(topics, handler, undefined);
  }

  /**
   * As run(), but each handler call gets consecutive released messages of one lane together
   * — of one key with ordering 'key' (messages without a key one at a time), of one partition
   * with 'partition', one message with 'none' — up to `handlerBatchSize`, with their infos: for
   * one database call per key. A call that throws or rejects gets the same messages again.
   */
  runBatches(topics: string[], handler: BatchHandler): Promise<void> {
    if (typeof handler !== 'function') throw new InvalidArgTypeError('handler', 'a function', handler);
    return this.start(topics, undefined, handler);
  }

  private start(topics: string[], handler: MessageHandler | undefined, batchHandler: BatchHandler | undefined): Promise<void> {
    if (!Array.isArray(topics) || topics.length === 0 || !topics.every((t) => typeof t === 'string' && t.length > 0)) {
      throw new InvalidArgTypeError('topics', 'a non-empty array of topic names', topics);
    }
    const phase = this.delivery.phase;
    if (phase === 'idle') throw new StateError('run() before connect()');
    if (phase === 'connecting') throw new StateError('run() before connect() resolved');
    if (phase !== 'connected') throw new StateError(`run() while ${phase}`);
    if (!this.client.isConnected()) throw new StateError('run() while the client is disconnected');
    try {
      this.client.subscribe(topics);
    } catch (err: any) {
      throw toKafkaError(err, 'subscribe');
    }
    this.handler = handler;
    this.batchHandler = batchHandler;
    this.delivery.run(this.options.concurrency, batchHandler === undefined ? 0 : this.options.handlerBatchSize);
    const done = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.fetch();
    return done;
  }

  private fetch(): void {
    if (this.delivery.phase !== 'running') return;
    if (this.hold.holds(this.delivery.pressure)) return;
    // Also while paused: a consume call serves rebalance callbacks and keeps max.poll.interval.ms.
    // consume(n) waits up to its timeout for each message until it has n, which on a slow stream
    // holds the first back: so a call takes what librdkafka has queued without waiting, and only
    // after one that found nothing does the next wait, up to fetchTimeoutMs, for one message.
    const wait = this.fetchedNothing;
    this.client.setDefaultConsumeTimeout(wait ? this.options.fetchTimeoutMs : 0);
    this.client.consume(wait ? 1 : this.options.batchSize, (err, messages) => {
      if (this.delivery.phase !== 'running') return; // stopping: read again from the committed offsets
      if (err) {
        this.fetchedNothing = true;
        this.emit('error', toKafkaError(err, 'consume'));
      } else {
        this.fetchedNothing = messages.length === 0;
        for (const m of messages) this.delivery.assignment.admit(m as Message);
      }
      setImmediate(() => this.fetch());
    });
  }

  /**
   * What the consumer holds and does now: messages held by the resequencer, waiting for a
   * handler call and in calls, and its handled records' costs (null on a client that commits no
   * metadata, engine 'client'; records.ts says what each counts).
   */
  metrics(): { engine: 'native' | 'client'; held: number; waiting: number; inFlight: number; records: RecordCounts | null } {
    const { held, waiting, inFlight, records } = this.delivery.metrics();
    return { engine: this.engine, held, waiting, inFlight, records };
  }

  /** @internal The engine's tables and the options that bound them, for bench/soak/tables.js. */
  tableSizes(): ReturnType<Delivery<Message>['dispatch']['tableSizes']> & { assigned: number; queue: number; options: Readonly<ResolvedConsumerOptions> } {
    const d = this.delivery.dispatch;
    return { ...d.tableSizes(), assigned: this.delivery.assignment.owned.size, queue: d.waiting + d.inFlight, options: this.options };
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    return this.delivery.safeOffset(topic, partition);
  }

  /** Incremental (cooperative) rebalancing: only the partitions that move are touched. */
  private rebalance(err: any, assignment: TopicPartitionOffset[]): void {
    const cooperative = this.client.rebalanceProtocol() === 'COOPERATIVE';
    const list = assignment.map(({ topic, partition }) => ({ topic, partition }));
    if (err.code === this.library.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
      if (cooperative) this.client.incrementalAssign(assignment);
      else this.client.assign(assignment);
      if (this.hold.paused && list.length > 0) this.client.pause(list);
      this.delivery.assignment.assigned(list);
    } else if (err.code === this.library.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
      // The calls of theirs under way may end (up to revokeTimeoutMs) before they go; what was
      // not handled is read again by their next owner, which starts after those calls ended.
      this.delivery.assignment.revoked(list, () => {
        try {
          if (cooperative) this.client.incrementalUnassign(assignment);
          else this.client.unassign();
        } catch (e) {
          // The client is disconnecting (stop() under way): the partitions go with it.
          if (this.delivery.phase === 'running') this.emit('warning', toKafkaError(e, 'unassign'));
        }
      });
    } else {
      this.emit('error', toKafkaError(err, 'rebalance'));
    }
  }

  /**
   * Stops fetching, lets the handler finish what was released (for up to `timeoutMs`; what
   * is left then is not handled, and read again on the next start), commits, and
   * disconnects. A consumer connected but not running just disconnects; one not connected
   * has nothing to stop. The consumer may then connect() and run() again.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    return this.delivery.stop(timeoutMs);
  }

  private ended(failure: Error | undefined, commitError: unknown): void {
    this.hold.paused = false;
    const settle = this.settle;
    this.settle = undefined;
    this.handler = undefined;
    this.batchHandler = undefined;
    this.emit('stopped');
    if (failure) settle?.reject(failure);
    else if (commitError !== undefined) settle?.reject(commitError as Error);
    else settle?.resolve();
  }
}
