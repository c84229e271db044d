// Commits one at a time, for the consumers whose client commits with a promise (the KafkaJS
// adapter, src/kafkajs/commits.ts; @platformatic/kafka's, src/platformatic/consumer-commits.ts):
// a commit asked for while one is under way goes once that one is back, the latest ask only,
// so that the group's coordinator never holds a queue of them.

import { delay } from '../core/time';

export class CommitTurns {
  /** A commit is under way. */
  private committing = false;
  /** The commit asked for meanwhile. */
  private again: (() => Promise<unknown> | undefined) | undefined;

  /**
   * Makes `commit` now, or once the commit under way is back (in place of one asked for
   * before). `commit` returns its promise, or undefined when it found nothing to commit.
   */
  take(commit: () => Promise<unknown> | undefined): void {
    if (this.committing) {
      this.again = commit;
      return;
    }
    this.again = undefined;
    const underWay = commit();
    if (underWay === undefined) return;
    this.committing = true;
    void underWay.finally(() => {
      this.committing = false;
      const again = this.again;
      if (again !== undefined) this.take(again);
    });
  }

  /** Resolves once no commit is under way. */
  async settled(): Promise<void> {
    while (this.committing) await delay(5);
  }
}
