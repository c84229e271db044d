// Commits one at a time (commits.ts): a commit asked for while one is under way goes once that
// one is back, the latest ask only, so that the group's coordinator never holds a queue of them.
// One unanswered past `stuckMs` stops holding the next back: a client that answers only when
// polled (node-rdkafka) may answer long after the commit went.

import { delay } from '../core/time';

export class CommitTurns {
  /** When the commit under way was made (0: none). */
  private since = 0;
  /** The commit asked for meanwhile. */
  private again: (() => Promise<unknown> | undefined) | undefined;

  constructor(private readonly stuckMs = Number.POSITIVE_INFINITY) {}

  private get committing(): boolean {
    return this.since > 0 && performance.now() - this.since < this.stuckMs;
  }

  /** Makes `commit` now, or once the one under way is back (replacing an earlier ask); it returns undefined for nothing to commit. */
  take(commit: () => Promise<unknown> | undefined): void {
    if (this.committing) {
      this.again = commit;
      return;
    }
    this.again = undefined;
    const underWay = commit();
    if (underWay === undefined) return;
    const since = performance.now();
    this.since = since;
    void underWay.then(() => undefined, () => undefined).then(() => {
      if (this.since !== since) return; // a later commit went meanwhile (this one was stuck)
      this.since = 0;
      const again = this.again;
      if (again !== undefined) this.take(again);
    });
  }

  /** Resolves once no commit holds the next one back. */
  async idle(): Promise<void> {
    while (this.committing) await delay(5);
  }
}
