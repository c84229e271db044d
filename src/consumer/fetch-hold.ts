// DynamicConsumer's (consumer.ts) fetch loop held while the handler is behind (src/delivery/backpressure.ts), and its partitions
// paused in librdkafka when that lasts, resumed when the handler catches up.

import { toKafkaError } from '../core/errors';
import type { Backpressure } from '../delivery/backpressure';

/** How long fetching is held while the handler is behind before the partitions are paused in librdkafka (ms). */
const HOLD_MS = 1000;

/** What the hold asks of its consumer. */
export interface FetchHoldHost {
  /** The partitions to pause or resume: a running consumer's, else none. */
  partitions(): Array<{ topic: string; partition: number }>;
  pause(partitions: Array<{ topic: string; partition: number }>, paused: boolean): void;
  emit(event: 'paused' | 'resumed'): void;
  warn(err: Error): void;
  fetch(): void;
}

export class FetchHold {
  /** Whether the partitions are paused in librdkafka. */
  paused = false;
  /** Fetching held (no consume call): the timer that looks again. */
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(private readonly host: FetchHoldHost) {}

  /**
   * Whether fetching is held (no consume call) for the handler behind: up to HOLD_MS at a time, while librdkafka fills its own bounded
   * queue (pausing would throw away what it fetched, and the fetch after a resume waits for the one in flight). Held longer, the
   * partitions are paused and consume calls go on (they serve rebalances and keep max.poll.interval.ms).
   */
  holds(pressure: Backpressure): boolean {
    if (!pressure.full()) return false;
    if (!this.paused && pressure.heldFor() >= HOLD_MS) this.setPaused(true);
    if (this.paused) return false;
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      this.host.fetch();
    }, HOLD_MS);
    return true;
  }

  /** The consumer stops: a hold's timer goes (it would fetch again). */
  stop(): void {
    if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
  }

  /** The handler caught up: fetching goes on, the partitions resumed if they were paused. */
  caughtUp(): void {
    if (this.paused) this.setPaused(false);
    if (this.holdTimer !== undefined) {
      clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
      setImmediate(() => this.host.fetch());
    }
  }

  private setPaused(paused: boolean): void {
    // Only a running consumer's client is paused or resumed: one disconnecting throws.
    const partitions = this.host.partitions();
    if (partitions.length > 0) {
      try {
        this.host.pause(partitions, paused);
      } catch (err) {
        this.host.warn(toKafkaError(err, paused ? 'pause' : 'resume'));
      }
    }
    this.paused = paused;
    this.host.emit(paused ? 'paused' : 'resumed');
  }
}
