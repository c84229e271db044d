// The calls waiting for room before they are taken (take/intake.ts). While maxQueued messages
// are held (the memory bound), send() and sendBatch() calls, and a produce() behind them, wait
// here in call order; they go as the messages held are handed over or settled (hold/backlog.ts,
// settle/outcomes.ts), and a disconnect runs every one still waiting. While a transaction ends
// (hold()), every new call waits here too, for the next transaction; those that waited before
// still go in this one (`owed`).

import { Fifo } from '../../core/fifo';

export class Room {
  /** The calls waiting, in call order (a burst may leave very many). */
  private readonly waiters = new Fifo<() => void>();
  /** hold() calls not yet released: new calls wait while there are some. */
  private holds = 0;
  /** Of the calls waiting, those that waited before the hold (the first ones): they still go while it lasts. */
  private beforeHold = 0;
  /** wake() is running calls: they are not new ones. */
  private waking = false;

  /** `held()`: every message the producer holds (place/placement.ts), against `maxQueued`. */
  constructor(private readonly maxQueued: number, private readonly held: () => number) {}

  /** Whether maxQueued messages are held, or a transaction ends: a new call waits. */
  get full(): boolean {
    return this.held() >= this.maxQueued || (this.holds > 0 && !this.waking);
  }

  /** A transaction ends: new calls wait (for the next one). */
  get holding(): boolean {
    return this.holds > 0;
  }

  /** The calls waiting that go before the hold ends (all of them without one): a transaction's end waits for them. */
  get owed(): number {
    return this.holds > 0 ? this.beforeHold : this.waiters.size;
  }

  /** From now until as many release(), new calls wait; those waiting already still go. */
  hold(): void {
    if (this.holds++ === 0) this.beforeHold = this.waiters.size;
  }

  /** Ends a hold(); the last lets the calls that waited go, and returns how many waited (0 while holds remain). */
  release(): number {
    if (this.holds === 0 || --this.holds > 0) return 0;
    const waited = this.waiters.size;
    this.beforeHold = 0;
    this.wake();
    return waited;
  }

  /** How many calls wait. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Queues a call until fewer than maxQueued messages are held. */
  wait(attempt: () => void): void {
    this.waiters.push(attempt);
  }

  /** Lets waiting calls go while fewer than maxQueued messages are held (during a hold, only those that waited before it). */
  wake(): void {
    if (this.waking) return;
    this.waking = true;
    try {
      while (this.waiters.size > 0 && this.held() < this.maxQueued && (this.holds === 0 || this.beforeHold > 0)) {
        if (this.holds > 0) this.beforeHold--;
        this.waiters.shift()();
      }
    } finally {
      this.waking = false;
    }
  }

  /** Runs every waiting call (a disconnect: each finds the producer closed). */
  releaseAll(): void {
    for (const waiter of this.waiters.takeAll()) waiter();
  }
}
