// The promise a sendBatch() call gets back when its messages are taken (take/intake.ts): one
// MemberPending per message, the opaque its outcome settles as a send()'s (settle/outcomes.ts),
// all counting into one SendBatch that settles the call once every message has its outcome:
// the reports in input order, or a BatchError with every outcome.

import { BatchError } from '../../core/errors';
import type { Key } from '../../core/key';
import { SEND } from '../types';
import type { DeliveryReport, Pending } from '../types';

export class SendBatch {
  readonly outcomes: Array<DeliveryReport | Error>;
  private left: number;
  private failed = 0;

  constructor(size: number, private readonly resolve: (reports: DeliveryReport[]) => void, private readonly reject: (err: BatchError) => void,
    /** Called once every message has its outcome, before the promise settles. */
    private readonly done: () => void = () => {}) {
    this.outcomes = new Array(size);
    this.left = size;
    if (size === 0) {
      done();
      resolve([]);
    }
  }

  /** Message i's outcome. */
  settle(i: number, outcome: DeliveryReport | Error, failed: boolean): void {
    this.outcomes[i] = outcome;
    if (failed) this.failed++;
    if (--this.left > 0) return;
    this.done();
    if (this.failed === 0) this.resolve(this.outcomes as DeliveryReport[]);
    else this.reject(new BatchError(this.outcomes, this.failed));
  }
}

/** What a MemberPending settles: a sendBatch()'s SendBatch, or a group of send() calls (settle/send-groups.ts). */
export interface Settles {
  settle(i: number, outcome: DeliveryReport | Error, failed: boolean): void;
}

/** Message i of a batch (or of a send() group), as the opaque its report settles (no closure per message). */
export class MemberPending implements Pending {
  readonly [SEND] = true as const;
  constructor(private readonly batch: Settles, private readonly index: number, public key: Key | null) {}

  resolve(report: DeliveryReport): void {
    this.batch.settle(this.index, report, false);
  }

  reject(err: Error): void {
    this.batch.settle(this.index, err, true);
  }
}
