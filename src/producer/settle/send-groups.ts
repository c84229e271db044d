// send() calls settled in groups, on the native engine. The send() calls whose messages go
// into the engine's batch together for one partition form a SendGroup (joined at hand-over:
// settle/opaque.ts): each call's promise is the group's promise followed by `take`, and the
// group's promise resolves once every member has its outcome (the reactions of one promise run
// in the order they were added, so take's k-th run is member k's). A member waits at most for
// the others of its partition's batch, which librdkafka sends together. Why: docs/native.md.

import type { Key } from '../../core/key';
import { MemberPending, type Settles } from '../take/send-batch';
import type { DeliveryReport, Pending } from '../types';

export class SendGroup implements Settles {
  /**
   * Per member: its report or its error once it has one (undefined before, and once taken);
   * made at the first outcome, when the group has all its members (no array grown per member).
   */
  private outcomes: Array<DeliveryReport | Error | undefined> | undefined;
  /** Members, and those without an outcome. */
  private size = 0;
  private left = 0;
  /** Members whose promise is `take`'s, made in member order (the rest, if any, have one of their own). */
  private inOrder = 0;
  private ordered = true;
  /** `take`'s next member. */
  next = 0;
  /** Whether every member has its outcome: a group takes no member after. */
  done = false;
  private resolve!: (group: SendGroup) => void;
  private readonly settledAll = new Promise<SendGroup>((resolve) => {
    this.resolve = resolve;
  });

  /** A new member: its index. */
  add(): number {
    this.left++;
    return this.size++;
  }

  /** Takes back the last member, before its promise was made (its message was refused at once). */
  drop(): void {
    this.size--;
    this.left--;
    if (this.outcomes !== undefined && this.outcomes.length > this.size) this.outcomes.length = this.size;
  }

  /** Member `member`'s promise: made once per member, in member order (else a reaction of its own). */
  promiseOf(member: number): Promise<DeliveryReport> {
    if (this.ordered && member === this.inOrder) {
      this.inOrder++;
      return this.settledAll.then(take);
    }
    this.ordered = false;
    return this.settledAll.then((group) => group.outcomeOf(member));
  }

  /** Member `member`'s outcome; a second one is ignored (a report after a disconnect settled it). */
  settle(member: number, outcome: DeliveryReport | Error, _failed?: boolean): void {
    let outcomes = this.outcomes;
    if (outcomes === undefined) outcomes = this.outcomes = new Array(this.size);
    if (this.done || outcomes[member] !== undefined) return;
    outcomes[member] = outcome;
    if (--this.left === 0) {
      this.done = true;
      this.resolve(this);
    }
  }

  /** The member as a Pending, for the paths that settle one (a refusal, a disconnect): made only there. */
  member(member: number, key: Key | null): Pending {
    return new MemberPending(this, member, key);
  }

  /** Member `member`'s report, or its error thrown; forgotten here. */
  outcomeOf(member: number): DeliveryReport {
    const outcomes = this.outcomes!;
    const outcome = outcomes[member];
    outcomes[member] = undefined;
    if (outcome instanceof Error) throw outcome;
    return outcome as DeliveryReport;
  }
}

/** The promise reaction of the members in order: the next one's outcome. */
function take(group: SendGroup): DeliveryReport {
  return group.outcomeOf(group.next++);
}
