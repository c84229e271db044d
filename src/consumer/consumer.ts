// DynamicConsumer: node-rdkafka's KafkaConsumer (or the native engine's) → the ordered-delivery engine (src/delivery/delivery.ts) → the
// application. Its own: its client (consumer-client.ts), port (client-port.ts), fetch loop and its throttle (fetch-throttle.ts), and rebalances;
// with the `transaction` option, its commits go into a DynamicProducer's transactions (transaction-sink.ts).

import type * as Kafka from 'node-rdkafka';
import type { KafkaLibrary } from '../core/library';
import type { ConsumedMessage } from '../delivery/resequencer';
import type { BlockedKey } from '../delivery/resequencer-types';
import type { HotKeyLag } from '../delivery/hot-key-lag';
import type { HandledInfo } from '../delivery/dispatch';
import { OrderedConsumer } from '../delivery/ordered-consumer';
import { checkTopics } from '../delivery/options';
import type { RecordCounts } from '../delivery/records';
import type { RejoinCounts } from '../delivery/assignment';
import type { DynamicConsumerOptions, MessageHandler, BatchHandler } from './consumer-options';
import type { Config } from '../core/config';
import { CONSUMER_DEFAULTS, ResolvedConsumerOptions, resolveConsumerOptions } from '../core/group-options';
import { type Connectable, connectClient } from '../core/connect';
import { makeConsumerClient } from './consumer-client';
import { ClientPort, type TopicPartitionOffset } from './client-port';
import { FetchThrottle } from './fetch-throttle';
import { InvalidArgTypeError, StateError, toKafkaError } from '../core/errors';
import type { TransactionCounts } from '../delivery/transacted';
import type { DynamicProducer } from '../producer/producer';
import type { TransactionOffset, TransactionSource } from '../producer/transactions';
import { ProducerTransactions } from './transaction-sink';
import { type ConsumerDeadLetters, consumerDeadLetters } from './dead-letter-sink';
import { checkDeadLetterTopic } from '../core/failure-options';
import type { FailureCounts } from '../delivery/failures';

export { CONSUMER_DEFAULTS };
export type { HandledInfo };
export type { DynamicConsumerOptions, MessageHandler, BatchHandler } from './consumer-options';

type Message = Kafka.Message & ConsumedMessage;

/**
 * A consumer of node-rdkafka's API. stop() disconnects it (one not running just disconnects); it may then connect() and run() again.
 */
export class DynamicConsumer extends OrderedConsumer<Message, Kafka.Message, []> implements TransactionSource {
  readonly client: Kafka.KafkaConsumer;
  /** The client under the consumer: the native batch engine, or the client library's KafkaConsumer. */
  readonly engine: 'native' | 'client';
  /** The group protocol globalConfig['group.protocol'] asks for: 'classic' (librdkafka's default) or 'consumer' (KIP-848). */
  readonly groupProtocol: 'classic' | 'consumer';
  private readonly library: KafkaLibrary;
  private readonly options: ResolvedConsumerOptions;
  private handler: MessageHandler | undefined;
  private batchHandler: BatchHandler | undefined;
  private readonly throttle: FetchThrottle;
  /** The last consume call found nothing: the next one waits for a message (fetchTimeoutMs). */
  private fetchedNothing = true;
  /** Settles the promise run() returned. */
  private runEnd: { resolve: () => void; reject: (err: Error) => void } | undefined;
  /** options.transaction: the producer whose transactions the commits go into. */
  private readonly transactions: ProducerTransactions | undefined;
  /** A consume call is under way. */
  private fetching = false;
  /** Holds of the fetch loop (betweenFetches()): no consume call starts while there are some. */
  private fetchHolds = 0;
  /** A run's transaction is being opened (run() is refused meanwhile). */
  private opening = false;
  /** options.deadLetter: where messages the handler keeps failing on go. */
  private readonly deadLetters: ConsumerDeadLetters | undefined;

  constructor(globalConfig: Config, topicConfig: Config = {}, options: DynamicConsumerOptions = {}) {
    super();
    if (typeof globalConfig !== 'object' || globalConfig === null) throw new InvalidArgTypeError('globalConfig', 'an object', globalConfig);
    if (typeof topicConfig !== 'object' || topicConfig === null) throw new InvalidArgTypeError('topicConfig', 'an object', topicConfig);
    this.options = resolveConsumerOptions(options);
    this.throttle = new FetchThrottle({
      partitions: () => (this.delivery.phase === 'running' ? [...this.delivery.assignment.owned.values()] : []),
      pause: (partitions, paused) => (paused ? this.client.pause(partitions) : this.client.resume(partitions)),
      emit: (event) => this.emit(event), warn: (err) => this.emit('warning', err),
      fetch: () => this.fetch(),
    });
    const made = makeConsumerClient(globalConfig, topicConfig, options, this.options, (err, assignment) => this.rebalance(err, assignment));
    this.client = made.client;
    this.engine = made.engine;
    this.groupProtocol = made.groupProtocol;
    this.library = made.library;
    this.client.on('event.error', (err) => this.emit('error', toKafkaError(err, 'librdkafka')));
    const port = new ClientPort(this.client, this.engine === 'native', () => this.throttle.paused, (err) => this.emit('warning', err),
      (act) => this.betweenFetches(act));
    const transaction = this.options.transaction;
    this.transactions = transaction === undefined ? undefined
      : new ProducerTransactions(transaction.producer as DynamicProducer, transaction.intervalMs ?? this.options.commitIntervalMs, this);
    const deadLetter = this.options.deadLetter;
    this.deadLetters = deadLetter === undefined ? undefined : consumerDeadLetters(deadLetter, globalConfig, transaction?.producer);
    this.deliver(port, {
      ...this.options, groupOrder: this.groupOrder, afterStop: 'idle', transaction: this.transactions, groupId: String(globalConfig['group.id'] ?? ''),
      deadLetter: this.deadLetters === undefined ? undefined : { sink: this.deadLetters.sink, maxParkMs: deadLetter?.maxParkMs },
    }, {
      handle: (message, info) => this.handler!(message, info),
      handleBatch: (messages, infos) => this.batchHandler!(messages, infos),
      handlerError: (error, message) => this.emit('handlerError', error, message),
      resume: () => this.throttle.caughtUp(),
      halting: () => this.throttle.stop(),
      ended: (failure, commitError) => this.ended(failure, commitError),
    });
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
   * Subscribes to `topics` and hands each message to `handler` (up to `concurrency` at once, as `ordering` allows), spread keys in
   * produce order. When its retries on a message are used up, the consumer stops, committing only below it, and the promise rejects
   * with a HandlerError; else it resolves once stop() has stopped it. Throws a StateError unless connected and not running.
   */
  run(topics: string[], handler: MessageHandler): Promise<void> {
    if (typeof handler !== 'function') throw new InvalidArgTypeError('handler', 'a function', handler);
    return this.start(topics, handler, undefined);
  }

  /**
   * As run(), but each call gets up to `handlerBatchSize` consecutive released messages of one lane, with their infos: of one key with
   * ordering 'key' (keyless ones alone), one partition with 'partition', one message with 'none'. A failed call gets them again.
   */
  runBatches(topics: string[], handler: BatchHandler): Promise<void> {
    if (typeof handler !== 'function') throw new InvalidArgTypeError('handler', 'a function', handler);
    return this.start(topics, undefined, handler);
  }

  private start(topics: string[], handler: MessageHandler | undefined, batchHandler: BatchHandler | undefined): Promise<void> {
    checkTopics(topics, 'topics');
    checkDeadLetterTopic(this.options.deadLetter, topics);
    this.checkRun();
    const transactions = this.transactions;
    if (transactions === undefined) return this.begin(topics, handler, batchHandler);
    // The handlers produce inside a transaction from their first call.
    this.opening = true;
    return transactions.open().finally(() => { this.opening = false; }).then(() => {
      try {
        this.checkRun();
        return this.begin(topics, handler, batchHandler);
      } catch (err) {
        transactions.close();
        throw err;
      }
    });
  }

  /** A StateError unless a run may begin. */
  private checkRun(): void {
    if (this.opening) throw new StateError('run() while an earlier run() opens its transaction');
    const phase = this.delivery.phase;
    if (phase === 'idle') throw new StateError('run() before connect()');
    if (phase === 'connecting') throw new StateError('run() before connect() resolved');
    if (phase !== 'connected') throw new StateError(`run() while ${phase}`);
    if (!this.client.isConnected()) throw new StateError('run() while the client is disconnected');
  }

  private begin(topics: string[], handler: MessageHandler | undefined, batchHandler: BatchHandler | undefined): Promise<void> {
    try {
      this.client.subscribe(topics);
    } catch (err: any) {
      throw toKafkaError(err, 'subscribe');
    }
    this.handler = handler;
    this.batchHandler = batchHandler;
    // An earlier run's consume call may have ended with its client, unanswered.
    this.fetching = false;
    this.fetchHolds = 0;
    this.delivery.run(this.options.concurrency, batchHandler === undefined ? 0 : this.options.handlerBatchSize);
    const done = new Promise<void>((resolve, reject) => { this.runEnd = { resolve, reject }; });
    this.fetch();
    return done;
  }

  /** Runs `act` once no consume call is under way, none starting until it settles: a seek's. */
  private async betweenFetches<T>(act: () => Promise<T>): Promise<T> {
    this.fetchHolds++;
    try {
      while (this.fetching) await new Promise((resolve) => setTimeout(resolve, 1));
      return await act();
    } finally {
      if (--this.fetchHolds === 0) setImmediate(() => this.fetch());
    }
  }

  private fetch(): void {
    if (this.delivery.phase !== 'running' || this.fetchHolds > 0 || this.fetching) return;
    if (this.throttle.waits(this.delivery.pressure)) return;
    // Also while paused: a consume call serves rebalance callbacks and keeps max.poll.interval.ms. consume(n) waits for each of its n
    // messages, holding the first back on a slow stream: so calls take what is queued at once, and after finding nothing wait for one.
    const wait = this.fetchedNothing;
    this.client.setDefaultConsumeTimeout(wait ? this.options.fetchTimeoutMs : 0);
    this.fetching = true;
    this.client.consume(wait ? 1 : this.options.batchSize, (err, messages) => {
      this.fetching = false;
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
   * Messages held by the resequencer, waiting for a call and in calls, the handled records' costs (null on engine 'client'),
   * and the transactions' counts (null without the `transaction` option).
   */
  override metrics(): {
    engine: 'native' | 'client'; held: number; waiting: number; inFlight: number; failures: FailureCounts; records: RecordCounts | null; rejoins: RejoinCounts;
    transactions: TransactionCounts | null; blockedKeys: BlockedKey[]; hotKeys: HotKeyLag[];
  } {
    return { engine: this.engine, ...this.delivery.metrics() };
  }

  /**
   * The offsets this consumer may commit now (below every message held or unhandled), each with its handled record:
   * what DynamicProducer.sendOffsetsToTransaction(undefined, consumer) sends.
   */
  transactionOffsets(): TransactionOffset[] {
    const partitions = [...this.delivery.assignment.owned.values(), ...this.delivery.assignment.revoking.values()];
    return this.delivery.commits.offsetsOf(partitions, false);
  }

  /** Incremental rebalancing (cooperative, and KIP-848's, which librdkafka reports as COOPERATIVE): only the partitions that move are touched. */
  private rebalance(err: any, assignment: TopicPartitionOffset[]): void {
    const cooperative = this.client.rebalanceProtocol() === 'COOPERATIVE';
    const list = assignment.map(({ topic, partition }) => ({ topic, partition }));
    if (err.code === this.library.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
      if (cooperative) this.client.incrementalAssign(assignment);
      else this.client.assign(assignment);
      if (this.throttle.paused && list.length > 0) this.client.pause(list);
      this.delivery.assignment.assigned(list);
    } else if (err.code === this.library.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
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

  private ended(failure: Error | undefined, commitError: unknown): void {
    this.throttle.paused = false;
    const runEnd = this.runEnd;
    this.runEnd = undefined;
    this.handler = undefined;
    this.batchHandler = undefined;
    this.transactions?.close();
    void this.deadLetters?.close();
    this.emit('stopped');
    if (failure) runEnd?.reject(failure);
    else if (commitError !== undefined) runEnd?.reject(commitError as Error);
    else runEnd?.resolve();
  }
}
