// What every consumer of this package puts between the Resequencer and the application's
// handler (DynamicConsumer for node-rdkafka's API, KafkaJsDynamicConsumer for the KafkaJS API
// of Confluent's client): the released messages, handed to the handler up to `concurrency` at
// a time, in release order within a lane — a key (ordering 'key'), a partition ('partition'),
// or none ('none') — so that two calls of one lane never overlap (a failed message is retried
// in place, nothing of its lane going first); per partition, the offsets released but not
// handled yet; and from both, the offset that may be committed (below every message held or
// not handled yet, whatever was handled above it: at least once).

import type { Resequencer, Release, ConsumedMessage } from './resequencer';
import { type Task, TaskQueue, LeftOut, hasKey, keyLane } from './task-queue';
import { PartitionCalls } from './partition-calls';
import type { OrderHeader } from '../partitioner/headers';
import { HandlerError } from '../core/errors';
import { delay } from '../core/time';
import { partitionKey } from '../core/partition-key';
import type { DispatchHooks, HandledInfo, Ordering, PartitionOffset } from './dispatch-types';

export type { DispatchHooks, HandledInfo, Ordering, PartitionOffset } from './dispatch-types';

/** The key of a topic-partition in the maps below (src/core/partition-key.ts). */
export { partitionKey };

/** What the handler gets with a message. */
function infoOf<M extends ConsumedMessage>(r: Release<M>): HandledInfo {
  if (r.ordered) return r.order === null ? UNMARKED : { ordered: true, outOfOrder: false, order: r.order };
  return { ordered: false, outOfOrder: true, reason: r.reason, order: r.order };
}

/** What the handler gets with a message that carries no order header: one object, frozen (most calls get it). */
const UNMARKED: HandledInfo = Object.freeze({ ordered: true, outOfOrder: false, order: null });

export class Dispatcher<M extends ConsumedMessage> {
  /** Handler calls at once (at least 1). */
  concurrency = 1;
  /** Which calls may overlap. */
  ordering: Ordering = 'key';
  /** Above 0: a call takes up to this many consecutive waiting messages of its lane, to hooks.handleBatch. */
  batchLimit = 0;
  /** Per topic-partition: offsets released but not yet handled (waiting, or in a call). */
  private readonly unhandled = new Map<string, Set<number>>();
  /** Per topic-partition: the order headers of the marked messages among `unhandled`, by offset (for handled records). */
  private readonly unhandledMarked = new Map<string, Map<number, OrderHeader>>();
  /** Per topic-partition: the offset last committed (or being committed), and its record's text. */
  private readonly lastCommitted = new Map<string, number>();
  private readonly lastRecord = new Map<string, string | undefined>();
  /** Released messages waiting for a handler call, by lane. */
  private readonly queue = new TaskQueue<M>();
  /** partitionKey()s made once per topic and partition. */
  private readonly tpNames = new Map<string, string[]>();
  /** Handler calls under way, in all and per topic-partition. */
  private running = 0;
  private readonly runningIn = new PartitionCalls();
  /** The calls under way with a marked message (of a spread key's chain): halt() counts them unhandled. */
  private readonly markedCalls = new Set<Task<M>>();
  /** Set while starting calls: a call that ends at once does not start more from inside. */
  private pumping = false;
  /** Bumped by halt(): no call started before it changes anything but its partition's unhandled offsets. */
  private generation = 0;
  /** Partitions leaving (drop()) until forgotten: what is released of them is marked unhandled, never handed out. */
  private readonly leaving = new Set<string>();

  constructor(
    readonly resequencer: Resequencer<M>,
    private readonly retries: number,
    private readonly retryBackoffMs: number,
    private readonly hooks: DispatchHooks<M>,
  ) {}

  /** Released messages waiting for a handler call. */
  get waiting(): number {
    return this.queue.waiting;
  }

  /** Handler calls under way. */
  get inFlight(): number {
    return this.running;
  }

  /**
   * @internal The size of each table, for bench/soak/tables.js (read at sampling time, never on
   * the message path): lanes of the handler queue with a message waiting or in a call, offsets
   * not yet handled (all partitions), partitions with such a set, and last commits kept.
   */
  tableSizes(): { lanes: number; unhandled: number; unhandledPartitions: number; lastCommitted: number } {
    let unhandled = 0;
    for (const offsets of this.unhandled.values()) unhandled += offsets.size;
    return { lanes: this.queue.laneCount, unhandled, unhandledPartitions: this.unhandled.size, lastCommitted: this.lastCommitted.size };
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
  async finish(timeoutMs: number, gaveUp: () => boolean): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.busy && !gaveUp() && Date.now() < deadline) await delay(5);
  }

  /** Resolves once no handler call of `partitions` is under way, or after `timeoutMs`. */
  async settled(partitions: Iterable<{ topic: string; partition: number }>, timeoutMs: number): Promise<void> {
    const tps = [...partitions].map(({ topic, partition }) => this.tpName(topic, partition));
    if (this.runningIn.busy(tps)) await this.runningIn.idle(tps, timeoutMs);
  }

  /** Queues released messages for the handler (and starts handing them out). */
  accept(released: Release<M>[]): void {
    if (released.length === 0) return;
    // Lanes keep calls of one key (or partition) apart. With one call at a time, release order
    // alone keeps them apart: no lane is made, unless some are (drop() made them for messages
    // waiting for predecessors that left), which a message of theirs must then join.
    const laned = this.ordering !== 'none' && (this.concurrency > 1 || this.batchLimit > 0 || this.queue.laned);
    const byPartition = this.ordering === 'partition';
    /** Releases left out below (of partitions leaving): the key's next release in this batch, and a successor, are not in order after them. */
    let left: LeftOut | undefined;
    for (let r of released) {
      const m = r.message;
      const tp = this.tpName(m.topic, m.partition);
      let pending = this.unhandled.get(tp);
      if (!pending) this.unhandled.set(tp, (pending = new Set()));
      pending.add(m.offset);
      if (r.order !== null) {
        let marked = this.unhandledMarked.get(tp);
        if (!marked) this.unhandledMarked.set(tp, (marked = new Map()));
        marked.set(m.offset, r.order);
      }
      if (this.leaving.size > 0 && this.leaving.has(tp)) {
        this.unreleased(r);
        if (this.ordering === 'key' && hasKey(m)) (left ??= new LeftOut()).leave(keyLane(m), r);
        continue;
      }
      if (left !== undefined && hasKey(m) && left.open) r = left.kept(keyLane(m), r);
      this.queue.add(r, tp, pending, laned, byPartition);
    }
    this.pump();
  }

  /** partitionKey(topic, partition), made once. */
  private tpName(topic: string, partition: number): string {
    let names = this.tpNames.get(topic);
    if (names === undefined) this.tpNames.set(topic, (names = []));
    return names[partition] ??= partitionKey(topic, partition);
  }

  /** Starts handler calls while fewer than `concurrency` are under way and a task may start. */
  private pump(): void {
    if (this.pumping) return;
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
    let result: void | Promise<void>;
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
    if (result !== null && typeof result === 'object' && typeof (result as Promise<void>).then === 'function') {
      (result as Promise<void>).then(() => this.done(task, generation, true), (cause) => this.failed(task, attempts, generation, cause));
    } else this.done(task, generation, true);
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
    if (this.unhandled.get(task.tp) !== task.pending) return;
    const offset = task.release.message.offset;
    task.pending.delete(offset);
    if (task.release.order !== null) {
      this.unhandledMarked.get(task.tp)?.delete(offset);
      this.hooks.handledMarked?.();
    }
  }

  /** A partition's offsets released and not handled yet, and the order headers of the marked ones among them. */
  unhandledOf(topic: string, partition: number): [Iterable<number>, Iterable<OrderHeader>] {
    const tp = this.tpName(topic, partition);
    return [this.unhandled.get(tp) ?? [], this.unhandledMarked.get(tp)?.values() ?? []];
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    let offset = this.resequencer.committable(topic, partition);
    const pending = this.unhandled.get(this.tpName(topic, partition));
    if (pending) for (const o of pending) if (offset === undefined || o < offset) offset = o;
    return offset;
  }

  /**
   * The offsets to commit for `partitions` (their safe offsets; with `onlyMoved`, those that
   * moved since the last commit), remembered as committed.
   */
  toCommit(partitions: Iterable<{ topic: string; partition: number }>, onlyMoved: boolean,
    recordOf?: (topic: string, partition: number, offset: number) => string | undefined): PartitionOffset[] {
    const offsets: PartitionOffset[] = [];
    for (const { topic, partition } of partitions) {
      const offset = this.safeOffset(topic, partition);
      const tp = this.tpName(topic, partition);
      if (offset === undefined) continue;
      // With handled records, a commit also goes when only the record changed (other members wait for it).
      const metadata = recordOf?.(topic, partition, offset);
      if (onlyMoved && this.lastCommitted.get(tp) === offset && this.lastRecord.get(tp) === metadata) continue;
      offsets.push(metadata === undefined ? { topic, partition, offset } : { topic, partition, offset, metadata });
      this.lastCommitted.set(tp, offset);
      this.lastRecord.set(tp, metadata);
    }
    return offsets;
  }

  /** A commit of `offsets` failed: they are committed again next time. */
  notCommitted(offsets: readonly PartitionOffset[]): void {
    for (const { topic, partition, offset } of offsets) {
      const tp = this.tpName(topic, partition);
      if (this.lastCommitted.get(tp) === offset) {
        this.lastCommitted.delete(tp);
        this.lastRecord.delete(tp);
      }
    }
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
    const byTopic = new Map<string, number[]>();
    for (const { topic, partition } of partitions) {
      const list = byTopic.get(topic);
      if (list) list.push(partition);
      else byTopic.set(topic, [partition]);
    }
    for (const [topic, list] of byTopic) this.resequencer.assign(topic, list);
  }

  /**
   * Drops what waits of partitions that leave (their next owner reads it again from the
   * committed offset); a call of theirs under way goes on (see settled()).
   */
  drop(partitions: Iterable<{ topic: string; partition: number }>): void {
    const gone = new Set<string>();
    for (const { topic, partition } of partitions) gone.add(this.tpName(topic, partition));
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
      const offset = task.release.message.offset;
      if (this.unhandled.get(task.tp) === task.pending) {
        task.pending.delete(offset);
        this.unhandledMarked.get(task.tp)?.delete(offset);
      }
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
      const tp = this.tpName(topic, partition);
      this.unhandled.delete(tp);
      this.unhandledMarked.delete(tp);
      this.lastCommitted.delete(tp);
      this.lastRecord.delete(tp);
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
    this.unhandled.clear();
    this.unhandledMarked.clear();
    this.lastCommitted.clear();
    this.lastRecord.clear();
    this.leaving.clear();
  }
}
