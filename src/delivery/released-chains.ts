// What the Resequencer (src/delivery/resequencer.ts) remembers of each chain — a producer's
// marked messages of one key, each naming its predecessor (docs/ordering.md) — that it
// released: the sequences a successor may still wait for, and those released and then not
// handled here (a successor on the same partition waits for them to be read again).

import type { OrderHeader } from '../partitioner/headers';
import { chainPlace } from './message-order';

/**
 * One chain's released marked messages whose successor has not been released yet. In order
 * that is one, the last (-1: none); a consumer of a group that releases messages at once for
 * another consumer's predecessor can leave a few more behind, in `more`.
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
/**
 * A chain released again moves to the end of the table at most once in this long (ms): moving
 * it is a delete and a set, whose deleted entries cost rehashes when made on every release.
 */
const MOVE_MS = 1000;

export class ReleasedChains {
  /**
   * Per chain (topic, producer, key): its released messages that a successor may still wait
   * for. In order of their last move to the end (a release moves its chain when its last move
   * is MOVE_MS old), so idle ones are found first.
   */
  private readonly chains = new Map<string, ChainState>();
  /**
   * Marked messages released here and then not handled (unreleased()), by chain and sequence,
   * until released again. At most maxChains, the oldest forgotten first.
   */
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

  /**
   * A marked message of `chain` went (at `now`): its predecessor is no longer waited for, it
   * may be. The chain moves to the end (at most once in MOVE_MS); a RETURN ends it, unless
   * earlier messages of it are still loose.
   */
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

  /** A chain new to the table, at its end. */
  private add(chain: string, state: ChainState): void {
    this.chains.set(chain, state);
    if (this.chains.size > this.maxChains) this.evict();
  }

  /**
   * The chain's message `sequence`, released here, was not handled: it no longer counts as
   * released, so that a successor read here later waits for it again. Its predecessor is not
   * counted again either (it may be unhandled too): a successor of that one waits for the
   * group's commit past it.
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
   * Forgets the chains whose last release was at or before `idle` (ms). Every one of them moved
   * at or before then, so they are all in front of the first chain that moved later; a chain in
   * front that was released after `idle` (within MOVE_MS of its move) stays.
   */
  expire(idle: number): void {
    for (const [chain, state] of this.chains) {
      if (state.moved > idle) break;
      if (state.at <= idle) this.chains.delete(chain);
    }
  }

  /**
   * Forgets the least recently moved chains (released least recently, to within MOVE_MS), an eighth of maxChains at once: one iteration
   * from the front of the map per many releases (the front fills with holes as chains move
   * to the end, and each iteration starts by skipping them).
   */
  private evict(): void {
    let excess = this.chains.size - this.maxChains + (this.maxChains >> 3);
    for (const chain of this.chains.keys()) {
      if (excess-- <= 0) break;
      this.chains.delete(chain);
    }
  }
}
