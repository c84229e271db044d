// Order restoration for the KafkaJS-compatible API of Confluent's client
// (@confluentinc/kafka-javascript 1.x, `new KafkaJS.Kafka(...).consumer()`): what DynamicConsumer
// does for node-rdkafka's KafkaConsumer, over that consumer's own run().
//
// How offsets are kept (lib/kafkajs/_consumer.js, 1.10): the consumer must be configured with
// autoCommit false. Otherwise librdkafka commits, every autoCommitInterval, the offsets the
// consumer stores as its eachMessage / eachBatch calls return (or resolveOffset() is called):
// past messages the Resequencer still holds, which a crash would lose. resolveOffset() cannot
// stand in for our commits either: a partition's safe offset moves when a message of ANOTHER
// partition arrives (the predecessor its held messages waited for), outside that partition's
// batch, and resolveOffset reaches only the current batch's partition, forward; a batch left
// unresolved is sought back and fetched again (pushed to the Resequencer twice). So the
// consumer is run with eachBatch and eachBatchAutoResolve false, each batch resolved whole as
// soon as it is in the Resequencer (nothing is sought back), and this wrapper commits with
// commitOffsets([{ topic, partition, offset, metadata }]): explicit offsets, below every message
// held or not yet handled (Dispatcher.safeOffset), each with its partition's handled record as
// DynamicConsumer's native engine commits it (docs/ordering.md, "Order in a group"); on revoke
// synchronously, with the consumer's own client's commitSync(), before the consumer unassigns
// the partitions (the commits, and the reads of the group's committed offsets and records, in
// commits.ts). A partition coming here hands out nothing before its previous owner's record
// is read: its first batch waits for that read.
//
// Rebalances: that consumer takes a rebalance_cb only from the config it was built with, so
// the assignment changes are read from its internal client's 'rebalance' events (emitted
// before it assigns or unassigns; twice per change in 1.10, which the handling below
// tolerates). Its stop() is not implemented (it throws), and a consumer connects once: stop()
// here ends the run the one way that consumer allows, by disconnecting it.

import { EventEmitter } from 'node:events';
import { Resequencer, type ConsumedMessage } from '../consumer/resequencer';
import { Dispatcher, type PartitionOffset, partitionKey } from '../consumer/dispatch';
import { KafkaJsCommits } from './commits';
import type {
  Consumed, InternalClient, KafkaJsBatchPayload, KafkaJsConsumerLike, KafkaJsConsumerOptions, KafkaJsEachMessage, KafkaJsEachMessagePayload,
  KafkaJsRunConfig, KafkaJsSubscription,
} from './consumer-types';
import { HandledRecords, RECORD_COMMIT_MS, RECORD_READ_MS, type RecordCounts } from '../consumer/records';
import { resolveKafkaJsConsumerOptions, type ResolvedKafkaJsConsumerOptions } from '../core/options';
import { type HandlerError, InvalidArgTypeError, InvalidOptionError, KafkaError, StateError, timeoutError, toKafkaError } from '../core/errors';
import { Lifecycle } from '../core/lifecycle';
import { warnIfBothLoaded } from '../core/library';

export type {
  KafkaJsConsumedMessage, KafkaJsConsumerLike, KafkaJsConsumerOptions, KafkaJsEachMessage, KafkaJsEachMessagePayload, KafkaJsRunConfig,
  KafkaJsSubscription,
} from './consumer-types';

// librdkafka's codes of a rebalance callback.
const ERR__ASSIGN_PARTITIONS = -175;
const ERR__REVOKE_PARTITIONS = -174;

/** How often the group's committed offsets are read while the resequencer awaits some (ms). */
const COMMITTED_READ_MS = 200;

const NO_HEARTBEAT = async (): Promise<void> => {};

export declare interface KafkaJsDynamicConsumer {
  /** One failed call of eachMessage (it gets the message again unless the retries are used up). */
  on(event: 'handlerError', listener: (err: HandlerError, payload: KafkaJsEachMessagePayload) => void): this;
  /** The run ended (stop(), or `error`: the retries on a message were used up); the consumer is disconnected. */
  on(event: 'stopped', listener: (error: HandlerError | undefined) => void): this;
  on(event: 'assigned' | 'revoked', listener: (partitions: Array<{ topic: string; partition: number }>) => void): this;
  on(event: 'committed', listener: (offsets: PartitionOffset[]) => void): this;
  /** A KafkaError: a commit refused on revoke while the group rebalances, or a failed read of committed offsets. */
  on(event: 'warning', listener: (err: KafkaError) => void): this;
  /** A KafkaError: a commit that failed (made again next time). */
  on(event: 'error', listener: (err: KafkaError) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
}

/** A KafkaJS-API consumer whose messages reach the application through a Resequencer. */
export class KafkaJsDynamicConsumer extends EventEmitter {
  readonly consumer: KafkaJsConsumerLike;
  readonly resequencer: Resequencer<Consumed>;
  private readonly options: ResolvedKafkaJsConsumerOptions;
  private readonly dispatch: Dispatcher<Consumed>;
  private readonly assigned = new Map<string, { topic: string; partition: number }>();
  /** idle → connecting → connected → running → stopping → stopped (a consumer of this API connects once). */
  private readonly life = new Lifecycle('stopped');
  private client: InternalClient | null = null;
  private eachMessage: KafkaJsEachMessage | undefined;
  private timers: NodeJS.Timeout[] = [];
  /** Why the run ended, when eachMessage failed for good on a message. */
  private failure: HandlerError | undefined;
  /** The commits, and the reads of the group's committed offsets. */
  private readonly commits: KafkaJsCommits<Consumed>;
  /** The handled records committed with the offsets and read back (docs/ordering.md). */
  private readonly records: HandledRecords<Consumed>;
  /** Partitions come here whose previous owner's record is being read: their batches wait for it. */
  private readonly inheriting = new Map<string, Promise<void>>();
  /** options.groupOrder as it applies ('auto' is 'wait': this consumer's commits carry the records). */
  readonly groupOrder: 'flag' | 'wait';
  /** A commit soon after a marked message was handled (groupOrder 'wait'), pending. */
  private soonTimer: NodeJS.Timeout | undefined;
  /** eachBatch waits on this while the queue is full (maxPending). */
  private drained: (() => void) | undefined;
  /** The resequencer's clock stands still while eachBatch waits for the application (see DynamicConsumer). */
  private waitingSince = 0;
  private waitedFor = 0;
  private readonly onRebalance = (err: { code?: number } | undefined, assignment: Array<{ topic: string; partition: number }>) => this.rebalance(err, assignment);

  constructor(consumer: KafkaJsConsumerLike, options: KafkaJsConsumerOptions = {}) {
    super();
    if (typeof consumer !== 'object' || consumer === null || typeof consumer.connect !== 'function' || typeof consumer.run !== 'function' ||
      typeof consumer.commitOffsets !== 'function' || typeof consumer.committed !== 'function' || typeof consumer._getInternalClient !== 'function') {
      throw new InvalidArgTypeError('consumer', "Confluent's KafkaJS consumer (new KafkaJS.Kafka(config).consumer(...))", consumer);
    }
    this.options = resolveKafkaJsConsumerOptions(options);
    this.groupOrder = this.options.groupOrder === 'flag' ? 'flag' : 'wait';
    this.consumer = consumer;
    this.resequencer = new Resequencer<Consumed>(this.options.resequencer ?? {}, () => this.clock());
    this.dispatch = new Dispatcher(this.resequencer, this.options.handlerRetries, this.options.retryBackoffMs, {
      handle: (m, info) => this.eachMessage!({ topic: m.topic, partition: m.partition, message: m.message, heartbeat: NO_HEARTBEAT }, info),
      owns: (tp) => this.assigned.has(tp),
      handlerError: (error, m) => this.emit('handlerError', error, { topic: m.topic, partition: m.partition, message: m.message, heartbeat: NO_HEARTBEAT }),
      fail: (error) => {
        this.failure = error;
        this.stop(0).catch(() => undefined); // a failed final commit was emitted as 'error' already
      },
      progress: () => {
        if (this.drained !== undefined && this.dispatch.waiting <= this.options.maxPending / 2) this.wake();
      },
      handledMarked: () => this.commitSoon(),
    });
    this.dispatch.ordering = this.options.ordering;
    this.records = new HandledRecords(this.dispatch, this.resequencer, (err) => this.emit('warning', err));
    this.resequencer.keepRecords();
    if (this.groupOrder === 'wait') this.resequencer.useRecords();
    this.commits = new KafkaJsCommits(consumer, this.dispatch, this.resequencer, this.records, {
      running: () => this.life.phase === 'running',
      client: () => this.client,
      emit: (event: string, value: unknown) => this.emit(event, value),
      hasErrorListener: () => this.listenerCount('error') > 0,
    });
    warnIfBothLoaded();
  }

  /**
   * Connects the consumer (unless it is connected already). A consumer configured to commit by
   * itself (kafkaJS.autoCommit, or enable.auto.commit, not false) is disconnected again and
   * refused with an InvalidOptionError: it would commit past messages still held.
   */
  connect(): Promise<void> {
    return this.life.connect(async () => {
      try {
        const client = this.consumer._getInternalClient();
        if (!client || client.isConnected?.() !== true) await this.consumer.connect();
      } catch (err) {
        throw toKafkaError(err, 'connect');
      }
      const client = this.consumer._getInternalClient();
      const autoCommit = client?.globalConfig?.['enable.auto.commit'];
      if (!client || typeof client.on !== 'function' || autoCommit !== false) {
        this.life.phase = 'stopped';
        await this.consumer.disconnect().catch(() => undefined);
        if (!client || typeof client.on !== 'function') throw new StateError("the consumer has no internal client after connect() (not Confluent's KafkaJS consumer?)");
        throw new InvalidOptionError("the consumer's kafkaJS.autoCommit", 'false (or enable.auto.commit false): offsets are committed here, only below what was handled', autoCommit ?? 'absent (librdkafka commits by itself by default)');
      }
      this.client = client;
      client.on('rebalance', this.onRebalance);
    });
  }

  /** The consumer's subscribe(): `{ topic }` or `{ topics }` (names, or RegExps starting with ^), `replace`. */
  async subscribe(subscription: KafkaJsSubscription): Promise<void> {
    if (typeof subscription !== 'object' || subscription === null) throw new InvalidArgTypeError('subscription', 'an object with topic or topics', subscription);
    const topicOk = (t: unknown) => (typeof t === 'string' && t.length > 0) || t instanceof RegExp;
    const { topic, topics } = subscription;
    if (topics !== undefined) {
      if (!Array.isArray(topics) || topics.length === 0 || !topics.every(topicOk)) throw new InvalidArgTypeError('subscription.topics', 'a non-empty array of topic names (or RegExps)', topics);
    } else if (!topicOk(topic)) {
      throw new InvalidArgTypeError('subscription.topic', 'a topic name (or a RegExp), when subscription.topics is absent', topic);
    }
    if (this.life.phase !== 'connected' && this.life.phase !== 'running') throw new StateError(`subscribe() while ${this.life.phase}`);
    try {
      await this.consumer.subscribe(subscription);
    } catch (err) {
      throw toKafkaError(err, 'subscribe');
    }
  }

  /**
   * Starts the consumer's run(): each message goes through the Resequencer to `eachMessage`,
   * one at a time (up to partitionsConsumedConcurrently at once, one per key by default),
   * spread keys in produce order. Resolves once started (as the consumer's own
   * run()); the run ends with stop(), or when eachMessage keeps failing on a message (the
   * 'stopped' event then carries the HandlerError). Only `eachMessage` is taken: see
   * docs/consumer.md for why not eachBatch.
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
    if (this.life.phase !== 'connected') throw new StateError(`run() while ${this.life.phase}`);
    this.eachMessage = config.eachMessage;
    this.dispatch.concurrency = concurrency;
    this.life.phase = 'running';
    this.timers.push(setInterval(() => this.commits.commitHandled(() => this.assigned.values()), this.options.commitIntervalMs));
    this.timers.push(setInterval(() => this.commits.readCommitted(), this.groupOrder === 'wait' ? RECORD_READ_MS : COMMITTED_READ_MS));
    this.timers.push(setInterval(() => {
      this.dispatch.accept(this.resequencer.expire());
    }, Math.max(10, Math.min(1000, this.resequencer.options.maxWaitMs / 4))));
    try {
      await this.consumer.run({ eachBatch: (payload) => this.batch(payload), eachBatchAutoResolve: false });
    } catch (err) {
      this.clearTimers();
      this.life.phase = 'connected';
      throw toKafkaError(err, 'run');
    }
  }

  /** The consumer's eachBatch: the messages into the Resequencer, what it releases queued for eachMessage. */
  private async batch(payload: KafkaJsBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    // Resolved at once, whatever happens below: the consumer then never seeks back to read a
    // message again that the Resequencer has (its stored offsets are not what is committed).
    if (messages.length > 0) payload.resolveOffset(messages[messages.length - 1].offset);
    // The partition just came here: nothing of it goes before its previous owner's record is read.
    const name = partitionKey(topic, partition);
    const inheriting = this.inheriting.get(name);
    if (inheriting !== undefined) {
      this.records.fetchedEarly(messages.length);
      await inheriting;
    }
    // Stopping (what came is read again from the committed offsets), or revoked meanwhile.
    if (this.life.phase !== 'running' || !this.assigned.has(name)) return;
    for (const message of messages) {
      const m: Consumed = { topic, partition, offset: Number(message.offset), key: message.key, value: message.value, size: message.size, headers: message.headers as ConsumedMessage['headers'], message };
      this.dispatch.accept(this.resequencer.push(m));
    }
    if (this.dispatch.waiting >= this.options.maxPending) {
      this.waitingSince = Date.now();
      await new Promise<void>((resolve) => {
        this.drained = resolve;
      });
    }
  }

  /** eachBatch goes on (the queue is down to half, or the run stops). */
  private wake(): void {
    const drained = this.drained;
    this.drained = undefined;
    if (this.waitingSince > 0) {
      this.waitedFor += Date.now() - this.waitingSince;
      this.waitingSince = 0;
    }
    drained?.();
  }

  private clock(): number {
    return (this.waitingSince > 0 ? this.waitingSince : Date.now()) - this.waitedFor;
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    return this.dispatch.safeOffset(topic, partition);
  }

  /** The consumer's assignment changes (its internal client's 'rebalance' events; each may come twice). */
  private rebalance(err: { code?: number } | undefined, assignment: Array<{ topic: string; partition: number }>): void {
    const partitions = (assignment ?? []).map(({ topic, partition }) => ({ topic, partition }));
    if (err?.code === ERR__ASSIGN_PARTITIONS) {
      const fresh = partitions.filter(({ topic, partition }) => !this.assigned.has(partitionKey(topic, partition)));
      for (const tp of fresh) this.assigned.set(partitionKey(tp.topic, tp.partition), tp);
      this.dispatch.assign(fresh);
      if (fresh.length > 0) {
        this.inherit(fresh);
        this.emit('assigned', fresh);
      }
    } else if (err?.code === ERR__REVOKE_PARTITIONS) {
      const leaving = partitions.filter(({ topic, partition }) => this.assigned.has(partitionKey(topic, partition)));
      if (leaving.length === 0) return;
      // Commit what is safe of the partitions leaving (stop() already did, if stopping); what is
      // held or queued of them is dropped and read again by their next owner (at least once).
      // Synchronously, on the consumer's own client: done before the consumer unassigns them, so
      // their next owner starts where this one left off (an asynchronous commit could land after
      // it has read the older committed offset, and it would handle again what was committed).
      if (this.life.phase === 'running') {
        const offsets = this.commits.offsetsOf(leaving, false);
        if (offsets.length > 0) this.commits.commitOnRevoke(offsets);
      }
      for (const { topic, partition } of leaving) {
        this.assigned.delete(partitionKey(topic, partition));
        this.inheriting.delete(partitionKey(topic, partition));
      }
      this.dispatch.forget(leaving);
      this.emit('revoked', leaving);
    }
  }

  /**
   * Reads the records the partitions coming here were committed with (their previous owner's),
   * so that what it handled is not handed out again; their batches wait for it. A failed read
   * is a 'warning': they go on without it (what was handled above the offset comes again).
   */
  private inherit(partitions: Array<{ topic: string; partition: number }>): void {
    const read = this.commits.committedOf(partitions).then((offsets) => {
      if (this.life.phase === 'running') this.dispatch.accept(this.records.inherit(offsets));
    }, (err) => {
      if (this.life.phase === 'running') this.emit('warning', toKafkaError(err, 'committed'));
    }).finally(() => {
      for (const { topic, partition } of partitions) {
        const name = partitionKey(topic, partition);
        if (this.inheriting.get(name) === read) this.inheriting.delete(name);
      }
    });
    for (const { topic, partition } of partitions) this.inheriting.set(partitionKey(topic, partition), read);
  }

  /**
   * A marked message was handled: with groupOrder 'wait' a member of the group may wait for it,
   * so the records are committed within RECORD_COMMIT_MS rather than at the next commitIntervalMs.
   */
  private commitSoon(): void {
    if (this.groupOrder !== 'wait' || this.soonTimer !== undefined || this.life.phase !== 'running') return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      this.commits.commitHandled(() => this.assigned.values());
    }, RECORD_COMMIT_MS);
  }

  /**
   * What the consumer holds and does now: messages held by the resequencer, waiting for
   * eachMessage and in calls, and its handled records' costs (DynamicConsumer's metrics()).
   */
  metrics(): { held: number; waiting: number; inFlight: number; records: RecordCounts } {
    return { held: this.resequencer.held, waiting: this.dispatch.waiting, inFlight: this.dispatch.inFlight, records: this.records.metrics() };
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    if (this.soonTimer !== undefined) clearTimeout(this.soonTimer);
    this.soonTimer = undefined;
  }

  /**
   * Ends the run: nothing more is handed out once eachMessage has finished what was released
   * (for up to `timeoutMs`; what is left then is read again on the next start), the safe
   * offsets are committed, and the consumer is disconnected (Confluent's consumer has no
   * stop(), and connects once: a new run needs a new consumer). Rejects with a KafkaError when
   * that final commit fails (after disconnecting). Nothing to do on a consumer never connected.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    const bad = timeoutError('timeoutMs', timeoutMs, true);
    if (bad !== undefined) return Promise.reject(bad);
    return this.life.stop((running) => this.halt(running, timeoutMs));
  }

  /** The same as stop(). */
  disconnect(timeoutMs?: number): Promise<void> {
    return this.stop(timeoutMs);
  }

  private async halt(running: boolean, timeoutMs: number): Promise<void> {
    let commitError: unknown;
    this.wake();
    if (running) {
      await this.dispatch.finish(timeoutMs, () => this.failure !== undefined);
      // What is still queued stays in `unhandled`: the commit below stays under it.
      this.dispatch.halt();
      this.clearTimers();
      await this.commits.settled();
      const offsets = this.commits.offsetsOf(this.assigned.values(), false);
      if (offsets.length > 0) {
        try {
          await this.commits.commit(offsets, false);
        } catch (err) {
          commitError = err;
        }
      }
    }
    this.client?.removeListener('rebalance', this.onRebalance);
    try {
      await this.consumer.disconnect();
    } catch (err) {
      commitError ??= toKafkaError(err, 'disconnect');
    }
    this.dispatch.forget([...this.assigned.values()]);
    this.assigned.clear();
    this.inheriting.clear();
    this.dispatch.clear();
    this.life.ended();
    this.eachMessage = undefined;
    this.emit('stopped', this.failure);
    if (commitError !== undefined) throw commitError;
  }
}

/**
 * Wraps a consumer of Confluent's KafkaJS-compatible API (`new KafkaJS.Kafka(config).consumer({
 * kafkaJS: { groupId, autoCommit: false, ... } })`) so that its messages reach `eachMessage` in
 * restored order, with the offsets committed only below what was handled; use the wrapper's
 * connect / subscribe / run / stop (or disconnect) instead of the consumer's.
 */
export function wrapKafkaJsConsumer(consumer: KafkaJsConsumerLike, options: KafkaJsConsumerOptions = {}): KafkaJsDynamicConsumer {
  return new KafkaJsDynamicConsumer(consumer, options);
}
