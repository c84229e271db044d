// The engine's (delivery.ts) handler scheduler: released messages go to the application's handler up to `concurrency` at a
// time, in release order within a lane (a key or a partition, by `ordering`), and two calls of one lane never overlap. A
// failed message is retried in place, nothing of its lane going first, or dead-lettered, skipped or the run stopped
// (failed-calls.ts). Its ledger (ledger.ts) keeps what is unhandled.

import { goesAsIs, type Resequencer, type Release, type ConsumedMessage } from './resequencer';
import type { BlockedKey } from './resequencer-types';
import { type Task, TaskQueue, LeftOut, hasKey, keyLane } from './task-queue';
import { PartitionCalls } from './partition-calls';
import { OffsetLedger } from './ledger';
import { HandlerError } from '../core/errors';
import { FailedCalls, type FailedCallsSettings, type FailedRunError, type FailureHooks } from './failed-calls';
import type { FailureCounts } from './failures';
import { delay } from '../core/time';
import { partitionKey, partitionsByTopic } from '../core/partition-key';
import { type DispatchHooks, infoOf, isPromise, type Ordering, UNMARKED } from './dispatch-types';

export type { DispatchHooks, HandledInfo, Ordering, PartitionOffset } from './dispatch-types';

/** The key of a topic-partition in the maps below (src/core/partition-key.ts). */
export { partitionKey };

/** What callNow()'s handler threw when it threw nothing. */
const NOT_THROWN = Symbol('not thrown');

/** How a Dispatcher retries and judges failed calls (failed-calls.ts), and which of its calls may overlap: set once, when it is made. */
export type DispatchSettings<M extends ConsumedMessage = ConsumedMessage> = FailedCallsSettings<M>;

export class Dispatcher<M extends ConsumedMessage> {
  readonly ordering: Ordering;
  /** Handler calls at once (at least 1): set by begin(). */
  private concurrency = 1;
  /** Above 0: a call takes up to this many waiting messages of its lane, to hooks.handleBatch. */
  private batchLimit = 0;
  /** Failed calls: judged, resting, dead-lettered (failed-calls.ts). */
  private readonly failedCalls: FailedCalls<M>;
  /** The unhandled offsets, and what may be committed (ledger.ts). */
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
  /** No call starts (Delivery.barrier(): close() until open()). */
  private closed = 0;
  /** Bumped by halt(): no call started before it changes anything but its partition's unhandled offsets. */
  private generation = 0;
  /** Partitions leaving (drop()) until forgotten: what is released of them is marked unhandled, never handed out. */
  private readonly leaving = new Set<string>();

  constructor(
    readonly resequencer: Resequencer<M>,
    settings: DispatchSettings<M>,
    private readonly hooks: DispatchHooks<M> & FailureHooks<M>,
  ) {
    this.ordering = settings.ordering;
    const self = this;
    this.failedCalls = new FailedCalls<M>({
      get generation() { return self.generation; },
      owned: (task) => this.owned(task),
      laneNow: (task) => this.queue.laneNow(task, this.ordering === 'partition'),
      call: (task, attempts, generation) => this.call(task, attempts, generation),
      done: (task, generation, handled) => this.done(task, generation, handled),
      stop: (task, error) => this.stop(task, error),
      pump: () => this.pump(),
      progress: () => this.hooks.progress(),
    }, settings, hooks);
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

  /** Handler calls under way: not those resting after a failure (under a transaction, a retry's rest counts: failed-calls.ts). */
  get inFlight(): number {
    return this.running - this.failedCalls.notUnderWay;
  }

  /** What the failure handling did (retries, dead letters, skips, parked messages). */
  /** The keys whose failed calls rest now, and why (failed-calls.ts). */
  restingKeys(now: number): BlockedKey[] {
    return this.failedCalls.restingKeys(now);
  }

  get failureCounts(): FailureCounts {
    return this.failedCalls.counts;
  }

  /** Released messages waiting for a call, less those behind a resting call (up to `bound`): what holds reading back (maxPending). */
  pending(bound: number): number {
    const waiting = this.queue.waiting;
    if (this.failedCalls.waitingCalls === 0) return waiting;
    return waiting - Math.min(bound, this.failedCalls.blockedBehind((task) => this.queue.waitingBehind(task)));
  }

  /** @internal Table sizes for bench/soak/tables.js (lanes with a task, and OffsetLedger.sizes()). */
  tableSizes(): { lanes: number; unhandled: number; unhandledPartitions: number; lastCommitted: number } {
    return { lanes: this.queue.laneCount, ...this.ledger.sizes() };
  }

  /** The handler is working, or messages wait for it (calls resting after a failure included). */
  get busy(): boolean {
    return this.running > 0 || this.queue.waiting > 0;
  }

  /** Calls are under way, or messages wait that may start: not those behind a call resting after a failure, nor while no slot frees. */
  private get working(): boolean {
    if (this.inFlight > 0) return true;
    if (this.failedCalls.waitingCalls === 0) return this.queue.waiting > 0;
    return this.queue.startable && this.running - this.failedCalls.freed < this.concurrency;
  }

  /**
   * Resolves once the handler has nothing left to do (a call resting after a failure is not waited for: its message is
   * read again next run), `gaveUp()` (a failed run), or after `timeoutMs`: for stop().
   */
  async drain(timeoutMs: number, gaveUp: () => boolean): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.working && !gaveUp() && Date.now() < deadline) await delay(5);
  }

  /** No call starts until as many open(); the calls under way go on (callsEnded() waits for them). */
  close(): void {
    this.closed++;
  }

  open(): void {
    if (--this.closed > 0) return;
    this.closed = 0;
    this.pump();
  }

  /** Resolves once no handler call is under way, or after `timeoutMs`. */
  async callsEnded(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight > 0 && Date.now() < deadline) await delay(5);
  }

  /** Resolves once no handler call of `partitions` is under way, or after `timeoutMs`. */
  async callsOver(partitions: Iterable<{ topic: string; partition: number }>, timeoutMs: number): Promise<void> {
    const tps = [...partitions].map(({ topic, partition }) => this.ledger.tpName(topic, partition));
    if (this.runningIn.busy(tps)) await this.runningIn.idle(tps, timeoutMs);
  }

  /** Queues released messages for the handler (and starts handing them out); those but `offered` waited to be released. */
  accept(released: Release<M>[], offered?: M): void {
    if (released.length === 0) return;
    // With one call at a time release order alone keeps a lane's calls apart, so no lane is
    // made, unless drop() made some: then a message of theirs must join them.
    const laned = this.laned;
    const byPartition = this.ordering === 'partition';
    /** Releases of partitions leaving: what follows them here is not in order after them. */
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
      this.queue.add(r, tp, unhandled, laned, byPartition, m !== offered);
    }
    this.pump();
  }

  /** A message read, through the resequencer; one that goes at once while no call runs or waits is handed out straight away. */
  offer(message: M): void {
    const released = this.resequencer.read(message);
    if (released !== null) this.accept(released, message);
    else if (this.running === 0 && this.queue.waiting === 0 && !this.pumping && this.closed === 0 && this.batchLimit === 0 && this.leaving.size === 0 && this.failedCalls.policy.size === 0) {
      this.callNow(message);
    }
    else this.accept([goesAsIs(message)], message);
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

  private pump(): void {
    if (this.pumping || this.closed > 0) return;
    this.pumping = true;
    try {
      while (this.running - this.failedCalls.freed < this.concurrency) {
        // First, a call whose rest after a failure is over.
        const again = this.failedCalls.freed > 0 ? this.failedCalls.takeAgain() : undefined;
        if (again !== undefined) {
          again();
          continue;
        }
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
        // Read again after it failed (a transaction's abort): what was decided for it goes on.
        const failure = this.failedCalls.policy.size > 0 ? this.failedCalls.policy.of(task.tp, task.release.message.offset) : undefined;
        if (failure !== undefined) this.failedCalls.resume(task, failure, this.generation);
        else this.call(task, 1, this.generation);
      }
    } finally {
      this.pumping = false;
    }
  }

  /** One handler call of a task; a failed one is judged (failed-calls.ts): made again in place after a backoff (its lane waits), dead-lettered, skipped, or the run stops. */
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
    this.failedCalls.failed(task, attempts, generation, error);
  }

  /** The run stops on the task's message: nothing more is handed out, and it stays unhandled. */
  private stop(task: Task<M>, error: FailedRunError): void {
    // halt() takes the call back with the others under way (see done()).
    this.halt();
    this.end(task, false);
    this.hooks.fail(error);
  }

  /**
   * Whether a partition of the call's messages is still this consumer's: a key's batch may span
   * partitions, and is retried whole while one stays (no one else reads that one again).
   */
  private owned(task: Task<M>): boolean {
    if (this.hooks.owns(task.tp)) return true;
    if (task.group !== undefined) for (const t of task.group) if (this.hooks.owns(t.tp)) return true;
    return false;
  }

  /** Whether a partition of the call's messages stays, but those `gone`. */
  private ownedBut(task: Task<M>, gone: ReadonlySet<string>): boolean {
    if (!gone.has(task.tp) && this.hooks.owns(task.tp)) return true;
    if (task.group !== undefined) for (const t of task.group) if (!gone.has(t.tp) && this.hooks.owns(t.tp)) return true;
    return false;
  }

  /** A call is over: `handled`, its offset leaves the unhandled ones; its lane's next task may start. */
  private done(task: Task<M>, generation: number, handled: boolean): void {
    this.end(task, handled);
    // halt() took back a marked call of an earlier generation.
    if (generation !== this.generation) return;
    if (!handled) this.dropped([task]);
    // Unhandled: its partition left. What waits behind it by key goes back to the resequencer
    // (with records), or its next goes flagged 'unowned', as drop() does.
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
    if (this.failedCalls.policy.size > 0) this.failedCalls.policy.forget(task.tp, task.release.message.offset);
    const marked = task.release.order !== null;
    if (this.ledger.remove(task.tp, task.unhandled, task.release.message.offset, marked) && marked) this.hooks.handledMarked?.(task.release.message);
  }

  /** The group's committed offsets of awaited partitions: what waited for them goes (entries with an error or none skipped). */
  committedRead(offsets: ReadonlyArray<{ topic: string; partition: number; offset?: unknown; error?: unknown }>): void {
    for (const tp of offsets) {
      if (tp.error || !(typeof tp.offset === 'number' && Number.isInteger(tp.offset) && tp.offset >= 0)) continue;
      this.accept(this.resequencer.setCommitted(tp.topic, tp.partition, tp.offset));
    }
  }

  /** Partitions come here: owned for the resequencer before their first message, so it waits only for predecessors that will come. */
  assign(partitions: Iterable<{ topic: string; partition: number }>): void {
    for (const [topic, list] of partitionsByTopic(partitions)) this.resequencer.assign(topic, list);
  }

  /** Drops what waits of partitions that leave (their next owner reads it again); their calls under way go on (callsOver()). */
  drop(partitions: Iterable<{ topic: string; partition: number }>): void {
    const gone = new Set<string>();
    for (const { topic, partition } of partitions) gone.add(this.ledger.tpName(topic, partition));
    if (gone.size === 0) return;
    for (const tp of gone) this.leaving.add(tp);
    const byKey = this.ordering === 'key';
    // With records, what waited behind a message that leaves goes back to the resequencer.
    const takenBack: Task<M>[] | undefined = byKey && this.resequencer.waitsForRecords ? [] : undefined;
    this.dropped(this.queue.drop(gone, byKey, takenBack));
    if (takenBack !== undefined && takenBack.length > 0) this.holdAgain(takenBack);
    // Calls resting after a failure, all of whose partitions leave (or are read again): over, unhandled.
    this.failedCalls.cancel((task) => !this.ownedBut(task, gone), this.generation);
    this.hooks.progress();
  }

  /**
   * Tasks of a key behind one that left with its partition go back to the resequencer as if read
   * now, no longer released or unhandled, and wait there for the next owner's handled record
   * to show what left handled, instead of going flagged 'unowned'.
   */
  private holdAgain(tasks: Task<M>[]): void {
    tasks.sort((a, b) => a.seq - b.seq);
    for (const task of tasks) {
      this.ledger.remove(task.tp, task.unhandled, task.release.message.offset, true);
      this.unreleased(task.release);
    }
    // A predecessor released here, neither left nor taken back, is released still.
    for (const task of tasks) if (task.release.order !== null) this.resequencer.takeBack(task.release.message, task.release.order);
    const again: Release<M>[] = [];
    for (const task of tasks) for (const r of this.resequencer.push(task.release.message)) again.push(r);
    this.accept(again);
  }

  /** Forgets partitions that leave: what is held or waits is dropped, and nothing of them is committed if they come back. */
  forget(partitions: Iterable<{ topic: string; partition: number }>): void {
    const list = [...partitions];
    this.drop(list);
    for (const { topic, partition } of list) {
      const tp = this.ledger.tpName(topic, partition);
      this.ledger.forget(tp);
      this.leaving.delete(tp);
      // Read again from now on, a message counts its failures from 1; but under a transaction, a rewind's (its abort's
      // reading again) go on from what was decided (failed-calls.ts).
      if (!this.failedCalls.transactional && this.failedCalls.policy.size > 0) this.failedCalls.policy.forgetPartition(tp);
      this.resequencer.forget(topic, partition);
    }
  }

  /**
   * Nothing more is handed out: what waits is dropped but stays unhandled, so a later commit
   * stays below it; a call under way ends changing nothing but its unhandled mark.
   */
  halt(): void {
    const generation = this.generation++;
    this.failedCalls.cancel(() => true, generation);
    this.dropped(this.queue.clear());
    // A marked call under way may end after the next run hands out its successor: unhandled too.
    this.dropped([...this.markedCalls]);
    this.markedCalls.clear();
  }

  /** Tasks unhandled here: a marked one no longer counts as released, so its successor cannot go ordered before it. */
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
    this.failedCalls.clear();
    this.leaving.clear();
  }
}
