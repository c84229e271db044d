// A DynamicConsumer's (src/consumer/consumer.ts) fetching held while its handler is behind
// (maxPending released messages waiting): when it fell behind, the partitions paused in
// librdkafka when that lasts (consumer.ts's fetch() decides when), resumed when the handler
// catches up, and the Resequencer's clock, which stands still meanwhile.

import { toKafkaError } from '../core/errors';

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
