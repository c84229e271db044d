// Backpressure for every consumer (delivery.ts): once maxPending released messages wait for a
// handler call the adapter stops reading its client, and goes on when they are down to half. It
// waits in eachBatch, pauses its stream, or holds its fetch loop (fetch-throttle.ts). The
// resequencer's clock stands still meanwhile: a held message waits maxWaitMs for its predecessor
// to be read, and nothing is read then.

export class Backpressure {
  /** Since when reading is held (0: it is not), and how long it was held before (ms). */
  private since = 0;
  private total = 0;

  constructor(
    private readonly maxPending: number,
    private readonly waiting: () => number,
    private readonly resume: () => void,
  ) {}

  /** Reading is held. */
  get on(): boolean {
    return this.since > 0;
  }

  /** How long reading has been held this time (ms). */
  heldFor(): number {
    return this.since > 0 ? Date.now() - this.since : 0;
  }

  /** Whether reading must stop now: maxPending messages wait (from now the resequencer's clock stands still). */
  full(): boolean {
    if (this.waiting() < this.maxPending) return false;
    if (this.since === 0) this.since = Date.now();
    return true;
  }

  /** The handler made progress: reading goes on once half of maxPending or fewer wait. */
  progress(): void {
    if (this.since > 0 && this.waiting() <= this.maxPending / 2) this.release();
  }

  /** Reading goes on (the handler caught up, or the run stops). */
  release(): void {
    if (this.since === 0) return;
    this.total += Date.now() - this.since;
    this.since = 0;
    this.resume();
  }

  /** The resequencer's clock: time that stands still while reading is held. */
  clock(): number {
    return (this.since > 0 ? this.since : Date.now()) - this.total;
  }
}
