// How the Resequencer (resequencer.ts) holds and lets go, the rule of docs/ordering.md: where a
// message waits for its predecessor, and what a release lets go after it, in order. It waits for
// the predecessor, a partition's offset, another member's handled record, or not at all; the
// bounds release the oldest out of order. Its tables: held-messages.ts, partition-states.ts and
// released-chains.ts.

import type { OrderHeader } from '../partitioner/headers';
import type { ConsumedMessage, Release, ReleaseReason, ResequencerOptions } from './resequencer-types';
import { ReleasedChains } from './released-chains';
import { HeldMessages } from './held-messages';
import { type Held, type PartitionState, PartitionStates } from './partition-states';

export abstract class ReleaseRule<M extends ConsumedMessage> {
  readonly options: Required<ResequencerOptions>;
  /** What is remembered of each chain's released messages. */
  protected readonly chains: ReleasedChains;
  /** The held messages, by line, chain place and what they wait for, and oldest first. */
  protected readonly holding = new HeldMessages<M>();
  protected readonly topics = new PartitionStates();
  /** The group's members wait for each other's handled records (useRecords()). */
  protected records = false;

  protected constructor(options: Required<ResequencerOptions>, protected readonly now: () => number) {
    this.options = options;
    this.chains = new ReleasedChains(options.maxChains);
  }

  /**
   * How h, whose predecessor was not released here, waits: for it (on an owned partition), for a
   * partition to pass its offset (a handoff), for its record, or not at all (flagged unowned).
   */
  protected placeWait(h: Held<M>, order: OrderHeader): void {
    const t = h.state.topic;
    const before = order.afterPartition;
    // A predecessor on h's own partition, neither held nor unhandled here (released, h would follow
    // it), is below this consumer's start, handled by the previous owner: it would never come.
    if (before === h.message.partition) {
      if (this.holding.find(h.chain, order.previous) === undefined && !this.chains.unhandledHere(h.chain, order.previous)) return;
    }
    const state = before >= 0 ? this.topics.partition(t.name, before) : undefined;
    // The partition's record (its owner's last commit, or its previous owner's) shows it handled.
    if (state !== undefined && state.record !== null && state.record.handles(order)) return;
    if (state !== undefined && order.afterOffset >= 0) {
      const owned = this.topics.owns(t, before);
      if ((owned && state.first >= 0 && order.afterOffset < state.first) || order.afterOffset < state.committed) return;
      h.waitsChain = true;
      state.watchers.push(h);
      this.holding.waitFor(h, order);
      return;
    }
    if (state !== undefined && this.records && !this.topics.owns(t, before)) {
      // Another member's partition: its record will show the predecessor handled.
      h.waitsChain = true;
      state.watchers.push(h);
      this.holding.waitFor(h, order);
      return;
    }
    if (before >= 0 ? this.topics.owns(t, before) : this.topics.ownsAllowed(t, h.message.key, order)) {
      h.waitsChain = true;
      this.holding.waitFor(h, order);
      return;
    }
    h.unowned = true;
  }

  /**
   * A partition passed `offset`, or has a new record: what waited for an offset below it, or
   * for a predecessor the record shows handled, no longer waits for its chain.
   */
  protected passed(state: PartitionState, offset: number, out: Release<M>[]): void {
    let kept = 0;
    const watchers = state.watchers;
    const ready: Held<M>[] = [];
    const record = state.record;
    for (const h of watchers) {
      if (h.released || !h.waitsChain) continue;
      const order = h.order!;
      if ((order.afterOffset >= 0 && order.afterOffset < offset) || (record !== null && record.handles(order))) ready.push(h);
      else watchers[kept++] = h;
    }
    watchers.length = kept;
    for (const h of ready) this.unwait(h, out);
  }

  /** h's predecessor is done: it goes if it is also first in its line. */
  protected unwait(h: Held<M>, out: Release<M>[]): void {
    if (h.released || !h.waitsChain) return;
    h.waitsChain = false;
    this.holding.dropWaiter(h);
    if (!h.waitsLine) this.release(h, true, undefined, out);
  }

  protected enforceBounds(out: Release<M>[]): void {
    while (this.holding.count > this.options.maxBufferedMessages || this.holding.bytes > this.options.maxBufferedBytes) {
      const oldest = this.holding.oldest();
      if (!oldest) break;
      this.release(this.root(oldest), false, 'capacity', out);
    }
  }

  /**
   * What must go first for `h` to go in order, back to one that waits for nothing held: released
   * out of order, it lets the rest follow in order, instead of h overtaking held predecessors.
   */
  protected root(h: Held<M>): Held<M> {
    for (let steps = 0; steps <= this.holding.count; steps++) {
      if (h.waitsLine) {
        h = this.holding.lineHead(h.line)!;
        continue;
      }
      const before = h.waitsChain ? this.holding.find(h.chain, h.order!.previous) : undefined;
      if (before === undefined || before.released) break;
      h = before;
    }
    return h;
  }

  /** Releases h (held or new) and then everything that was waiting only for it, in order. */
  protected release(first: Held<M>, ordered: boolean, reason: ReleaseReason | undefined, out: Release<M>[]): void {
    const work: Held<M>[] = [first];
    let firstGoes = true;
    for (let i = 0; i < work.length; i++) {
      const h = work[i];
      if (h.released) continue;
      const inOrder = firstGoes ? ordered : !h.unowned;
      const why = firstGoes ? reason : h.unowned ? 'unowned' : undefined;
      firstGoes = false;
      if (h.state.held.has(h)) this.holding.unhold(h);
      else if (h.waitsChain) this.holding.dropWaiter(h);
      h.released = true;
      out.push(inOrder ? { message: h.message, ordered: true, outOfOrder: false, order: h.order }
        : { message: h.message, ordered: false, outOfOrder: true, reason: why, order: h.order });
      if (h.order !== null) {
        this.chains.released(h.chain, h.order, this.now());
        const successors = this.holding.takeWaiters(h.chain, h.order.sequence);
        if (successors !== undefined) {
          for (const s of successors) {
            s.waitsChain = false;
            if (!s.waitsLine) work.push(s);
          }
        }
      }
      // The line's next member is first now; it goes if it waits for nothing else.
      if (h.line !== '') {
        const head = this.holding.lineHead(h.line);
        if (head !== undefined && head.waitsLine) {
          head.waitsLine = false;
          if (!head.waitsChain) work.push(head);
        }
      }
    }
  }
}
