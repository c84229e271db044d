// The ordered-delivery engine: what every consumer of the package puts between its client and
// the application, written once. An adapter (src/consumer/, src/kafkajs/, src/platformatic/)
// gives it what its client reads (Assignment.admit()); the engine runs it through the
// Resequencer and the Dispatcher, owns the partitions (assignment.ts), commits only below what
// was handled (commits.ts), and runs one lifecycle:
//
//   idle → connecting → connected → running → stopping → idle (may run again) or stopped (for good)

import { type HandlerError, type KafkaError, type TransactionError, timeoutError, toKafkaError } from '../core/errors';
import type { FailedRunError, FailureCounts } from './failures';
import { Lifecycle, type Phase } from '../core/lifecycle';
import { CONSUMER_DEFAULTS } from '../core/group-options';
import { Assignment, type RejoinCounts } from './assignment';
import { Backpressure } from './backpressure';
import { Commits } from './commits';
import { Dispatcher, type HandledInfo, type Ordering } from './dispatch';
import { InternalError } from '../core/errors';
import type { ConsumerPort, DeadLetterSink, TopicPartition, TransactionSink } from './port';
import { Transacted, type TransactionCounts } from './transacted';
import { HeldPressure } from './held-pressure';
import { randomBytes } from 'node:crypto';
import { registerConsumerGauges, registerConsumerOtel } from './consumer-metrics';
import { HandledRecords, RECORD_READ_MS, type RecordCounts } from './records';
import { HandlerTracing } from './tracing';
import { Resequencer, type ConsumedMessage, type Release, type ResequencerOptions } from './resequencer';
import type { BlockedKey } from './resequencer-types';
import { type HotKeyLag, HotKeyLags } from './hot-key-lag';

/** metrics().blockedKeys: at most this many keys, those waiting longest. */
const BLOCKED_KEYS_SHOWN = 20;

/** How often the group's committed offsets are read while the resequencer awaits some, without handled records (ms). */
const COMMITTED_READ_MS = 200;

/** The engine's settings, from the consumer's resolved options. */
export interface DeliverySettings {
  readonly resequencer?: ResequencerOptions;
  readonly handlerRetries: number;
  readonly retryBackoffMs: number;
  /** The backoff's cap (ms; failures.ts). */
  readonly retryBackoffMaxMs?: number;
  /** The application's verdict on a failed call, given its message as the handler got it (failures.ts). */
  readonly onFailure?: (message: unknown, error: HandlerError, attempts: number) => unknown;
  /** The dead-letter topic's sink, and how long a message may stay parked on writes to it that fail (ms). */
  readonly deadLetter?: { readonly sink: DeadLetterSink<unknown>; readonly maxParkMs?: number };
  readonly commitIntervalMs: number;
  readonly ordering: Ordering;
  /** 'wait': a member waits for another's handled record (on a port that carries records). */
  readonly groupOrder: 'flag' | 'wait';
  /** How long a revoke waits for the calls under way of the partitions leaving (ms), where the client waits. */
  readonly revokeTimeoutMs?: number;
  /** Where a stop ends: 'idle' (the consumer may run again) or 'stopped'. */
  readonly afterStop: 'idle' | 'stopped';
  /** Reading is held while this many released messages wait for the handler (backpressure.ts). */
  readonly maxPending: number;
  /** Exactly once: commits go into this producer's transaction, with what the handlers produced (transacted.ts). */
  readonly transaction?: TransactionSink;
  /** A prom-client Registry for the consumer's gauges (consumer-metrics.ts). */
  readonly prometheus?: unknown;
  /** The consumer group, when the client says (an attribute of the handler calls' spans: tracing.ts). */
  readonly groupId?: string;
}

/** What the engine asks of the adapter that owns it, besides its port. */
export interface DeliveryHooks<M> {
  handle(message: M, info: HandledInfo): void | Promise<void>;
  handleBatch?(messages: M[], infos: HandledInfo[]): void | Promise<void>;
  /** One failed call of the handler. */
  handlerError(error: HandlerError, message: M): void;
  /** The message as the application's callbacks get it (the handler's payload): for onFailure and 'deadLettered'. */
  payload?(message: M): unknown;
  emit(event: string, ...args: unknown[]): boolean;
  listenerCount(event: string): number;
  /** Reading may go on: the handler caught up (backpressure.ts). */
  resume(): void;
  /** The run is ending: the adapter stops reading (before the handler's last calls are waited for). */
  halting?(): void;
  /** The client's run is about to end (after the last commit). */
  ending?(): void;
  /** The run ended (the client's too): `failure` is why, if it failed; `commitError`, why its last commit or the client's end failed. */
  ended(failure: FailedRunError | KafkaError | TransactionError | undefined, commitError: unknown): void;
}

export class Delivery<M extends ConsumedMessage> {
  readonly resequencer: Resequencer<M>;
  readonly dispatch: Dispatcher<M>;
  readonly records: HandledRecords<M> | undefined;
  readonly commits: Commits<M>;
  readonly assignment: Assignment<M>;
  readonly life: Lifecycle;
  /** Backpressure: reading held while the handler is behind. */
  readonly pressure: Backpressure;
  /** Backpressure per partition: those that hold many messages for their predecessors are paused. */
  private readonly heldPressure: HeldPressure;
  /**
   * The hot keys' lag: each key whose messages came marked, the age of its last handled one; noted once metrics are
   * read (metrics(), a Prometheus registry, a meter), nothing per message before.
   */
  private readonly hotKeys = new HotKeyLags();
  private hotKeysRead = false;
  /** Why the run ends, when it failed. */
  failure: FailedRunError | KafkaError | TransactionError | undefined;
  /** Bumped when a run ends: answers and waits of an earlier run are ignored. */
  private generation = 0;
  private timers: NodeJS.Timeout[] = [];
  /** The timer of a commit soon after a marked message was handled. */
  private soonTimer: NodeJS.Timeout | undefined;
  /** With a transaction: a handler call failed since the transaction's last end (it aborts). */
  private failedCall = false;
  /** OpenTelemetry's spans of the handler calls, from the first run with a tracer provider registered (tracing.ts). */
  private tracing: HandlerTracing<M> | undefined;
  /** The handler and the batch handler, or each inside a span. */
  private handle: DeliveryHooks<M>['handle'];
  private handleBatch: DeliveryHooks<M>['handleBatch'];
  /** While a run is under way with a meter provider registered: what takes the gauges out of OpenTelemetry's meter. */
  private otelGauges: (() => void) | undefined;

  constructor(
    readonly port: ConsumerPort,
    private readonly options: DeliverySettings,
    private readonly hooks: DeliveryHooks<M>,
  ) {
    this.life = new Lifecycle(options.afterStop);
    this.handle = hooks.handle;
    this.handleBatch = hooks.handleBatch;
    // Messages behind a call resting after a failure (parked) do not hold reading back, up to maxPending more.
    this.pressure = new Backpressure(options.maxPending, () => this.dispatch.pending(options.maxPending), hooks.resume);
    this.resequencer = new Resequencer<M>(options.resequencer ?? {}, () => this.pressure.clock());
    const payload = hooks.payload ?? ((m: M): unknown => m);
    const onFailure = options.onFailure;
    const deadLetter = options.deadLetter;
    this.dispatch = new Dispatcher(this.resequencer, {
      retries: options.handlerRetries, retryBackoffMs: options.retryBackoffMs, retryBackoffMaxMs: options.retryBackoffMaxMs, ordering: options.ordering,
      onFailure: onFailure === undefined ? undefined : (m, error, attempts) => onFailure(payload(m), error, attempts),
      deadLetterTopic: deadLetter?.sink.topic, maxParkMs: deadLetter?.maxParkMs, transactional: options.transaction !== undefined,
    }, {
      handle: (m, info) => this.handle(m, info),
      handleBatch: hooks.handleBatch === undefined ? undefined : (ms, infos) => this.handleBatch!(ms, infos),
      owns: (tp) => this.assignment.has(tp),
      // Reported as 'handlerError' events, never 'error' (which kills a process that has no listener for it).
      handlerError: (error, message) => {
        this.failedCall = true;
        hooks.handlerError(error, message);
      },
      fail: (error) => this.fail(error),
      progress: () => {
        this.pressure.progress();
        this.heldPressure.progress();
      },
      handledMarked: (m) => {
        if (this.hotKeysRead) this.hotKeys.handled(m, Date.now);
        this.commitSoon();
      },
      deadLetter: deadLetter === undefined ? undefined : (messages, added) => deadLetter.sink.write(messages, added),
      deadLettered: (messages, error) => {
        this.tracing?.deadLettered(messages, deadLetter?.sink.topic, error);
        for (const m of messages) hooks.emit('deadLettered', payload(m), error);
        // Its offset is committed at once (once it counts as handled, right after this): a member killed now dead-letters
        // again only what was written since.
        if (this.commits.transacted === undefined) {
          queueMicrotask(() => {
            if (this.life.phase === 'running') this.commits.commitHandled(() => this.assignment.owned.values());
          });
        }
      },
      parked: (error) => hooks.emit('warning', error),
      spoiled: () => {
        this.failedCall = true;
      },
    });
    if (port.carriesRecords) {
      // Members share what they handled (docs/ordering.md, "Order in a group").
      this.records = new HandledRecords(this.dispatch, this.resequencer, (err) => hooks.emit('warning', err));
      this.resequencer.keepRecords();
      if (options.groupOrder === 'wait') this.resequencer.useRecords();
    }
    const running = (): boolean => this.life.phase === 'running';
    this.commits = new Commits(port, this.dispatch, this.resequencer, this.records, {
      running,
      rejoining: () => this.assignment.holdsCommits(),
      emit: (event: string, value: unknown) => hooks.emit(event, value),
      hasErrorListener: () => hooks.listenerCount('error') > 0,
      released: () => this.pressure.full(),
    });
    this.heldPressure = new HeldPressure(port, this.resequencer.options.maxBufferedMessages, () => this.resequencer.held,
      (topic, partition) => this.resequencer.heldIn(topic, partition), () => this.assignment.owned.size, (tp) => this.assignment.mayRead(tp));
    this.assignment = new Assignment(port, this.dispatch, this.commits, this.records, options.revokeTimeoutMs ?? CONSUMER_DEFAULTS.revokeTimeoutMs, {
      running,
      generation: () => this.generation,
      stopping: () => this.life.phase === 'stopping',
      emit: (event: string, value: unknown) => hooks.emit(event, value),
      offer: (m) => this.offer(m),
      released: () => this.pressure.full(),
    });
    if (options.transaction !== undefined) this.transact(options.transaction);
    if (options.prometheus !== undefined) {
      registerConsumerGauges(options.prometheus, () => this.metrics());
      this.hotKeysRead = true;
    }
  }

  /** Every commit into `sink`'s transaction (transacted.ts). */
  private transact(sink: TransactionSink): void {
    if (this.port.seek === undefined) throw new InternalError(`${this.port.name}: a transaction needs a port that seeks`);
    this.assignment.transactional = true;
    const warn = (error: KafkaError | TransactionError): void => {
      this.hooks.emit('warning', error);
    };
    this.commits.transacted = new Transacted(sink, {
      barrier: (act, first) => this.barrier(act, this.options.revokeTimeoutMs ?? CONSUMER_DEFAULTS.revokeTimeoutMs, first),
      offsets: () => {
        const shortened = this.records?.shortened ?? 0;
        const offsets = this.commits.offsetsOf([...this.assignment.owned.values(), ...this.assignment.revoking.values()], false);
        return { offsets, exact: (this.records?.shortened ?? 0) === shortened };
      },
      takeFailedCall: () => {
        const failed = this.failedCall;
        this.failedCall = false;
        return failed;
      },
      callsUnderWay: () => this.dispatch.inFlight > 0,
      failing: () => this.failure !== undefined,
      rewind: () => this.assignment.rewind(),
      notCommitted: (offsets) => this.dispatch.ledger.notCommitted(offsets),
      fatal: (error) => {
        if (this.hooks.listenerCount('error') > 0) this.hooks.emit('error', error);
        this.fail(error);
      },
      warn,
    });
  }

  get phase(): Phase {
    return this.life.phase;
  }

  /** A message read, of a partition owned and not waiting: through the resequencer to the handler. */
  offer(m: M): void {
    if (this.tracing !== undefined) this.tracing.arrived(m);
    this.dispatch.offer(m);
    if (this.resequencer.held >= this.heldPressure.high) this.heldPressure.read(m.topic, m.partition);
    this.pressure.full();
  }

  /** Connects through `task`; a StateError unless idle. */
  connect(task: () => Promise<void>): Promise<void> {
    return this.life.connect(task);
  }

  /** The run begins: `concurrency` handler calls at once (`batchLimit` above 0: batches of a lane). */
  run(concurrency: number, batchLimit = 0): void {
    this.failure = undefined;
    if (this.tracing === undefined) {
      const tracing = (this.tracing = HandlerTracing.ifActive<M>(this.options.groupId));
      const { handle, handleBatch } = this.hooks;
      if (tracing !== undefined) {
        this.handle = (m, info) => tracing.call(m, info, handle);
        if (handleBatch !== undefined) this.handleBatch = (ms, infos) => tracing.callBatch(ms, infos, handleBatch);
      }
    }
    this.otelGauges ??= registerConsumerOtel(`${this.options.groupId || 'consumer'}-${randomBytes(4).toString('hex')}`, () => this.metrics());
    if (this.otelGauges !== undefined) this.hotKeysRead = true;
    this.dispatch.begin(concurrency, batchLimit);
    this.life.to('running');
    const owned = (): Iterable<TopicPartition> => this.assignment.owned.values();
    this.failedCall = false;
    this.timers.push(setInterval(() => this.commits.commitHandled(owned), this.commits.transacted?.intervalMs ?? this.options.commitIntervalMs));
    this.timers.push(setInterval(() => this.commits.readCommitted(), this.records !== undefined && this.options.groupOrder === 'wait' ? RECORD_READ_MS : COMMITTED_READ_MS));
    this.timers.push(setInterval(() => this.accept(this.resequencer.expire()), Math.max(10, Math.min(1000, this.resequencer.options.maxWaitMs / 4))));
  }

  /** The run could not begin after all (the client's run refused): back to `phase`. */
  unrun(phase: 'connected' | 'idle' = 'connected'): void {
    this.clearTimers();
    this.life.to(phase);
  }

  private accept(released: Release<M>[]): void {
    if (released.length === 0) return;
    this.dispatch.accept(released);
    this.pressure.full();
  }

  /** The run fails for good (a message's handler, or the client): it stops, committing below what is unhandled. */
  fail(error: FailedRunError | KafkaError | TransactionError): void {
    if (this.life.phase !== 'running') return;
    this.failure = error;
    this.stop(0).catch(() => undefined); // a failed final commit was reported already
  }

  /** The client's run ended by itself, for good: an 'error' (to a listener), and the run stops. */
  crashed(error: unknown, context = 'run crashed'): void {
    if (this.life.phase !== 'running') return;
    if (this.hooks.listenerCount('error') > 0) this.hooks.emit('error', toKafkaError(error, context));
    this.stop(0).catch(() => undefined);
  }

  /** A marked message was handled: with groupOrder 'wait' another member may wait for it, so commit soon (soonDelay()). */
  private commitSoon(): void {
    // In a transaction, commits keep to its interval: each one holds every handler call back.
    if (this.options.groupOrder !== 'wait' || this.records === undefined || this.soonTimer !== undefined || this.life.phase !== 'running' || this.commits.transacted !== undefined) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      this.commits.commitHandled(() => this.assignment.owned.values());
    }, this.records.soonDelay());
  }

  /**
   * A barrier: no handler call starts, `first` runs, those under way end (up to `timeoutMs`), then `act` runs,
   * the safe offsets covering every call made; calls start again once it settles. For work that
   * must see the ledger still: a transaction's commit, a dead-letter write.
   */
  async barrier<T>(act: () => T | Promise<T>, timeoutMs = 30_000, first?: () => Promise<void>): Promise<T> {
    this.dispatch.close();
    try {
      // Before the calls under way are waited for, what lets them end (a transaction's abort fails what they await).
      if (first !== undefined) await first();
      await this.dispatch.callsEnded(timeoutMs);
      return await act();
    } finally {
      this.dispatch.open();
    }
  }

  /** Messages held by the resequencer, waiting for a handler call and in calls; the records' costs; the rejoins. */
  metrics(): {
    held: number; waiting: number; inFlight: number; failures: FailureCounts; records: RecordCounts | null; rejoins: RejoinCounts; transactions: TransactionCounts | null;
    blockedKeys: BlockedKey[]; hotKeys: HotKeyLag[];
  } {
    const transacted = this.commits.transacted;
    const now = Date.now();
    this.hotKeysRead = true;
    // The keys waiting longest (held for a predecessor, or resting after a failed call), at most BLOCKED_KEYS_SHOWN.
    const blockedKeys = [...this.resequencer.heldKeys(now), ...this.dispatch.restingKeys(now)].sort((a, b) => b.waitedMs - a.waitedMs).slice(0, BLOCKED_KEYS_SHOWN);
    return {
      blockedKeys, hotKeys: this.hotKeys.list(now),
      held: this.resequencer.held, waiting: this.dispatch.waiting, inFlight: this.dispatch.inFlight, failures: { ...this.dispatch.failureCounts },
      records: this.records?.metrics() ?? null, rejoins: { ...this.assignment.counts, staleRetries: this.commits.staleRetries },
      transactions: transacted === undefined ? null : transacted.counts,
    };
  }

  /** The offset that may be committed for a partition: below every message held or unhandled. */
  safeOffset(topic: string, partition: number): number | undefined {
    return this.dispatch.ledger.safeOffset(topic, partition);
  }

  /**
   * Stops once the handler has finished what was released (up to `timeoutMs`; the rest is read
   * again next start), commits what is safe, and ends the client's run; rejects if that commit fails.
   */
  stop(timeoutMs = 30_000): Promise<void> {
    const bad = timeoutError('timeoutMs', timeoutMs, true);
    if (bad !== undefined) return Promise.reject(bad);
    return this.life.stop((running) => this.halt(running, timeoutMs));
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    if (this.soonTimer !== undefined) clearTimeout(this.soonTimer);
    this.soonTimer = undefined;
  }

  private async halt(running: boolean, timeoutMs: number): Promise<void> {
    let commitError: unknown;
    this.hooks.halting?.();
    if (running) {
      await this.dispatch.drain(timeoutMs, () => this.failure !== undefined);
      // What is still queued stays unhandled: the commit below stays under it.
      this.dispatch.halt();
      this.clearTimers();
      this.commits.reset();
      // A client that answers a periodic commit only when polled would hold this up to its commitStuckMs: one that
      // commits in order needs no answer first.
      if (!this.port.commitsInOrder) await this.commits.idle();
      // Revoking partitions whose calls were waited for are still this consumer's to commit.
      const offsets = this.commits.offsetsOf([...this.assignment.owned.values(), ...this.assignment.revoking.values()], false);
      if (offsets.length > 0) await this.commits.commit(offsets, 'final').catch((err) => { commitError = err; });
    }
    this.generation++;
    this.hooks.ending?.();
    await this.port.end().catch((err: unknown) => { commitError ??= toKafkaError(err, 'stop'); });
    // The next run starts from the committed offsets, with nothing remembered of this one's partitions.
    this.assignment.clear();
    this.heldPressure.clear();
    this.dispatch.clear();
    this.otelGauges?.();
    this.otelGauges = undefined;
    this.life.ended();
    this.hooks.ended(this.failure, commitError);
    if (commitError !== undefined) throw commitError;
  }
}
