// DynamicConsumer's (consumer.ts) fetch loop throttled while the handler is behind (src/delivery/backpressure.ts), and its partitions
// paused in librdkafka when that lasts, resumed when the handler catches up.

import { toKafkaError } from '../core/errors';
import type { Backpressure } from '../delivery/backpressure';

/** How long the fetch loop waits while the handler is behind before the partitions are paused in librdkafka (ms). */
const WAIT_MS = 1000;

/** What the throttle asks of its consumer. */
export interface FetchThrottleHost {
  /** The partitions to pause or resume: a running consumer's, else none. */
  partitions(): Array<{ topic: string; partition: number }>;
  pause(partitions: Array<{ topic: string; partition: number }>, paused: boolean): void;
  emit(event: 'paused' | 'resumed'): void;
  warn(err: Error): void;
  fetch(): void;
}

export class FetchThrottle {
  /** Whether the partitions are paused in librdkafka. */
  paused = false;
  /** Fetching held (no consume call): the timer that looks again. */
  private waitTimer: NodeJS.Timeout | undefined;

  constructor(private readonly host: FetchThrottleHost) {}

  /**
   * Whether fetching is held (no consume call) for the handler behind: up to WAIT_MS at a time, while librdkafka fills its own bounded
   * queue (pausing would throw away what it fetched, and the fetch after a resume waits for the one in flight). Held longer, the
   * partitions are paused and consume calls go on (they serve rebalances and keep max.poll.interval.ms).
   */
  waits(pressure: Backpressure): boolean {
    if (!pressure.full()) return false;
    if (!this.paused && pressure.heldFor() >= WAIT_MS) this.setPaused(true);
    if (this.paused) return false;
    this.waitTimer = setTimeout(() => {
      this.waitTimer = undefined;
      this.host.fetch();
    }, WAIT_MS);
    return true;
  }

  /** The consumer stops: a wait's timer goes (it would fetch again). */
  stop(): void {
    if (this.waitTimer !== undefined) clearTimeout(this.waitTimer);
    this.waitTimer = undefined;
  }

  /** The handler caught up: fetching goes on, the partitions resumed if they were paused. */
  caughtUp(): void {
    if (this.paused) this.setPaused(false);
    if (this.waitTimer !== undefined) {
      clearTimeout(this.waitTimer);
      this.waitTimer = undefined;
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
