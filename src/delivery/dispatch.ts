// The engine's (delivery.ts) handler scheduler, between the Resequencer and the application's
// handler: the released messages, handed to the handler up to `concurrency` at a time, in
// release order within a lane — a key (ordering 'key'), a partition ('partition'), or none
// ('none') — so that two calls of one lane never overlap (a failed message is retried in place,
// nothing of its lane going first). What is released and not handled yet it enters in its
// ledger (ledger.ts), which says what may be committed.

import { goesAsIs, type Resequencer, type Release, type ConsumedMessage } from './resequencer';
import { type Task, TaskQueue, LeftOut, hasKey, keyLane } from './task-queue';
import { PartitionCalls } from './partition-calls';
import { OffsetLedger } from './ledger';
import { HandlerError } from '../core/errors';
import { delay } from '../core/time';
import { partitionKey, partitionsByTopic } from '../core/partition-key';
import { type DispatchHooks, infoOf, isPromise, type Ordering, UNMARKED } from './dispatch-types';

export type { DispatchHooks, HandledInfo, Ordering, PartitionOffset } from './dispatch-types';

/** The key of a topic-partition in the maps below (src/core/partition-key.ts). */
export { partitionKey };

/** What callNow()'s handler threw when it threw nothing. */
const NOT_THROWN = Symbol('not thrown');

/** How a Dispatcher retries, and which of its calls may overlap: set once, when it is made. */
export interface DispatchSettings {
  /** A failed call is made again this many times before the run fails. */
  readonly retries: number;
  /** Wait before each new attempt (ms). */
  readonly retryBackoffMs: number;
  readonly ordering: Ordering;
}

export class Dispatcher<M extends ConsumedMessage> {
  /** Which calls may overlap. */
  readonly ordering: Ordering;
  /** Handler calls at once (at least 1): set by begin(). */
  private concurrency = 1;
  /** Above 0: a call takes up to this many consecutive waiting messages of its lane, to hooks.handleBatch (begin()). */
  private batchLimit = 0;
  private readonly retries: number;
  private readonly retryBackoffMs: number;
  /** The offsets released and not handled yet, and what may be committed (ledger.ts). */
  readonly ledger: OffsetLedger<M>;
  /** Released messages waiting for a handler call, by lane. */
  private readonly queue = new TaskQueue<M>();
  /** Handler calls under way, in all and per topic-partition. */
  private running = 0;
  private readonly runningIn = new PartitionCalls();
  /** The calls under way with a marked message (of a spread key's chain): halt() counts them unhandled. */
  private readonly markedCalls = new Set<Task<M>>();
  /** Set while starting calls: a call that ends at once does not start more from inside. */
  private pumping = false;
  /** No call starts (a barrier: close() until open()). */
  private closed = false;
  /** Bumped by halt(): no call started before it changes anything but its partition's unhandled offsets. */
  private generation = 0;
  /** Partitions leaving (drop()) until forgotten: what is released of them is marked unhandled, never handed out. */
  private readonly leaving = new Set<string>();

  constructor(
    readonly resequencer: Resequencer<M>,
    settings: DispatchSettings,
    private readonly hooks: DispatchHooks<M>,
  ) {
    this.retries = settings.retries;
    this.retryBackoffMs = settings.retryBackoffMs;
    this.ordering = settings.ordering;
    this.ledger = new OffsetLedger((topic, partition) => resequencer.committable(topic, partition));
  }

  /** A run begins: `concurrency` calls at once; `batchLimit` above 0, each call takes up to that many messages of its lane. */
  begin(concurrency: number, batchLimit = 0): void {
    this.concurrency = concurrency;
    this.batchLimit = batchLimit;
  }

  /** Released messages waiting for a handler call. */
  get waiting(): number {
    return this.queue.waiting;
  }

  /** Handler calls under way. */
  get inFlight(): number {
    return this.running;
  }

  /** @internal The size of each table, for bench/soak/tables.js (lanes with a task, and UnhandledOffsets.sizes()). */
  tableSizes(): { lanes: number; unhandled: number; unhandledPartitions: number; lastCommitted: number } {
    return { lanes: this.queue.laneCount, ...this.ledger.sizes() };
  }

  /** The handler is working, or messages wait for it. */
  get busy(): boolean {
    return this.running > 0 || this.queue.waiting > 0;
  }

  /**
   * Resolves once the handler has nothing left to do, `gaveUp()` says to stop waiting (a
   * failed run), or `timeoutMs` has passed: a consumer's stop() lets the handler finish what
   * was released before it commits.
   */
  async drain(timeoutMs: number, gaveUp: () => boolean): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.busy && !gaveUp() && Date.now() < deadline) await delay(5);
  }

  /** No call starts until open(); the calls under way go on (callsEnded() waits for them). */
  close(): void {
    this.closed = true;
  }

  /** Calls start again. */
  open(): void {
    this.closed = false;
    this.pump();
  }

  /** Resolves once no handler call is under way, or after `timeoutMs`. */
  async callsEnded(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.running > 0 && Date.now() < deadline) await delay(5);
  }

  /** Resolves once no handler call of `partitions` is under way, or after `timeoutMs`. */
  async callsOver(partitions: Iterable<{ topic: string; partition: number }>, timeoutMs: number): Promise<void> {
    const tps = [...partitions].map(({ topic, partition }) => this.ledger.tpName(topic, partition));
    if (this.runningIn.busy(tps)) await this.runningIn.idle(tps, timeoutMs);
  }

  /** Queues released messages for the handler (and starts handing them out). */
  accept(released: Release<M>[]): void {
    if (released.length === 0) return;
    // Lanes keep calls of one key (or partition) apart. With one call at a time, release order
    // alone keeps them apart: no lane is made, unless some are (drop() made them for messages
    // waiting for predecessors that left), which a message of theirs must then join.
    const laned = this.laned;
    const byPartition = this.ordering === 'partition';
    /** Releases left out below (of partitions leaving): the key's next release in this batch, and a successor, are not in order after them. */
    let left: LeftOut | undefined;
    for (let r of released) {
      const m = r.message;
      const tp = this.ledger.tpName(m.topic, m.partition);
      const unhandled = this.ledger.add(tp, m.offset, r.order);
      if (this.leaving.size > 0 && this.leaving.has(tp)) {
        this.unreleased(r);
        if (this.ordering === 'key' && hasKey(m)) (left ??= new LeftOut()).leave(keyLane(m), r);
        continue;
      }
      if (left !== undefined && hasKey(m) && left.open) r = left.kept(keyLane(m), r);
      this.queue.add(r, tp, unhandled, laned, byPartition);
    }
    this.pump();
  }

  /**
   * A message read: into the resequencer, what it releases to the handler. One it lets go at
   * once, unmarked, while no call is under way or waiting, is handed out straight away.
   */
  offer(message: M): void {
    const released = this.resequencer.read(message);
    if (released !== null) this.accept(released);
    else if (this.running === 0 && this.queue.waiting === 0 && !this.pumping && !this.closed && this.batchLimit === 0 && this.leaving.size === 0) this.callNow(message);
    else this.accept([goesAsIs(message)]);
  }

  /** offer()'s call: under way while the handler has it; a task made only for a call that goes on (a promise) or threw. */
  private callNow(message: M): void {
    const generation = this.generation;
    this.running++;
    this.pumping = true; // what the handler's own code might release waits for this call
    this.ledger.direct = message;
    let result: unknown;
    let cause: unknown = NOT_THROWN;
    try {
      result = this.hooks.handle(message, UNMARKED);
    } catch (err) {
      cause = err;
    }
    this.ledger.direct = undefined;
    this.pumping = false;
    if (cause === NOT_THROWN && !isPromise(result)) {
      this.running--;
      this.hooks.progress();
    } else {
      const tp = this.ledger.tpName(message.topic, message.partition);
      const task = this.queue.started(goesAsIs(message), tp, this.ledger.add(tp, message.offset, null), this.laned, this.ordering === 'partition');
      this.runningIn.begin(tp);
      if (cause !== NOT_THROWN) this.failed(task, 1, generation, cause);
      else this.follow(task, 1, generation, result as Promise<void>);
    }
    if (this.queue.waiting > 0) this.pump();
  }

  /** Whether released messages go into lanes (see accept()). */
  private get laned(): boolean {
    return this.ordering !== 'none' && (this.concurrency > 1 || this.batchLimit > 0 || this.queue.laned);
  }

  /** Starts handler calls while fewer than `concurrency` are under way and a task may start. */
  private pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    try {
      while (this.running < this.concurrency) {
        const task = this.queue.take(this.batchLimit);
        if (task === undefined) break;
        this.running++;
        this.runningIn.begin(task.tp);
        let marked = task.release.order !== null;
        if (task.group !== undefined) {
          for (const t of task.group) {
            this.runningIn.begin(t.tp);
            if (t.release.order !== null) marked = true;
          }
        }
        if (marked) this.markedCalls.add(task);
        this.call(task, 1, this.generation);
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * One handler call of a task: a handler that returns no promise ends it at once (no promise
   * made). A failed call is made again in place (its lane waits), up to `retries` times; then
   * nothing more is started and the consumer is told to stop.
   */
  private call(task: Task<M>, attempts: number, generation: number): void {
    const group = task.group;
    let result: unknown;
    try {
      if (group === undefined) result = this.hooks.handle(task.release.message, infoOf(task.release));
      else {
        // A batch handler call: `task` and its group, failed and retried as one.
        const tasks = [task, ...group];
        result = this.hooks.handleBatch!(tasks.map((t) => t.release.message), tasks.map((t) => infoOf(t.release)));
      }
    } catch (cause) {
      this.failed(task, attempts, generation, cause);
      return;
    }
    if (isPromise(result)) this.follow(task, attempts, generation, result);
    else this.done(task, generation, true);
  }

  /** A call's promise: the call ends with it. */
  private follow(task: Task<M>, attempts: number, generation: number, result: Promise<void>): void {
    result.then(() => this.done(task, generation, true), (cause) => this.failed(task, attempts, generation, cause));
  }

  private failed(task: Task<M>, attempts: number, generation: number, cause: unknown): void {
    const { topic, partition, offset } = task.release.message;
    const error = new HandlerError(topic, partition, offset, attempts, cause);
    this.hooks.handlerError(error, task.release.message);
    // Stopped, or revoked: read again by its next owner.
    if (generation !== this.generation || !this.owned(task)) {
      this.done(task, generation, false);
      return;
    }
    if (attempts > this.retries) {
      // halt() takes the call back with the others under way (see done()).
      this.halt();
      this.end(task, false);
      this.hooks.fail(error);
      return;
    }
    const again = (): void => {
      if (generation !== this.generation || !this.owned(task)) this.done(task, generation, false);
      else this.call(task, attempts + 1, generation);
    };
    if (this.retryBackoffMs > 0) setTimeout(again, this.retryBackoffMs);
    else queueMicrotask(again);
  }

  /**
   * Whether a partition of the call's messages is still this consumer's: a batch of a key's
   * messages may span partitions, and is retried whole while one of them stays (no one else
   * reads that one again), left to the next owners once none does.
   */
  private owned(task: Task<M>): boolean {
    if (this.hooks.owns(task.tp)) return true;
    if (task.group !== undefined) for (const t of task.group) if (this.hooks.owns(t.tp)) return true;
    return false;
  }

  /** A call is over: `handled`, its offset leaves the unhandled ones; its lane's next task may start. */
  private done(task: Task<M>, generation: number, handled: boolean): void {
    this.end(task, handled);
    // A call under way at halt() (an earlier generation) was taken back by it, when marked.
    if (generation !== this.generation) return;
    if (!handled) this.dropped([task]);
    // Not handled in this generation: its partition left, its next owner handles it. By key,
    // the key's waiting messages go back to the resequencer (members waiting for each other's
    // records), or the next one (and its chain's next) goes flagged 'unowned', as drop() does.
    let takenBack: Task<M>[] | undefined;
    if (!handled && this.ordering === 'key' && hasKey(task.release.message)) {
      if (this.resequencer.waitsForRecords) takenBack = this.queue.takeKey(task);
      else this.queue.unownedAfter(task);
    }
    this.queue.finished(task);
    if (takenBack !== undefined && takenBack.length > 0) this.holdAgain(takenBack);
    this.hooks.progress();
    this.pump();
  }

  /** A call's counts go (`handled`: its offsets leave the unhandled ones). */
  private end(task: Task<M>, handled: boolean): void {
    if (handled) this.handled(task);
    if (task.group !== undefined) {
      for (const t of task.group) {
        if (handled) this.handled(t);
        this.runningIn.end(t.tp);
      }
    }
    this.running--;
    this.runningIn.end(task.tp);
    if (this.markedCalls.size > 0) this.markedCalls.delete(task);
  }

  /** A task's message is handled: it leaves the unhandled ones (unless its partition was forgotten since). */
  private handled(task: Task<M>): void {
    const marked = task.release.order !== null;
    if (this.ledger.remove(task.tp, task.unhandled, task.release.message.offset, marked) && marked) this.hooks.handledMarked?.();
  }

  /**
   * The group's committed offsets of partitions the resequencer awaits: what waited for them
   * goes to the handler. A negative offset (nothing committed yet) or an entry with an error is skipped.
   */
  committedRead(offsets: ReadonlyArray<{ topic: string; partition: number; offset?: unknown; error?: unknown }>): void {
    for (const tp of offsets) {
      if (tp.error || !(typeof tp.offset === 'number' && Number.isInteger(tp.offset) && tp.offset >= 0)) continue;
      this.accept(this.resequencer.setCommitted(tp.topic, tp.partition, tp.offset));
    }
  }

  /**
   * Partitions come to this consumer: the resequencer counts them as owned, before their first
   * message (a spread key's predecessor on a partition not owned here is never waited for as
   * if it would come here).
   */
  assign(partitions: Iterable<{ topic: string; partition: number }>): void {
    for (const [topic, list] of partitionsByTopic(partitions)) this.resequencer.assign(topic, list);
  }

  /**
   * Drops what waits of partitions that leave (their next owner reads it again from the
   * committed offset); a call of theirs under way goes on (see callsOver()).
   */
  drop(partitions: Iterable<{ topic: string; partition: number }>): void {
    const gone = new Set<string>();
    for (const { topic, partition } of partitions) gone.add(this.ledger.tpName(topic, partition));
    if (gone.size === 0) return;
    for (const tp of gone) this.leaving.add(tp);
    const byKey = this.ordering === 'key';
    // Members that wait for each other's records: what waited behind a message that leaves goes back to the resequencer.
    const takenBack: Task<M>[] | undefined = byKey && this.resequencer.waitsForRecords ? [] : undefined;
    this.dropped(this.queue.drop(gone, byKey, takenBack));
    if (takenBack !== undefined && takenBack.length > 0) this.holdAgain(takenBack);
    this.hooks.progress();
  }

  /**
   * Tasks of a key kept behind one that left with its partition (drop()), in release order:
   * released here, they are not handled yet, so they go back to the resequencer as if read now
   * — no longer released, no longer unhandled here — and wait there for what they follow: a
   * message that left waits for its next owner's handled record to show it handled (or is read
   * here again, if its partition comes back), instead of going out flagged 'unowned'.
   */
  private holdAgain(tasks: Task<M>[]): void {
    tasks.sort((a, b) => a.seq - b.seq);
    for (const task of tasks) {
      this.ledger.remove(task.tp, task.unhandled, task.release.message.offset, true);
      this.unreleased(task.release);
    }
    // Each one's predecessor, released here and neither left nor taken back, is released still.
    for (const task of tasks) if (task.release.order !== null) this.resequencer.takeBack(task.release.message, task.release.order);
    const again: Release<M>[] = [];
    for (const task of tasks) for (const r of this.resequencer.push(task.release.message)) again.push(r);
    this.accept(again);
  }

  /**
   * Forgets partitions that leave: what is held or waits of them is dropped (their next owner
   * reads it again from the committed offset), and nothing remembered of them is committed if
   * they come back.
   */
  forget(partitions: Iterable<{ topic: string; partition: number }>): void {
    const list = [...partitions];
    this.drop(list);
    for (const { topic, partition } of list) {
      const tp = this.ledger.tpName(topic, partition);
      this.ledger.forget(tp);
      this.leaving.delete(tp);
      this.resequencer.forget(topic, partition);
    }
  }

  /**
   * Nothing more is handed out: what waits is dropped (it stays in `unhandled`, so a commit
   * made after this stays below it); a call under way is not waited for, and its end changes
   * nothing but its offset's unhandled mark.
   */
  halt(): void {
    this.generation++;
    this.dropped(this.queue.clear());
    // A call under way may still end after the next run hands out its successor: unhandled too.
    this.dropped([...this.markedCalls]);
    this.markedCalls.clear();
  }

  /**
   * Tasks that go unhandled here (their partition left, or the consumer stopped): a marked
   * message among them no longer counts as released for its chain, so that its successor,
   * read here later, waits for it (for the group's commit past it, or goes flagged) instead of
   * going ordered before it is handled.
   */
  private dropped(tasks: readonly Task<M>[]): void {
    for (const task of tasks) {
      this.unreleased(task.release);
      if (task.group !== undefined) for (const t of task.group) this.unreleased(t.release);
    }
  }

  private unreleased(r: Release<M>): void {
    if (r.order !== null) this.resequencer.unreleased(r.message, r.order);
  }

  /** Forgets every offset (after a stop: the next run starts from the committed offsets). */
  clear(): void {
    this.ledger.clear();
    this.leaving.clear();
  }
}
