// DynamicConsumer: node-rdkafka's KafkaConsumer → Resequencer → the application.
//   - cooperative-sticky assignment (incremental assign / unassign on rebalance);
//   - each spread key's messages handed to the handler in produce order (src/delivery/resequencer.ts);
//     the resequencer is told which partitions this consumer owns, and fed the group's
//     committed offsets of the others it waits for (a key's handoff to another consumer);
//   - offsets committed only up to the lowest message not yet handled on each partition, so a
//     crash loses nothing (at-least-once);
//   - fetching held while the application is behind (and the partitions paused in librdkafka
//     when that lasts), resumed when it catches up;
//   - its client made in consumer-client.ts (the native engine's, or the client library's), the
//     hold of its fetching in fetch-hold.ts;
//   - a handler that fails is called again on the same message, in place; when it keeps
//     failing the consumer stops there and run() rejects (nothing skipped, at-least-once).

import { EventEmitter } from 'node:events';
import type * as Kafka from 'node-rdkafka';
import type { KafkaLibrary } from '../core/library';
import { Resequencer, type ConsumedMessage } from '../delivery/resequencer';
import { Dispatcher, type HandledInfo, partitionKey } from '../delivery/dispatch';
import { Commits, type TopicPartitionOffset } from './commits';
import { type CommittedOffset, HandledRecords, RECORD_COMMIT_MS, RECORD_READ_MS, type RecordCounts } from '../delivery/records';
import type { DynamicConsumerOptions, MessageHandler, BatchHandler } from './consumer-options';
import type { Config } from '../core/config';
import { CONSUMER_DEFAULTS, ResolvedConsumerOptions, resolveConsumerOptions } from '../core/options';
import { type Connectable, connectClient } from '../core/connect';
import { Lifecycle } from '../core/lifecycle';
import { makeConsumerClient } from './consumer-client';
import { FetchHold } from './fetch-hold';
import { type HandlerError, InvalidArgTypeError, StateError, timeoutError, toKafkaError } from '../core/errors';

export { CONSUMER_DEFAULTS };

/** How often the group's committed offsets are read while the resequencer awaits some (ms); with groupOrder 'wait', RECORD_READ_MS. */
const COMMITTED_READ_MS = 200;


export type { HandledInfo };
export type { DynamicConsumerOptions, MessageHandler, BatchHandler } from './consumer-options';

export class DynamicConsumer extends EventEmitter {
  readonly client: Kafka.KafkaConsumer;
  /** The engine under the consumer: the native batch engine, or the client library's KafkaConsumer. */
  readonly engine: 'native' | 'client';
  /** The client library (options.kafka, or node-rdkafka). */
  private readonly library: KafkaLibrary;
  readonly resequencer: Resequencer<Kafka.Message & ConsumedMessage>;
  private readonly options: ResolvedConsumerOptions;
  /** The released messages on their way to the handler, and the offsets that may be committed. */
  private readonly dispatch: Dispatcher<Kafka.Message & ConsumedMessage>;
  private readonly assigned = new Map<string, TopicPartitionOffset>();
  /** Partitions revoked whose handler calls under way are being waited for, before they go. */
  private readonly revoking = new Map<string, TopicPartitionOffset>();
  /** Partitions come here whose previous owner's record is being read, with what was fetched of them meanwhile. */
  private readonly inheriting = new Map<string, Array<Kafka.Message & ConsumedMessage>>();
  private handler: MessageHandler | undefined;
  private batchHandler: BatchHandler | undefined;
  /**
   * idle (new, or stopped) → connecting → connected → running → stopping → idle. A stopped
   * consumer may connect and run again: it resumes from the group's committed offsets.
   */
  private readonly life = new Lifecycle('idle');
  /** Fetching held while the handler is behind, and the partitions paused in librdkafka (fetch-hold.ts). */
  private readonly hold: FetchHold;
  /** The last consume call found nothing: the next one waits for a message (fetchTimeoutMs). */
  private fetchedNothing = true;
  /** A commit soon after a marked message was handled (handled records), pending. */
  private soonTimer: NodeJS.Timeout | undefined;
  /** Bumped when a run ends: a read of committed offsets of an earlier run is ignored. */
  private generation = 0;
  private timers: NodeJS.Timeout[] = [];
  /** Settle the promise run() returned. */
  private settle: { resolve: () => void; reject: (err: Error) => void } | undefined;
  /** Why the run ends, when a message's handler failed for good. */
  private failure: HandlerError | undefined;
  /** The commits, and the reads of the group's committed offsets. */
  private readonly commits: Commits;
  /** The handled records committed with the offsets and read back: on a client that commits metadata (the native engine). */
  private readonly records: HandledRecords<Kafka.Message & ConsumedMessage> | undefined;

  constructor(globalConfig: Config, topicConfig: Config = {}, options: DynamicConsumerOptions = {}) {
    super();
    if (typeof globalConfig !== 'object' || globalConfig === null) throw new InvalidArgTypeError('globalConfig', 'an object', globalConfig);
    if (typeof topicConfig !== 'object' || topicConfig === null) throw new InvalidArgTypeError('topicConfig', 'an object', topicConfig);
    this.options = resolveConsumerOptions(options);
    this.hold = new FetchHold(this.options.maxPending, {
      waiting: () => this.dispatch.waiting,
      partitions: () => (this.life.phase === 'running' ? [...this.assigned.values()].map(({ topic, partition }) => ({ topic, partition })) : []),
      pause: (partitions, paused) => (paused ? this.client.pause(partitions) : this.client.resume(partitions)),
      emit: (event) => this.emit(event),
      warn: (err) => this.emit('warning', err),
      fetch: () => this.fetch(),
    });
    this.resequencer = new Resequencer(this.options.resequencer ?? {}, () => this.hold.clock());
    this.dispatch = new Dispatcher(this.resequencer, this.options.handlerRetries, this.options.retryBackoffMs, {
      handle: (message, info) => this.handler!(message, info),
      handleBatch: (messages, infos) => this.batchHandler!(messages, infos),
      owns: (tp) => this.assigned.has(tp),
      // Reported as 'handlerError' events, never 'error' (which kills a process that has no listener for it).
      handlerError: (error, message) => this.emit('handlerError', error, message),
      fail: (error) => this.fail(error),
      progress: () => this.hold.progress(),
      handledMarked: () => this.commitSoon(),
    });
    this.dispatch.concurrency = this.options.concurrency;
    this.dispatch.ordering = this.options.ordering;
    const made = makeConsumerClient(globalConfig, topicConfig, options, this.options, (err, assignment) => this.rebalance(err, assignment));
    this.client = made.client;
    this.engine = made.engine;
    this.library = made.library;
    this.client.on('event.error', (err) => this.emit('error', toKafkaError(err, 'librdkafka')));
    if (this.engine === 'native') {
      // The native engine commits metadata: members share what they handled (docs/ordering.md).
      this.records = new HandledRecords(this.dispatch, this.resequencer, (err) => this.emit('warning', err));
      this.resequencer.keepRecords();
      if (this.groupOrder === 'wait') this.resequencer.useRecords();
    }
    this.commits = new Commits(this.client, this.dispatch, this.resequencer, (event, value) => this.emit(event, value), () => this.hold.behind(), this.records);
    (this.client as any).on('offset.commit', (err: any, offsets: TopicPartitionOffset[]) => this.commits.done(err, offsets, true));
  }

  /** options.groupOrder as it applies: 'auto' is 'wait' on the native engine (its commits carry the records), 'flag' on engine 'client'. */
  get groupOrder(): 'flag' | 'wait' {
    const asked = this.options.groupOrder;
    return asked !== 'auto' ? asked : this.engine === 'native' ? 'wait' : 'flag';
  }

  /** Connects the client; a StateError unless the consumer is new or stopped. */
  connect(timeoutMs = 30_000): Promise<void> {
    return this.life.connect(() => connectClient(this.client as unknown as Connectable, timeoutMs));
  }

  /**
   * Subscribes to `topics` and hands every message to `handler`, one at a time (or up to
   * `concurrency` at once, as `ordering` allows): spread keys in
   * produce order, everything else as it comes. A handler that throws or rejects gets the same
   * message again, up to `handlerRetries` times, before anything else of its key (or partition); then the consumer
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
    if (this.life.phase === 'idle') throw new StateError('run() before connect()');
    if (this.life.phase === 'connecting') throw new StateError('run() before connect() resolved');
    if (this.life.phase !== 'connected') throw new StateError(`run() while ${this.life.phase}`);
    if (!this.client.isConnected()) throw new StateError('run() while the client is disconnected');
    try {
      this.client.subscribe(topics);
    } catch (err: any) {
      throw toKafkaError(err, 'subscribe');
    }
    this.handler = handler;
    this.batchHandler = batchHandler;
    this.dispatch.batchLimit = batchHandler === undefined ? 0 : this.options.handlerBatchSize;
    this.failure = undefined;
    this.life.phase = 'running';
    this.timers.push(setInterval(() => this.commits.commit(this.assigned.values(), false), this.options.commitIntervalMs));
    this.timers.push(setInterval(() => this.commits.readCommitted(), this.groupOrder === 'wait' ? RECORD_READ_MS : COMMITTED_READ_MS));
    this.timers.push(setInterval(() => {
      this.accept(this.resequencer.expire());
    }, Math.max(10, Math.min(1000, this.resequencer.options.maxWaitMs / 4))));
    const done = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.fetch();
    return done;
  }

  private fetch(): void {
    if (this.life.phase !== 'running') return;
    // The handler is behind: the hold says whether this call waits (fetch-hold.ts).
    if (this.hold.holds()) return;
    // Also while paused (the partitions are paused in librdkafka, so nothing new comes): a
    // consume call is what serves rebalance callbacks, and keeps max.poll.interval.ms.
    // node-rdkafka's consume(n) (3.6, src/workers.cc) waits up to its timeout for EACH message
    // until it has n: on a steady stream it returns only once n arrived, so a batch of 500
    // at a few hundred messages a second held its first message back more than a second. So
    // a call takes what librdkafka has queued without waiting (timeout 0), and only after one
    // that found nothing does the next wait, up to fetchTimeoutMs, for a single message.
    const wait = this.fetchedNothing;
    this.client.setDefaultConsumeTimeout(wait ? this.options.fetchTimeoutMs : 0);
    this.client.consume(wait ? 1 : this.options.batchSize, (err, messages) => {
      if (this.life.phase !== 'running') return; // stopping: what came in is read again from the committed offsets
      if (err) {
        this.fetchedNothing = true;
        this.emit('error', toKafkaError(err, 'consume'));
      } else {
        this.fetchedNothing = messages.length === 0;
        for (const m of messages) {
          const name = partitionKey(m.topic, m.partition);
          if (!this.assigned.has(name)) continue; // revoked meanwhile
          // Fetched before the pause took hold: it waits for the record, as the partition does.
          const early = this.inheriting.get(name);
          if (early !== undefined) {
            early.push(m as Kafka.Message & ConsumedMessage);
            this.records?.fetchedEarly();
          } else this.offer(m as Kafka.Message & ConsumedMessage);
        }
      }
      setImmediate(() => this.fetch());
    });
  }

  /** A message read: through the resequencer to the handler (the Dispatcher's offer()); fetching holds if the handler fell behind. */
  private offer(m: Kafka.Message & ConsumedMessage): void {
    this.dispatch.offer(m);
    this.hold.behind();
  }

  private accept(released: Parameters<Dispatcher<Kafka.Message & ConsumedMessage>['accept']>[0]): void {
    this.dispatch.accept(released);
    this.hold.behind();
  }

  /**
   * A message's handler failed for good: nothing more is handled, and the consumer stops.
   * What was queued stays in `unhandled`, so the stop commits below it (and below the failed
   * message) on every partition; run() rejects with `error`.
   */
  private fail(error: HandlerError): void {
    this.failure = error;
    // run() rejects with `error`; a failed final commit was emitted as 'error' already.
    this.stop(0).catch(() => undefined);
  }

  /**
   * What the consumer holds and does now: messages held by the resequencer, waiting for a
   * handler call and in calls, and its handled records' costs (null on a client that commits no
   * metadata, engine 'client'): records committed and their characters, records shortened to
   * fit the broker's limit, reads of other members' records, foreign metadata ignored,
   * messages not handed out again after a restart or rebalance.
   */
  metrics(): { engine: 'native' | 'client'; held: number; waiting: number; inFlight: number; records: RecordCounts | null } {
    return { engine: this.engine, held: this.resequencer.held, waiting: this.dispatch.waiting, inFlight: this.dispatch.inFlight, records: this.records?.metrics() ?? null };
  }

  /**
   * A marked message was handled: a member of the group may wait for it, so the records are
   * committed within RECORD_COMMIT_MS (longer when making records is costly: soonDelay())
   * rather than at the next commitIntervalMs (or as soon as the commit under way is back).
   */
  private commitSoon(): void {
    if (this.groupOrder !== 'wait' || this.soonTimer !== undefined || this.life.phase !== 'running') return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      this.commits.commitSoon(() => (this.life.phase === 'running' ? this.assigned.values() : []));
    }, this.records?.soonDelay() ?? RECORD_COMMIT_MS);
  }

  /**
   * @internal The size of each table and the options that bound them, for bench/soak/tables.js
   * (read at sampling time, never on the message path): the Dispatcher's tables, the partitions
   * assigned, the handler queue.
   */
  tableSizes(): ReturnType<Dispatcher<ConsumedMessage>['tableSizes']> & { assigned: number; queue: number; options: Readonly<ResolvedConsumerOptions> } {
    return { ...this.dispatch.tableSizes(), assigned: this.assigned.size, queue: this.dispatch.waiting + this.dispatch.inFlight, options: this.options };
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    return this.dispatch.safeOffset(topic, partition);
  }

  /**
   * Forgets partitions that leave: what is held or not yet handled of them is dropped (their
   * next owner reads it again from the committed offset), and nothing remembered of them is
   * committed if they come back.
   */
  private forget(partitions: TopicPartitionOffset[]): void {
    for (const { topic, partition } of partitions) {
      this.assigned.delete(partitionKey(topic, partition));
      this.inheriting.delete(partitionKey(topic, partition));
    }
    this.dispatch.forget(partitions);
  }

  /** Incremental (cooperative) rebalancing: only the partitions that move are touched. */
  private rebalance(err: any, assignment: TopicPartitionOffset[]): void {
    const cooperative = this.client.rebalanceProtocol() === 'COOPERATIVE';
    if (err.code === this.library.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
      for (const tp of assignment) this.assigned.set(partitionKey(tp.topic, tp.partition), { topic: tp.topic, partition: tp.partition });
      this.dispatch.assign(assignment);
      if (cooperative) this.client.incrementalAssign(assignment);
      else this.client.assign(assignment);
      const list = assignment.map(({ topic, partition }) => ({ topic, partition }));
      // With handled records, nothing of the partitions is taken before their previous owner's record is read.
      if (this.hold.paused || (this.records !== undefined && list.length > 0)) this.client.pause(list);
      if (this.records !== undefined && list.length > 0) {
        for (const { topic, partition } of list) {
          const name = partitionKey(topic, partition);
          if (!this.inheriting.has(name)) this.inheriting.set(name, []);
        }
        this.inherit(list);
      }
      this.emit('assigned', assignment);
    } else if (err.code === this.library.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
      // Nothing more of the partitions leaving is handed out; handler calls of theirs under way
      // may end (up to revokeTimeoutMs), then what is safe is committed (stop() already did,
      // if stopping) and the partitions go. What was not handled is read again by their next
      // owner (at-least-once), which starts after this consumer's calls of them ended.
      for (const tp of assignment) {
        const name = partitionKey(tp.topic, tp.partition);
        this.assigned.delete(name);
        this.revoking.set(name, { topic: tp.topic, partition: tp.partition });
      }
      this.dispatch.drop(assignment);
      const generation = this.generation;
      const handOver = (): void => {
        // Stopped meanwhile (and maybe run again): the stop committed and forgot these
        // partitions, and a next run may own them again. While the stop is still under way
        // they are let go of here, as before.
        if (generation !== this.generation && this.life.phase !== 'stopping') return;
        if (this.life.phase === 'running') this.commits.commit(assignment, true);
        for (const { topic, partition } of assignment) this.revoking.delete(partitionKey(topic, partition));
        this.forget(assignment);
        try {
          if (cooperative) this.client.incrementalUnassign(assignment);
          else this.client.unassign();
        } catch (e) {
          // The client is disconnecting (stop() under way): the partitions go with it.
          if (this.life.phase === 'running') this.emit('warning', toKafkaError(e, 'unassign'));
        }
        this.emit('revoked', assignment);
      };
      if (this.dispatch.inFlight === 0) handOver();
      else void this.dispatch.settled(assignment, this.options.revokeTimeoutMs).then(handOver);
    } else {
      this.emit('error', toKafkaError(err, 'rebalance'));
    }
  }

  /**
   * Reads the records the partitions coming here were committed with (their previous owner's),
   * so that what it handled is not handed out again, then resumes them. A failed read is a
   * 'warning': they are resumed without it (what was handled above the offset comes again).
   */
  private inherit(list: Array<{ topic: string; partition: number }>): void {
    const generation = this.generation;
    this.commits.committedOf(list, (err, offsets) => {
      if (generation !== this.generation || this.life.phase !== 'running') return;
      if (err) this.emit('warning', toKafkaError(err, 'committed'));
      else this.accept(this.records!.inherit((offsets ?? []) as CommittedOffset[]));
      for (const { topic, partition } of list) {
        const name = partitionKey(topic, partition);
        const early = this.inheriting.get(name);
        this.inheriting.delete(name);
        if (early !== undefined && this.assigned.has(name)) for (const m of early) this.offer(m);
      }
      const mine = list.filter(({ topic, partition }) => this.assigned.has(partitionKey(topic, partition)));
      if (this.hold.paused || mine.length === 0) return;
      try {
        this.client.resume(mine);
      } catch (e) {
        this.emit('warning', toKafkaError(e, 'resume'));
      }
    });
  }

  /**
   * Stops fetching, lets the handler finish what was released (for up to `timeoutMs`; what
   * is left then is not handled, and read again on the next start), commits, and
   * disconnects. A consumer connected but not running just disconnects; one not connected
   * has nothing to stop. The consumer may then connect() and run() again.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    const bad = timeoutError('timeoutMs', timeoutMs, true);
    if (bad !== undefined) return Promise.reject(bad);
    return this.life.stop((running) => this.halt(running, timeoutMs));
  }

  private async halt(running: boolean, timeoutMs: number): Promise<void> {
    let commitError: unknown;
    if (running) {
      await this.dispatch.finish(timeoutMs, () => this.failure !== undefined);
      // What is still queued stays in `unhandled`: the commit below stays under it.
      this.dispatch.halt();
      this.generation++;
      this.commits.reset();
      for (const timer of this.timers) clearInterval(timer);
      this.timers = [];
      this.hold.stop();
      if (this.soonTimer !== undefined) clearTimeout(this.soonTimer);
      this.soonTimer = undefined;
      try {
        // With the partitions revoked whose calls were still waited for: they are still ours.
        this.commits.commit([...this.assigned.values(), ...this.revoking.values()], true);
      } catch (err) {
        // Thrown by an 'error' event without a listener: the consumer still disconnects, and
        // what this commit would have covered is read again by the next owner.
        commitError = err;
      }
    }
    // node-rdkafka (3.6, lib/client.js) never calls back a disconnect() made while one is under way.
    await new Promise<void>((resolve) => this.client.disconnect(() => resolve()));
    // The next run starts from the committed offsets, with nothing remembered of this one's partitions.
    this.forget([...this.assigned.values(), ...this.revoking.values()]);
    this.revoking.clear();
    this.dispatch.clear();
    this.hold.paused = false;
    this.life.ended();
    const settle = this.settle;
    const failure = this.failure;
    this.settle = undefined;
    this.handler = undefined;
    this.batchHandler = undefined;
    this.emit('stopped');
    if (failure) settle?.reject(failure);
    else if (commitError !== undefined) settle?.reject(commitError as Error);
    else settle?.resolve();
    if (commitError !== undefined) throw commitError;
  }
}
