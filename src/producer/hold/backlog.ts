// Messages taken while librdkafka's queue is full, retried in order on the next turn of the
// event loop (and as delivery reports free room), and when 'drain' is due to a produce() that
// said false. The calls waiting for room before they are taken: take/room.ts.

import { Fifo } from '../../core/fifo';
import { ERR_QUEUE_FULL } from '../../core/rdkafka-codes';
import type { Queued } from '../types';

export interface BacklogHooks<M extends Queued> {
  /** Called before a retry: lets librdkafka hand out delivery reports (and free room). */
  poll(): void;
  /** Gives a message to librdkafka: its error code, 0 on success. */
  handOver(m: M): number;
  /** A held message refused for good (any code but 0 and ERR_QUEUE_FULL). */
  refused(code: number, m: M): void;
  /** Every message held by the producer (this backlog and the handoffs'), against maxQueued. */
  held(): number;
  /** Messages were handed over: the calls waiting for room may go (take/room.ts). */
  wake(): void;
  /** 'drain' is due: the backlog emptied (and what is held elsewhere allows it, see drainedIfDue). */
  drained(): void;
}

export class Backlog<M extends Queued> {
  private readonly items = new Fifo<M>();
  private scheduled = false;
  /** produce() said false because maxQueued messages were held outside the backlog (handoffs): 'drain' is owed. */
  private owed = false;

  constructor(private readonly maxQueued: number, private readonly hooks: BacklogHooks<M>) {}

  /** Messages held here. */
  get size(): number {
    return this.items.size;
  }

  /** Whether messages are held here (a new one must go behind them). */
  get holding(): boolean {
    return this.items.size > 0;
  }

  /** Whether a drain is due on the next turn of the event loop. */
  get scheduledDrain(): boolean {
    return this.scheduled;
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
    while (items.size > 0) {
      const m = items.peek();
      const code = this.hooks.handOver(m);
      if (code === ERR_QUEUE_FULL) break;
      items.shift();
      if (code !== 0) this.hooks.refused(code, m);
    }
    this.hooks.wake();
    if (items.size === 0) this.drainedIfDue();
    else this.schedule();
  }

  /** Empties it (disconnect): the held messages, for their callers to be told. */
  take(): M[] {
    return this.items.takeAll();
  }
}
