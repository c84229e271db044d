// Order restoration for consumers of the KafkaJS API: Confluent's KafkaJS-compatible client
// (@confluentinc/kafka-javascript 1.x, `new KafkaJS.Kafka(...).consumer()`) and KafkaJS 2.x's
// own (`new Kafka({...}).consumer({ groupId })`, tested with 2.2.4): what DynamicConsumer does
// for node-rdkafka's KafkaConsumer, over that consumer's own run(). What differs between the
// two clients is their host (consumer-host.ts: host-confluent.ts, host-kafkajs.ts); the rest is
// one adapter.
//
// How offsets are kept: the consumer commits nothing by itself (Confluent's must be configured
// with autoCommit false; KafkaJS's is run with it): it would commit, as eachBatch returns, past
// messages the Resequencer still holds, which a crash would lose. resolveOffset() cannot stand
// in for our commits either: a partition's safe offset moves when a message of ANOTHER
// partition arrives (the predecessor its held messages waited for), outside that partition's
// batch, and resolveOffset reaches only the current batch's partition, forward; a batch left
// unresolved is fetched again (pushed to the Resequencer twice). So the consumer is run with
// eachBatch and eachBatchAutoResolve false, each batch resolved whole as soon as it is taken,
// and this wrapper commits with commitOffsets([{ topic, partition, offset, metadata }]):
// explicit offsets, below every message held or not yet handled (Dispatcher.safeOffset), each
// with its partition's handled record as DynamicConsumer's native engine commits it
// (docs/ordering.md, "Order in a group"; commits.ts). A partition coming here hands out nothing
// before its previous owner's record is read: its first batch waits for that read
// (consumer-assignment.ts, which also says what each assignment change does).
//
// Stopping: Confluent's stop() is not implemented (it throws) and it connects once: stop() here
// disconnects it. KafkaJS's stops and runs again: stop() ends the run, disconnect() closes it.

import { EventEmitter } from 'node:events';
import { Resequencer, type ConsumedMessage } from '../delivery/resequencer';
import { Dispatcher, type PartitionOffset, partitionKey } from '../delivery/dispatch';
import { KafkaJsCommits } from './commits';
import type {
  Consumed, KafkaJsBatchPayload, KafkaJsConsumerLike, KafkaJsConsumerOptions, KafkaJsEachMessage, KafkaJsEachMessagePayload,
  KafkaJsRunConfig, KafkaJsSubscription,
} from './consumer-types';
import type { ConsumerHost } from './consumer-host';
import { ConfluentHost, isConfluentConsumer } from './host-confluent';
import { KafkaJsHost, isKafkaJs2Consumer, kafkaJsError } from './host-kafkajs';
import { Assignment, type RejoinCounts } from './consumer-assignment';
import { HandledRecords, RECORD_READ_MS, type RecordCounts } from '../delivery/records';
import { resolveKafkaJsConsumerOptions, type ResolvedKafkaJsConsumerOptions } from '../core/options';
import { type HandlerError, InvalidArgTypeError, InvalidOptionError, KafkaError, StateError, timeoutError, toKafkaError } from '../core/errors';
import { Lifecycle } from '../core/lifecycle';
import { warnIfBothLoaded } from '../core/library';
import { within } from '../core/time';

export type {
  KafkaJsConsumedMessage, KafkaJsConsumerLike, KafkaJsConsumerOptions, KafkaJsEachMessage, KafkaJsEachMessagePayload, KafkaJsRunConfig,
  KafkaJsSubscription, ConfluentConsumerLike, KafkaJs2ConsumerLike, KafkaJsAdminClient,
} from './consumer-types';
export type { RejoinCounts } from './consumer-assignment';

/** How often eachBatch heartbeats while it waits for the queue to drain (ms; KafkaJS sends one when its heartbeatInterval has passed). */
const HEARTBEAT_MS = 1000;

/** How often the group's committed offsets are read while the resequencer awaits some (ms). */
const COMMITTED_READ_MS = 200;

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
  private readonly options: ResolvedKafkaJsConsumerOptions;
  private readonly dispatch: Dispatcher<Consumed>;
  /** What differs between the clients: Confluent's, or KafkaJS's. */
  private readonly host: ConsumerHost;
  /** The partitions owned, and what the group's changes do to them. */
  private readonly assignment: Assignment<Consumed>;
  /** idle → connecting → connected → running → stopping → stopped (Confluent's connects once), or idle again (KafkaJS's). */
  private readonly life: Lifecycle;
  private eachMessage: KafkaJsEachMessage | undefined;
  private timers: NodeJS.Timeout[] = [];
  /** Why the run ended, when eachMessage failed for good on a message. */
  private failure: HandlerError | undefined;
  /** The commits, and the reads of the group's committed offsets. */
  private readonly commits: KafkaJsCommits<Consumed>;
  /** The handled records committed with the offsets and read back (docs/ordering.md). */
  private readonly records: HandledRecords<Consumed>;
  /** options.groupOrder as it applies ('auto' is 'wait': this consumer's commits carry the records). */
  readonly groupOrder: 'flag' | 'wait';
  /** A commit soon after a marked message was handled (groupOrder 'wait'), pending. */
  private soonTimer: NodeJS.Timeout | undefined;
  /** eachBatch waits on this while the queue is full (maxPending). */
  private drained: (() => void) | undefined;
  /** The resequencer's clock stands still while eachBatch waits for the application (see DynamicConsumer). */
  private waitingSince = 0;
  private waitedFor = 0;

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
    this.life = new Lifecycle(this.host.runsAgain ? 'idle' : 'stopped');
    this.groupOrder = this.options.groupOrder === 'flag' ? 'flag' : 'wait';
    this.consumer = consumer;
    this.resequencer = new Resequencer<Consumed>(this.options.resequencer ?? {}, () => this.clock());
    this.dispatch = new Dispatcher(this.resequencer, this.options.handlerRetries, this.options.retryBackoffMs, {
      handle: (m, info) => this.eachMessage!({ topic: m.topic, partition: m.partition, message: m.message, heartbeat: NO_HEARTBEAT }, info),
      owns: (tp) => this.assignment.has(tp),
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
    this.commits = new KafkaJsCommits(this.host, this.dispatch, this.resequencer, this.records, {
      running: () => this.life.phase === 'running',
      emit: (event: string, value: unknown) => this.emit(event, value),
      hasErrorListener: () => this.listenerCount('error') > 0,
    });
    this.assignment = new Assignment(this.dispatch, this.records, this.commits, {
      running: () => this.life.phase === 'running',
      emit: (event: string, value: unknown) => this.emit(event, value),
      crashed: (error) => {
        if (this.life.phase !== 'running') return;
        if (this.listenerCount('error') > 0) this.emit('error', kafkaJsError(error, 'run crashed'));
        this.stop(0).catch(() => undefined);
      },
    });
    warnIfBothLoaded();
  }

  /**
   * Connects the consumer (unless it is connected already; KafkaJS's: and the `admin` client).
   * Confluent's consumer configured to commit by itself (kafkaJS.autoCommit, or
   * enable.auto.commit, not false) is disconnected again and refused with an
   * InvalidOptionError: it would commit past messages still held.
   */
  connect(): Promise<void> {
    return this.life.connect(async () => {
      try {
        await this.host.connect(this.assignment);
      } catch (err) {
        if (!(err instanceof KafkaError) && !this.host.runsAgain) this.life.phase = 'stopped';
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
    if (this.life.phase !== 'connected' && this.life.phase !== 'running') throw new StateError(`subscribe() while ${this.life.phase}`);
    try {
      await this.host.subscribe(subscription);
    } catch (err) {
      throw kafkaJsError(err, 'subscribe');
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
    this.failure = undefined;
    this.dispatch.concurrency = concurrency;
    this.life.phase = 'running';
    this.timers.push(setInterval(() => this.commits.commitHandled(() => this.assignment.owned.values()), this.options.commitIntervalMs));
    this.timers.push(setInterval(() => this.commits.readCommitted(), this.groupOrder === 'wait' ? RECORD_READ_MS : COMMITTED_READ_MS));
    this.timers.push(setInterval(() => {
      this.dispatch.accept(this.resequencer.expire());
    }, Math.max(10, Math.min(1000, this.resequencer.options.maxWaitMs / 4))));
    try {
      await this.host.run((payload) => this.batch(payload));
    } catch (err) {
      this.clearTimers();
      this.life.phase = 'connected';
      throw kafkaJsError(err, 'run');
    }
  }

  /**
   * The consumer's eachBatch: the messages into the Resequencer, what it releases queued for
   * eachMessage; while the queue is full (maxPending) it waits, heartbeating (KafkaJS's: a long
   * wait keeps the membership, and a rejection saying the group rebalances goes to the client,
   * which joins again).
   */
  private async batch(payload: KafkaJsBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    // Resolved at once, whatever happens below: the consumer then never seeks back to read a
    // message again that the Resequencer has (its stored offsets are not what is committed).
    if (messages.length > 0) payload.resolveOffset(messages[messages.length - 1].offset);
    // The partition just came here (or starts anew after a join): nothing of it goes before its
    // previous owner's record is read.
    const name = partitionKey(topic, partition);
    let waited = false;
    for (let wait = this.assignment.waitOf(name); wait !== undefined; wait = this.assignment.waitOf(name)) {
      if (!waited) this.records.fetchedEarly(messages.length);
      waited = true;
      await wait;
    }
    // Stopping (what came is read again from the committed offsets), revoked meanwhile, or the
    // group rebalancing (every partition is fetched again after the join).
    if (this.life.phase !== 'running' || !this.assignment.has(name) || this.assignment.rejoining) return;
    // Below the committed offset read when the partition came here: handled already (it stays
    // put while this loop runs: it changes on the group's events and the reads' answers only).
    const floor = this.assignment.floorOf(name);
    for (const message of messages) {
      const offset = Number(message.offset);
      if (floor !== undefined && offset < floor) {
        this.assignment.skippedBelow();
        continue;
      }
      const m: Consumed = { topic, partition, offset, key: message.key, value: message.value, size: message.size, headers: message.headers as ConsumedMessage['headers'], message };
      this.dispatch.offer(m);
    }
    if (this.dispatch.waiting < this.options.maxPending) return;
    this.waitingSince = Date.now();
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
        this.wake();
        throw err;
      }
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

  /**
   * A marked message was handled: with groupOrder 'wait' a member of the group may wait for it,
   * so the records are committed within RECORD_COMMIT_MS (longer when making records is costly:
   * soonDelay()) rather than at the next commitIntervalMs.
   */
  private commitSoon(): void {
    if (this.groupOrder !== 'wait' || this.soonTimer !== undefined || this.life.phase !== 'running') return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      this.commits.commitHandled(() => this.assignment.owned.values());
    }, this.records.soonDelay());
  }

  /**
   * What the consumer holds and does now: messages held by the resequencer, waiting for
   * eachMessage and in calls, and its handled records' costs (DynamicConsumer's metrics()).
   */
  metrics(): { held: number; waiting: number; inFlight: number; records: RecordCounts; rejoins: RejoinCounts } {
    return {
      held: this.resequencer.held, waiting: this.dispatch.waiting, inFlight: this.dispatch.inFlight, records: this.records.metrics(),
      rejoins: { ...this.assignment.counts },
    };
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
   * offsets are committed, and the client's run ends: KafkaJS's consumer is stopped (connect()
   * and run() may follow; disconnect() closes it), Confluent's is disconnected (it has no
   * stop(), and connects once: a new run needs a new consumer). Rejects with a KafkaError when
   * that final commit fails (after the run ended). Nothing to do on a consumer never connected.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    const bad = timeoutError('timeoutMs', timeoutMs, true);
    if (bad !== undefined) return Promise.reject(bad);
    return this.life.stop((running) => this.halt(running, timeoutMs));
  }

  /** stop(), and KafkaJS's consumer disconnected (Confluent's is, by stop()). */
  async disconnect(timeoutMs?: number): Promise<void> {
    await this.stop(timeoutMs);
    if (this.host.runsAgain) await this.host.disconnect();
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
      // Before the client's run ends: KafkaJS's commits nothing after it.
      const offsets = this.commits.offsetsOf(this.assignment.owned.values(), false);
      if (offsets.length > 0) {
        try {
          await this.commits.commit(offsets, false);
        } catch (err) {
          commitError = err;
        }
      }
    }
    try {
      await this.host.stop();
    } catch (err) {
      commitError ??= toKafkaError(err, 'stop');
    }
    this.assignment.clear();
    this.dispatch.clear();
    this.life.ended();
    this.eachMessage = undefined;
    this.emit('stopped', this.failure);
    if (commitError !== undefined) throw commitError;
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
