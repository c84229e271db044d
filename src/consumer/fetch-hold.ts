// A DynamicConsumer's (src/consumer/consumer.ts) fetching held while its handler is behind
// (maxPending released messages waiting): when it fell behind, whether its next consume call
// waits, the partitions paused in librdkafka when that lasts, resumed when the handler
// catches up, and the Resequencer's clock, which stands still meanwhile.

import { toKafkaError } from '../core/errors';

/** How long fetching is held while the handler is behind before the partitions are paused in librdkafka (ms). */
const HOLD_MS = 1000;

/** What the hold asks of its consumer. */
export interface FetchHoldHost {
  /** Released messages waiting for a handler call. */
  waiting(): number;
  /** The partitions to pause or resume: a running consumer's, else none. */
  partitions(): Array<{ topic: string; partition: number }>;
  /** Pauses (or resumes) `partitions` in librdkafka. */
  pause(partitions: Array<{ topic: string; partition: number }>, paused: boolean): void;
  emit(event: 'paused' | 'resumed'): void;
  warn(err: Error): void;
  /** Fetches again (a hold ended early). */
  fetch(): void;
}

export class FetchHold {
  /** Whether the partitions are paused in librdkafka. */
  paused = false;
  /** Since when the handler has been behind (maxPending waiting; 0: it is not), and how long it was before (ms). */
  pausedAt = 0;
  pausedFor = 0;
  /** Fetching held (no consume call) because the handler is behind: the timer that looks again. */
  holdTimer: NodeJS.Timeout | undefined;

  constructor(private readonly maxPending: number, private readonly host: FetchHoldHost) {}

  /**
   * Whether the next consume call waits: the handler is behind (maxPending released messages
   * wait). Fetching is held (no consume call) until they are down to half, for up to HOLD_MS at
   * a time, then fetch() is called again: librdkafka keeps fetching into its own bounded queue
   * meanwhile. Pausing the partitions in librdkafka would throw away what it has fetched, and
   * after the resume the next fetch waits for the one in flight (up to fetch.wait.max.ms, 500
   * ms), which left the handler idle most of the time (docs/performance.md). Held longer than
   * HOLD_MS, the partitions are paused, and consume calls go on (they serve rebalances and keep
   * max.poll.interval.ms).
   */
  holds(): boolean {
    if (this.host.waiting() < this.maxPending) return false;
    this.behind();
    if (!this.paused && Date.now() - this.pausedAt >= HOLD_MS) this.setPaused(true);
    if (this.paused) return false;
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      this.host.fetch();
    }, HOLD_MS);
    return true;
  }

  /** The handler made progress: caught up once maxPending / 2 or fewer wait. */
  progress(): void {
    if (this.pausedAt > 0 && this.host.waiting() <= this.maxPending / 2) this.caughtUp();
  }

  /** The consumer stops: a hold's timer goes (it would fetch again). */
  stop(): void {
    if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
  }

  /** Marks when the handler fell behind (maxPending waiting): the resequencer's clock stops there at once; fetch() holds or pauses. */
  behind(): void {
    if (this.pausedAt === 0 && this.host.waiting() >= this.maxPending) this.pausedAt = Date.now();
  }

  /** The handler caught up (maxPending / 2 waiting): fetching goes on, the partitions resumed if they were paused. */
  caughtUp(): void {
    if (this.paused) this.setPaused(false);
    else if (this.pausedAt > 0) {
      this.pausedFor += Date.now() - this.pausedAt;
      this.pausedAt = 0;
    }
    if (this.holdTimer !== undefined) {
      clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
      setImmediate(() => this.host.fetch());
    }
  }

  /**
   * The resequencer's clock: time that stands still while fetching is paused because the
   * handler is behind. A held message waits maxWaitMs for its predecessor to be read, and
   * nothing is read meanwhile: that wait is the handler's, not the predecessor's.
   */
  clock(): number {
    return (this.pausedAt > 0 ? this.pausedAt : Date.now()) - this.pausedFor;
  }

  setPaused(paused: boolean): void {
    if (paused && this.pausedAt === 0) this.pausedAt = Date.now();
    else if (!paused && this.pausedAt > 0) {
      this.pausedFor += Date.now() - this.pausedAt;
      this.pausedAt = 0;
    }
    // Only a running consumer's client is paused or resumed: a handler call that ends after
    // stop() began (it was not waited for) must not touch a client that is disconnecting,
    // whose pause/resume throw (-172, "Local: Erroneous state").
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
