// The calls waiting for room before they are taken (take/intake.ts). While maxQueued messages
// are held (the memory bound), send() and sendBatch() calls, and a produce() behind them, wait
// here in call order; they go as the messages held are handed over or settled (hold/backlog.ts,
// settle/outcomes.ts), and a disconnect runs every one still waiting.

import { Fifo } from '../../core/fifo';

export class Room {
  /** The calls waiting, in call order (a burst may leave very many). */
  private readonly waiters = new Fifo<() => void>();

  /** `held()`: every message the producer holds (place/placement.ts), against `maxQueued`. */
  constructor(private readonly maxQueued: number, private readonly held: () => number) {}

  /** Whether maxQueued messages are held: a new call waits. */
  get full(): boolean {
    return this.held() >= this.maxQueued;
  }

  /** How many calls wait. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Queues a call until fewer than maxQueued messages are held. */
  wait(attempt: () => void): void {
    this.waiters.push(attempt);
  }

  /** Lets waiting calls go while fewer than maxQueued messages are held. */
  wake(): void {
    while (this.waiters.size > 0 && this.held() < this.maxQueued) this.waiters.shift()();
  }

  /** Runs every waiting call (a disconnect: each finds the producer closed). */
  releaseAll(): void {
    for (const waiter of this.waiters.takeAll()) waiter();
  }
}
