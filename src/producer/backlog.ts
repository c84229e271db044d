// Messages taken while librdkafka's queue is full, retried in order on the next turn of the
// event loop (and as delivery reports free room); the send() calls waiting for room while
// more than maxQueued messages are held (the memory bound); and when 'drain' is due to a
// produce() that said false.

import type { Queued } from './types';

/** librdkafka's RD_KAFKA_RESP_ERR__QUEUE_FULL (rdkafka.h): hold the message and retry. */
export const ERR_QUEUE_FULL = -184;

export interface BacklogHooks<M extends Queued> {
  /** Called before a retry: lets librdkafka hand out delivery reports (and free room). */
  poll(): void;
  /** Gives a message to librdkafka: its error code, 0 on success. */
  handOver(m: M): number;
  /** A held message refused for good (any code but 0 and ERR_QUEUE_FULL). */
  refused(code: number, m: M): void;
  /** Every message held by the producer (this backlog and the handoffs'), against maxQueued. */
  held(): number;
  /** 'drain' is due: the backlog emptied (and what is held elsewhere allows it, see drainedIfDue). */
  drained(): void;
}

export class Backlog<M extends Queued> {
  private items: M[] = [];
  private head = 0;
  private scheduled = false;
  /** produce() said false because maxQueued messages were held outside the backlog (handoffs): 'drain' is owed. */
  private owed = false;
  /** send() calls (and produce() calls behind them) waiting for room, in call order, from waitersHead on. */
  private waiters: Array<(() => void) | undefined> = [];
  private waitersHead = 0;

  constructor(private readonly maxQueued: number, private readonly hooks: BacklogHooks<M>) {}

  /** Messages held here. */
  get size(): number {
    return this.items.length - this.head;
  }

  /** Whether messages are held here (a new one must go behind them). */
  get holding(): boolean {
    return this.items.length > this.head;
  }

  /** Whether a drain is due on the next turn of the event loop. */
  get scheduledDrain(): boolean {
    return this.scheduled;
  }

  /** How many calls wait for room. */
  get waiting(): number {
    return this.waiters.length - this.waitersHead;
  }

  hold(m: M): void {
    this.items.push(m);
    this.schedule();
  }

  /** produce() said false for a message held outside the backlog (maxQueued reached): 'drain' is owed. */
  owe(): void {
    this.owed = true;
  }

  /** Whether 'drain' is owed for messages held outside the backlog. */
  get owing(): boolean {
    return this.owed;
  }

  /**
   * 'drain', once produce() may say true again: the backlog is empty, and when it is owed for
   * messages held outside it, no more than half of maxQueued is left.
   */
  drainedIfDue(): void {
    if (this.holding) return;
    if (this.owed) {
      if (this.hooks.held() > this.maxQueued / 2) return;
      this.owed = false;
    }
    this.hooks.drained();
  }

  /** Queues a call until fewer than maxQueued messages are held. */
  waitForRoom(attempt: () => void): void {
    this.waiters.push(attempt);
  }

  /**
   * Retries the held messages on the next turn of the event loop (librdkafka's queue empties
   * as its threads send); delivery reports also retry as they arrive.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  /** Hands held messages over in order until the queue is full again; 'drain' once all are. */
  drain(): void {
    this.hooks.poll();
    const items = this.items;
    while (this.head < items.length) {
      const m = items[this.head];
      const code = this.hooks.handOver(m);
      if (code === ERR_QUEUE_FULL) break;
      items[this.head++] = undefined as unknown as M;
      if (code !== 0) this.hooks.refused(code, m);
    }
    if (this.head === items.length) {
      this.items = [];
      this.head = 0;
      this.wake();
      this.drainedIfDue();
    } else {
      if (this.head > 4096 && this.head * 2 > items.length) {
        this.items = items.slice(this.head);
        this.head = 0;
      }
      this.wake();
      this.schedule();
    }
  }

  /** Lets waiting calls go while fewer than maxQueued messages are held. */
  wake(): void {
    // An index, not shift(): shift() moves the whole array each time once it is large, and a
    // burst of send() calls may leave hundreds of thousands waiting.
    // A waiting call may wait again (pushed behind) or, through a report, call wake() itself:
    // the queue is read from the fields each time.
    while (this.waitersHead < this.waiters.length && this.hooks.held() < this.maxQueued) {
      const attempt = this.waiters[this.waitersHead]!;
      this.waiters[this.waitersHead++] = undefined;
      attempt();
    }
    if (this.waitersHead === this.waiters.length) {
      this.waiters = [];
      this.waitersHead = 0;
    } else if (this.waitersHead > 4096 && this.waitersHead * 2 > this.waiters.length) {
      this.waiters = this.waiters.slice(this.waitersHead);
      this.waitersHead = 0;
    }
  }

  /** Empties it (disconnect): runs every waiting call (each finds the producer closed), returns the held messages. */
  take(): M[] {
    const waiters = this.waiters.slice(this.waitersHead);
    this.waiters = [];
    this.waitersHead = 0;
    for (const waiter of waiters) waiter!();
    const out = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return out;
  }
}
