// What every consumer of this package puts between the Resequencer and the application's
// handler (DynamicConsumer for node-rdkafka's API, KafkaJsDynamicConsumer for the KafkaJS API
// of Confluent's client): the queue of released messages, handed to the handler one at a time
// (a failed one retried in place, nothing behind it going first); per partition, the offsets
// released but not handled yet; and from both, the offset that may be committed (below every
// message held or not handled yet: at least once).

import type { Resequencer, Release, ConsumedMessage } from './resequencer';
import type { OrderHeader } from '../partitioner/headers';
import { HandlerError } from '../core/errors';
import { delay } from '../core/time';

/** What the handler gets besides the message (from the Resequencer's Release). */
export interface HandledInfo {
  /**
   * True when its predecessor in its producer's chain of the key was handled first (here, or
   * by another member of the group before an ordered handoff); true for a message of no chain.
   * After a message handed out with ordered false, later ones are in order after it only (see
   * Release.ordered).
   */
  readonly ordered: boolean;
  /** `!ordered`. */
  readonly outOfOrder: boolean;
  /** Why it went before its predecessor: 'capacity', 'timeout', 'flush' or 'unowned'. */
  readonly reason?: Release['reason'];
  /** Its decoded order header (producer id, sequence, previous, ...), or null when it has none. */
  readonly order: OrderHeader | null;
}

export interface PartitionOffset {
  topic: string;
  partition: number;
  offset: number;
}

/** The key of a topic-partition in the maps below. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** What the dispatcher asks of the consumer that owns it. */
export interface DispatchHooks<M> {
  /** Calls the application's handler. */
  handle(message: M, info: HandledInfo): void | Promise<void>;
  /** Whether a partition (partitionKey) is still this consumer's: a failed message of a revoked one is left to its next owner. */
  owns(key: string): boolean;
  /** One failed call of the handler (the message is handed to it again unless the retries are used up). */
  handlerError(error: HandlerError, message: M): void;
  /** The retries are used up on a message: nothing more is handled; the consumer stops. */
  fail(error: HandlerError): void;
  /** The queue got shorter. */
  progress(): void;
}

export class Dispatcher<M extends ConsumedMessage> {
  /** Released messages waiting for the handler, in release order. */
  readonly queue: Release<M>[] = [];
  /** Per topic-partition: offsets released to the queue but not yet handled. */
  private readonly unhandled = new Map<string, Set<number>>();
  /** Per topic-partition: the offset last committed (or being committed). */
  private readonly lastCommitted = new Map<string, number>();
  private working = false;
  /** Bumped by halt(): a handler loop started before stops at its next step. */
  private generation = 0;

  constructor(
    readonly resequencer: Resequencer<M>,
    private readonly retries: number,
    private readonly retryBackoffMs: number,
    private readonly hooks: DispatchHooks<M>,
  ) {}

  /** The handler is working, or messages wait for it. */
  get busy(): boolean {
    return this.working || this.queue.length > 0;
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

  /** Queues released messages for the handler (and starts handing them out). */
  accept(released: Release<M>[]): void {
    for (const r of released) {
      const tp = partitionKey(r.message.topic, r.message.partition);
      let set = this.unhandled.get(tp);
      if (!set) this.unhandled.set(tp, (set = new Set()));
      set.add(r.message.offset);
      this.queue.push(r);
    }
    if (!this.working && this.queue.length > 0) void this.work();
  }

  /**
   * Hands the queue to the handler, one message at a time. A failed message is retried in
   * place (nothing queued behind it goes first); it stays in `unhandled` until it succeeds,
   * so no commit passes it.
   */
  private async work(): Promise<void> {
    const generation = this.generation;
    this.working = true;
    try {
      while (this.queue.length > 0 && generation === this.generation) {
        const r = this.queue.shift()!;
        const { topic, partition, offset } = r.message;
        const tp = partitionKey(topic, partition);
        const pending = this.unhandled.get(tp);
        const info: HandledInfo = r.ordered
          ? { ordered: true, outOfOrder: false, order: r.order }
          : { ordered: false, outOfOrder: true, reason: r.reason, order: r.order };
        for (let attempts = 1; ; attempts++) {
          try {
            await this.hooks.handle(r.message, info);
            if (this.unhandled.get(tp) === pending) pending?.delete(offset);
            break;
          } catch (cause) {
            const error = new HandlerError(topic, partition, offset, attempts, cause);
            this.hooks.handlerError(error, r.message);
            if (generation !== this.generation || !this.hooks.owns(tp)) break; // stopped, or revoked: read again by its next owner
            if (attempts > this.retries) {
              this.queue.length = 0;
              this.hooks.fail(error);
              return;
            }
            if (this.retryBackoffMs > 0) await delay(this.retryBackoffMs);
            if (generation !== this.generation || !this.hooks.owns(tp)) break;
          }
        }
        this.hooks.progress();
      }
    } finally {
      if (generation === this.generation) this.working = false;
    }
  }

  /** The offset that may be committed for a partition: below every message held or not yet handled. */
  safeOffset(topic: string, partition: number): number | undefined {
    let offset = this.resequencer.committable(topic, partition);
    const pending = this.unhandled.get(partitionKey(topic, partition));
    if (pending) for (const o of pending) if (offset === undefined || o < offset) offset = o;
    return offset;
  }

  /**
   * The offsets to commit for `partitions` (their safe offsets; with `onlyMoved`, those that
   * moved since the last commit), remembered as committed.
   */
  toCommit(partitions: Iterable<{ topic: string; partition: number }>, onlyMoved: boolean): PartitionOffset[] {
    const offsets: PartitionOffset[] = [];
    for (const { topic, partition } of partitions) {
      const offset = this.safeOffset(topic, partition);
      const tp = partitionKey(topic, partition);
      if (offset === undefined || (onlyMoved && this.lastCommitted.get(tp) === offset)) continue;
      offsets.push({ topic, partition, offset });
      this.lastCommitted.set(tp, offset);
    }
    return offsets;
  }

  /** A commit of `offsets` failed: they are committed again next time. */
  notCommitted(offsets: readonly PartitionOffset[]): void {
    for (const { topic, partition, offset } of offsets) {
      const tp = partitionKey(topic, partition);
      if (this.lastCommitted.get(tp) === offset) this.lastCommitted.delete(tp);
    }
  }

  /**
   * The group's committed offsets of partitions the resequencer awaits: what waited for them
   * goes to the queue. A negative offset (nothing committed yet) or an entry with an error is skipped.
   */
  committedRead(offsets: ReadonlyArray<{ topic: string; partition: number; offset?: unknown; error?: unknown }>): void {
    for (const tp of offsets) {
      if (tp.error || !(typeof tp.offset === 'number' && Number.isInteger(tp.offset) && tp.offset >= 0)) continue;
      this.accept(this.resequencer.setCommitted(tp.topic, tp.partition, tp.offset));
    }
  }

  /**
   * Forgets partitions that leave: what is held or queued of them is dropped (their next
   * owner reads it again from the committed offset), and nothing remembered of them is
   * committed if they come back.
   */
  forget(partitions: Iterable<{ topic: string; partition: number }>): void {
    const gone = new Set<string>();
    for (const { topic, partition } of partitions) {
      const tp = partitionKey(topic, partition);
      gone.add(tp);
      this.unhandled.delete(tp);
      this.lastCommitted.delete(tp);
      this.resequencer.forget(topic, partition);
    }
    if (gone.size === 0) return;
    let kept = 0;
    for (const r of this.queue) if (!gone.has(partitionKey(r.message.topic, r.message.partition))) this.queue[kept++] = r;
    this.queue.length = kept;
    this.hooks.progress();
  }

  /**
   * Nothing more is handed out: the queue is dropped (it stays in `unhandled`, so a commit
   * made after this stays below it) and a handler loop under way stops at its next step.
   */
  halt(): void {
    this.queue.length = 0;
    this.generation++;
    this.working = false;
  }

  /** Forgets every offset (after a stop: the next run starts from the committed offsets). */
  clear(): void {
    this.unhandled.clear();
    this.lastCommitted.clear();
  }
}
