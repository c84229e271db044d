// Order restoration for @platformatic/kafka's Consumer (2.x, pure JavaScript, an ES module for
// Node >= 22, never imported here: the application gives its consumer): what
// KafkaJsDynamicConsumer does for Confluent's KafkaJS API, over the MessagesStream that
// consumer's consume() gives.
//
// run({ topics, handler, concurrency }) calls consume() with autocommit false and reads the
// stream's 'data' events: each message goes through the Resequencer, what it releases through
// the Dispatcher to the handler (up to `concurrency` calls at once, in `ordering`), the stream
// paused while maxPending released messages wait. Offsets are committed here only, with the
// consumer's commit(): the Dispatcher's safe offsets (below every message held or not yet
// handled) every commitIntervalMs, when the group starts a rebalance, for the partitions that
// leave, and on stop() (consumer-commits.ts). @platformatic/kafka commits no metadata (every
// OffsetCommit it sends has a null metadata), so the group's handled records cannot be shared:
// groupOrder is 'flag' (docs/consumer.md says what that costs).
//
// Rebalances: the consumer emits 'consumer:group:rebalance' when the group starts one (before
// it joins again; the stream reads on meanwhile) and 'consumer:group:join' with its new
// assignment. On the first, the safe offsets of every partition are committed (under the
// classic protocol's eager assignment every partition is revoked; the commit is sent before
// the consumer's JoinGroup, which follows a metadata request, but is not awaited: a commit
// that lands after the next owner read its committed offset makes that owner read again what
// was handled since, at least once). On the second, the partitions that leave are committed
// again (what was handled since) and forgotten (Dispatcher.forget); those that come start
// fresh; those kept keep what they hold. After a join the stream reads every partition again
// from its committed offset: what a kept partition gives again below what was read of it is
// dropped here (it is held, queued or handled already).

import { EventEmitter } from 'node:events';
import { Resequencer } from '../delivery/resequencer';
import { Dispatcher, type PartitionOffset, partitionKey } from '../delivery/dispatch';
import { ORDER_VALUE } from '../delivery/message-order';
import { ORDER_HEADER } from '../partitioner/headers';
import { PlatformaticCommits } from './consumer-commits';
import type {
  PlatformaticConsumed, PlatformaticConsumerLike, PlatformaticConsumerOptions, PlatformaticConsumedMessage, PlatformaticMessageHandler, PlatformaticRunConfig,
  PlatformaticStreamLike,
} from './consumer-types';
import { resolveKafkaJsConsumerOptions, type ResolvedKafkaJsConsumerOptions } from '../core/options';
import { type HandlerError, InvalidArgTypeError, InvalidOptionError, KafkaError, StateError, timeoutError, toKafkaError } from '../core/errors';
import { Lifecycle } from '../core/lifecycle';

export type {
  PlatformaticConsumerLike, PlatformaticConsumerOptions, PlatformaticConsumedMessage, PlatformaticMessageHandler, PlatformaticRunConfig, PlatformaticStreamLike,
} from './consumer-types';

/** How often the group's committed offsets are read while the resequencer awaits some (ms). */
const COMMITTED_READ_MS = 200;
const RUN_FIELDS = ['topics', 'handler', 'concurrency', 'consume'];
/** The options it takes (those of wrapKafkaJsConsumer but admin). */
const PLATFORMATIC_OPTIONS = ['resequencer', 'commitIntervalMs', 'maxPending', 'handlerRetries', 'retryBackoffMs', 'ordering', 'groupOrder'];
/** Periodic commits wait at most this long for a join after a rebalance began (ms): a change of assignment may come without one. */
const REBALANCE_HOLD_MS = 10_000;

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
  /** The consumer's MessagesStream while running. */
  stream: PlatformaticStreamLike | null = null;
  /** groupOrder as it applies: 'flag' (the consumer's commits carry no handled records). */
  readonly groupOrder = 'flag' as const;
  private readonly options: ResolvedKafkaJsConsumerOptions;
  private readonly dispatch: Dispatcher<PlatformaticConsumed>;
  private readonly commits: PlatformaticCommits;
  private readonly assigned = new Map<string, { topic: string; partition: number }>();
  /** Per topic, by partition: the offset after the last message read of a partition this consumer owns. */
  private readonly readTo = new Map<string, number[]>();
  /** idle → running → stopping → idle (a consumer may consume again). */
  private readonly life = new Lifecycle('idle');
  private handler: PlatformaticMessageHandler | undefined;
  private timers: NodeJS.Timeout[] = [];
  private failure: HandlerError | KafkaError | undefined;
  /** The group rebalances (from 'consumer:group:rebalance' to 'consumer:group:join'). */
  private rebalancing = false;
  private rebalancingSince = 0;
  /** The stream is paused here (maxPending), since this time (the resequencer's clock stands still meanwhile). */
  private holdingSince = 0;
  private heldFor = 0;
  private readonly onData = (m: PlatformaticConsumedMessage) => this.read(m);
  private readonly onStreamError = (err: unknown) => this.streamFailed(err);
  private readonly onRebalance = () => this.rebalanceStarts();
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
    this.resequencer = new Resequencer<PlatformaticConsumed>(this.options.resequencer ?? {}, () => this.clock());
    this.dispatch = new Dispatcher(this.resequencer, this.options.handlerRetries, this.options.retryBackoffMs, {
      handle: (m, info) => this.handler!(m.message, info),
      owns: (tp) => this.assigned.has(tp),
      handlerError: (error, m) => this.emit('handlerError', error, m.message),
      fail: (error) => {
        this.failure = error;
        this.stop(0).catch(() => undefined); // a failed final commit was emitted as 'error' already
      },
      progress: () => {
        if (this.holdingSince > 0 && this.dispatch.waiting <= this.options.maxPending / 2) this.release();
      },
    });
    this.dispatch.ordering = this.options.ordering;
    this.commits = new PlatformaticCommits(consumer, this.dispatch, this.resequencer, {
      running: () => this.life.phase === 'running',
      rebalancing: () => this.rebalancing && Date.now() - this.rebalancingSince < REBALANCE_HOLD_MS,
      emit: (event: string, value: unknown) => this.emit(event, value),
      hasErrorListener: () => this.listenerCount('error') > 0,
    });
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
    if (this.life.phase !== 'idle') throw new StateError(`run() while ${this.life.phase}`);
    this.life.phase = 'running';
    this.handler = handler;
    this.failure = undefined;
    this.dispatch.concurrency = concurrency;
    this.consumer.on('consumer:group:rebalance', this.onRebalance);
    this.consumer.on('consumer:group:join', this.onJoin);
    let stream: PlatformaticStreamLike;
    try {
      stream = await this.consumer.consume({ mode: 'committed', ...consume, topics, autocommit: false });
    } catch (err) {
      this.unlisten();
      this.handler = undefined;
      this.life.phase = 'idle';
      throw toKafkaError(err, 'consume');
    }
    this.stream = stream;
    // Joined before the stream was made (consume() joins the group first): its assignment.
    this.sync(this.consumer.assignments ?? []);
    stream.on('error', this.onStreamError);
    stream.on('data', this.onData);
    this.timers.push(setInterval(() => this.commits.commitHandled(() => this.assigned.values()), this.options.commitIntervalMs));
    this.timers.push(setInterval(() => this.commits.readCommitted(), COMMITTED_READ_MS));
    this.timers.push(setInterval(() => {
      this.dispatch.accept(this.resequencer.expire());
    }, Math.max(10, Math.min(1000, this.resequencer.options.maxWaitMs / 4))));
  }

  /** A message of the stream: into the Resequencer (once), what it releases to the Dispatcher. */
  private read(m: PlatformaticConsumedMessage): void {
    if (this.life.phase !== 'running') return;
    const { topic, partition } = m;
    const offset = Number(m.offset);
    let reads = this.readTo.get(topic);
    let next = reads?.[partition];
    if (next === undefined) {
      // Not (yet) known here as this consumer's: its assignment may have changed without a join event.
      this.sync(this.consumer.assignments ?? []);
      reads = this.readTo.get(topic);
      next = reads?.[partition];
      if (next === undefined) return;
    }
    // Read again from the committed offset after a join: held, queued or handled already.
    if (offset < next) return;
    reads![partition] = offset + 1;
    this.dispatch.offer(new Consumed(m, offset));
    if (this.dispatch.waiting >= this.options.maxPending) this.hold();
  }

  /** Too many released messages wait for the handler: the stream pauses (again: the client may resume it on a rebalance). */
  private hold(): void {
    if (this.holdingSince === 0) this.holdingSince = Date.now();
    this.stream?.pause();
  }

  /** The handler caught up (half of maxPending), or the run stops: the stream goes on. */
  private release(): void {
    if (this.holdingSince === 0) return;
    this.heldFor += Date.now() - this.holdingSince;
    this.holdingSince = 0;
    if (this.life.phase === 'running') this.stream?.resume();
  }

  /** The resequencer's clock stands still while the stream is held (held messages wait for what is not read yet). */
  private clock(): number {
    return (this.holdingSince > 0 ? this.holdingSince : Date.now()) - this.heldFor;
  }

  /** The group starts a rebalance: the safe offsets of every partition are committed (all are revoked under eager assignment). */
  private rebalanceStarts(): void {
    if (this.life.phase !== 'running' || this.rebalancing) return;
    this.rebalancing = true;
    this.rebalancingSince = Date.now();
    this.commits.commitNow(this.commits.offsetsOf(this.assigned.values(), true));
  }

  /** The consumer's assignment (after a join): partitions leaving are committed and forgotten, those coming start fresh. */
  private sync(assignments: ReadonlyArray<{ topic: string; partitions: number[] }>): void {
    this.rebalancing = false;
    if (this.life.phase !== 'running') return;
    const now = new Map<string, { topic: string; partition: number }>();
    for (const { topic, partitions } of assignments) for (const partition of partitions) now.set(partitionKey(topic, partition), { topic, partition });
    const leaving = [...this.assigned].filter(([name]) => !now.has(name)).map(([, tp]) => tp);
    const coming = [...now].filter(([name]) => !this.assigned.has(name)).map(([, tp]) => tp);
    if (leaving.length > 0) {
      // What was handled of them since the rebalance began (their next owner may have read the committed offset already: at least once).
      this.commits.commitNow(this.commits.offsetsOf(leaving, true));
      for (const tp of leaving) {
        this.assigned.delete(partitionKey(tp.topic, tp.partition));
        const reads = this.readTo.get(tp.topic);
        if (reads !== undefined) delete reads[tp.partition];
      }
      this.dispatch.forget(leaving);
      this.emit('revoked', leaving);
    }
    if (coming.length > 0) {
      for (const tp of coming) {
        this.assigned.set(partitionKey(tp.topic, tp.partition), tp);
        let reads = this.readTo.get(tp.topic);
        if (reads === undefined) this.readTo.set(tp.topic, (reads = []));
        reads[tp.partition] = 0;
      }
      this.dispatch.assign(coming);
      this.emit('assigned', coming);
    }
  }

  /** The stream failed (a fetch error it gave up on): the run stops with it. */
  private streamFailed(err: unknown): void {
    if (this.life.phase !== 'running') return;
    this.failure = toKafkaError(err, 'stream');
    this.stop(0).catch(() => undefined);
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    return this.dispatch.safeOffset(topic, partition);
  }

  /** Messages held by the resequencer, waiting for the handler and in calls. */
  metrics(): { held: number; waiting: number; inFlight: number } {
    return { held: this.resequencer.held, waiting: this.dispatch.waiting, inFlight: this.dispatch.inFlight };
  }

  /**
   * Ends the run: nothing more is read or handed out once the handler has finished what was
   * released (for up to `timeoutMs`; what is left then is read again on the next start), the
   * safe offsets are committed and the stream is closed. The consumer stays open (and in its
   * group): close it with its close(), or run() again. Rejects with a KafkaError when that final
   * commit fails. Nothing to do when not running.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    const bad = timeoutError('timeoutMs', timeoutMs, true);
    if (bad !== undefined) return Promise.reject(bad);
    return this.life.stop((running) => this.halt(running, timeoutMs));
  }

  private unlisten(): void {
    this.consumer.removeListener('consumer:group:rebalance', this.onRebalance);
    this.consumer.removeListener('consumer:group:join', this.onJoin);
  }

  private async halt(running: boolean, timeoutMs: number): Promise<void> {
    let commitError: unknown;
    const stream = this.stream;
    stream?.removeListener('data', this.onData);
    stream?.pause();
    this.release();
    if (running) {
      await this.dispatch.finish(timeoutMs, () => this.failure !== undefined);
      // What is still queued stays in `unhandled`: the commit below stays under it.
      this.dispatch.halt();
      for (const timer of this.timers) clearInterval(timer);
      this.timers = [];
      await this.commits.settled();
      const offsets = this.commits.offsetsOf(this.assigned.values(), true);
      if (offsets.length > 0) {
        try {
          await this.commits.commit(offsets, false);
        } catch (err) {
          commitError = err;
        }
      }
    }
    this.unlisten();
    stream?.removeListener('error', this.onStreamError);
    // A closed stream that failed already rejects nothing more worth telling.
    if (stream !== null) await stream.close().catch((err: unknown) => { commitError ??= toKafkaError(err, 'close'); });
    this.stream = null;
    this.dispatch.forget([...this.assigned.values()]);
    this.assigned.clear();
    this.readTo.clear();
    this.dispatch.clear();
    this.rebalancing = false;
    this.holdingSince = 0;
    this.life.ended();
    this.handler = undefined;
    this.emit('stopped', this.failure);
    if (commitError !== undefined) throw commitError;
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
