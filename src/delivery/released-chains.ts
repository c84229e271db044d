// What the Resequencer (resequencer.ts) remembers of each chain it released: the sequences a
// successor may still wait for, and those released and then not handled here, which it waits for
// again. A chain is a producer's marked messages of one key, each naming its predecessor.

import type { OrderHeader } from '../partitioner/headers';
import { chainPlace } from './message-order';

/**
 * One chain's released messages whose successor is not released yet: in order, `last` alone
 * (-1: none); releases at once for another member's predecessor can leave more, in `more`.
 */
interface ChainState {
  last: number;
  more: Set<number> | null;
  /** When one of its messages was last released. */
  at: number;
  /** When it last moved to the end of the table (at most MOVE_MS before `at`). */
  moved: number;
}

/** At most this many released-but-unfollowed sequences are remembered per chain. */
const MAX_LOOSE_ENDS = 1024;
/** A chain moves to the table's end at most once in this long (ms): each move leaves a deleted entry that costs rehashes. */
const MOVE_MS = 1000;

export class ReleasedChains {
  /** Per chain (topic, producer, key), in order of their last move to the end, so that idle ones come first. */
  private readonly chains = new Map<string, ChainState>();
  /** Chain places released here and then not handled (unreleased()), until released again; at most maxChains, oldest out first. */
  private readonly unhandled = new Set<string>();

  constructor(private readonly maxChains: number) {}

  /** Chains known now. */
  get size(): number {
    return this.chains.size;
  }

  /** Whether the message `order` names as its predecessor has been released. */
  follows(chain: string, order: OrderHeader): boolean {
    const state = this.chains.get(chain);
    return state !== undefined && (state.last === order.previous || (state.more !== null && state.more.has(order.previous)));
  }

  /** Whether the chain's message `sequence` was released here and then not handled. */
  unhandledHere(chain: string, sequence: number): boolean {
    return this.unhandled.size > 0 && this.unhandled.has(chainPlace(chain, sequence));
  }

  /** A marked message of `chain` went (at `now`), in its predecessor's place; a RETURN ends the chain unless others are loose. */
  released(chain: string, order: OrderHeader, now: number): void {
    if (this.unhandled.size > 0) this.unhandled.delete(chainPlace(chain, order.sequence));
    const state = this.chains.get(chain);
    if (state === undefined) {
      if (order.kind !== 'return') this.add(chain, { last: order.sequence, more: null, at: now, moved: now });
      return;
    }
    // The previous last stays wanted by its own successor unless this is that successor.
    if (state.last >= 0 && state.last !== order.previous && state.last !== order.sequence) (state.more ??= new Set()).add(state.last);
    if (state.more !== null) {
      state.more.delete(order.previous);
      if (state.more.size > MAX_LOOSE_ENDS) state.more.delete(state.more.values().next().value!);
      if (state.more.size === 0) state.more = null;
    }
    state.last = order.sequence;
    state.at = now;
    // After a RETURN the producer starts the key's next chain with an ANCHOR, which needs nothing.
    if (order.kind === 'return' && state.more === null) this.chains.delete(chain);
    else if (now - state.moved >= MOVE_MS) {
      this.chains.delete(chain);
      state.moved = now;
      this.chains.set(chain, state);
    }
  }

  private add(chain: string, state: ChainState): void {
    this.chains.set(chain, state);
    if (this.chains.size > this.maxChains) this.evict();
  }

  /**
   * The chain's message `sequence`, released here, was not handled: a successor read later waits
   * for it again. Its predecessor is not counted released again either: it may be unhandled too.
   */
  unreleased(chain: string, sequence: number): void {
    const k = chainPlace(chain, sequence);
    this.unhandled.delete(k);
    this.unhandled.add(k);
    if (this.unhandled.size > this.maxChains) this.unhandled.delete(this.unhandled.values().next().value!);
    const state = this.chains.get(chain);
    if (state === undefined) return;
    if (state.more !== null) {
      state.more.delete(sequence);
      if (state.more.size === 0) state.more = null;
    }
    if (state.last === sequence) {
      if (state.more === null) this.chains.delete(chain);
      else state.last = -1;
    }
  }

  /** The chain's message `sequence` counts as released again (its successor was taken back: takeBack()). */
  restore(chain: string, sequence: number, now: number): void {
    const state = this.chains.get(chain);
    if (state === undefined) {
      this.add(chain, { last: sequence, more: null, at: now, moved: now });
    } else if (state.last !== sequence) {
      if (state.last < 0) state.last = sequence;
      else (state.more ??= new Set()).add(sequence);
    }
  }

  /**
   * Forgets the chains last released at or before `idle` (ms): each moved no later, so all of them
   * are in front of the first chain that moved later.
   */
  expire(idle: number): void {
    for (const [chain, state] of this.chains) {
      if (state.moved > idle) break;
      if (state.at <= idle) this.chains.delete(chain);
    }
  }

  /** Forgets the least recently moved chains, an eighth of maxChains at once: the map's front, full of holes, is walked seldom. */
  private evict(): void {
    let excess = this.chains.size - this.maxChains + (this.maxChains >> 3);
    for (const chain of this.chains.keys()) {
      if (excess-- <= 0) break;
      this.chains.delete(chain);
    }
  }
}
