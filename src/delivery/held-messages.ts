// The messages the Resequencer (resequencer.ts) holds, and its indexes of them: by line, by chain
// place, by what they wait for (their predecessor's place), and oldest first, with their count
// and bytes for the bounds. Which message goes when is the Resequencer's; this keeps the indexes
// in step. A place is looked up by the held message's chain name, then by sequence, so that no
// name is made per lookup.

import type { OrderHeader } from '../partitioner/headers';
import { Fifo } from '../core/fifo';
import type { Held } from './partition-states';
import type { ConsumedMessage } from './resequencer-types';

export class HeldMessages<M extends ConsumedMessage> {
  /** Held chained messages by what they wait for: per chain, by the previous sequence. */
  private readonly waitingFor = new Map<string, Map<number, Held<M>[]>>();
  /** Held marked messages per chain, by their own sequence (to find what a held one waits for). */
  private readonly bySequence = new Map<string, Map<number, Held<M>>>();
  /** Per line (topic, partition, key): held line members in arrival (offset) order. */
  private readonly lines = new Map<string, Held<M>[]>();
  /** Every held message, oldest first (entries of released ones are skipped lazily). */
  private readonly order = new Fifo<Held<M>>();
  private heldCount = 0;
  private heldBytes = 0;

  /** Messages held. */
  get count(): number {
    return this.heldCount;
  }

  /** The bytes of the held messages' values and keys. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** Whether any line has a held member (else an unmarked message waits behind nothing). */
  get lined(): boolean {
    return this.lines.size > 0;
  }

  /** The first held member of a line, or undefined when it has none. */
  lineHead(line: string): Held<M> | undefined {
    return this.lines.get(line)?.[0];
  }

  /** Whether a line holds a member read before `offset` (one at `offset` would wait behind it). */
  lineHasBefore(line: string, offset: number): boolean {
    const head = this.lines.get(line)?.[0];
    return head !== undefined && head.message.offset < offset;
  }

  /** The held message of a chain with that sequence, or undefined. */
  find(chain: string, sequence: number): Held<M> | undefined {
    return this.bySequence.size === 0 ? undefined : this.bySequence.get(chain)?.get(sequence);
  }

  /** h (held, or about to be) waits for its chain's message `order.previous`. */
  waitFor(h: Held<M>, order: OrderHeader): void {
    let places = this.waitingFor.get(h.chain);
    if (places === undefined) this.waitingFor.set(h.chain, (places = new Map()));
    const list = places.get(order.previous);
    if (list === undefined) places.set(order.previous, [h]);
    else list.push(h);
  }

  /** h no longer waits for its predecessor. */
  dropWaiter(h: Held<M>): void {
    if (h.order === null) return;
    const places = this.waitingFor.get(h.chain);
    const list = places?.get(h.order.previous);
    if (list === undefined) return;
    const i = list.indexOf(h);
    if (i !== -1) list.splice(i, 1);
    if (list.length === 0) this.forgetPlace(this.waitingFor, h.chain, places!, h.order.previous);
  }

  /** The messages that waited for the chain's message `sequence` (which goes now), taken out of the index. */
  takeWaiters(chain: string, sequence: number): Held<M>[] | undefined {
    if (this.waitingFor.size === 0) return undefined;
    const places = this.waitingFor.get(chain);
    const waiters = places?.get(sequence);
    if (waiters !== undefined) this.forgetPlace(this.waitingFor, chain, places!, sequence);
    return waiters;
  }

  /** A chain place leaves an index (the chain too, once it has none). */
  private forgetPlace<V>(index: Map<string, Map<number, V>>, chain: string, places: Map<number, V>, sequence: number): void {
    places.delete(sequence);
    if (places.size === 0) index.delete(chain);
  }

  /** Holds h from `now`. */
  hold(h: Held<M>, now: number): void {
    h.at = now;
    h.bytes = (h.message.size ?? h.message.value?.length ?? 0) + (h.message.key?.length ?? 0);
    if (h.line !== '') {
      const queue = this.lines.get(h.line);
      if (queue === undefined) this.lines.set(h.line, [h]);
      else if (queue[queue.length - 1].message.offset < h.message.offset) queue.push(h);
      else {
        // Held again (the consumer took it back from its handler queue) below members held
        // since: it goes in its place by offset, and the member it goes before waits behind it.
        let i = queue.length;
        while (i > 0 && queue[i - 1].message.offset > h.message.offset) i--;
        queue.splice(i, 0, h);
        if (i === 0) queue[1].waitsLine = true;
      }
    }
    if (h.order !== null) {
      let places = this.bySequence.get(h.chain);
      if (places === undefined) this.bySequence.set(h.chain, (places = new Map()));
      places.set(h.order.sequence, h);
    }
    h.state.held.add(h);
    this.order.push(h);
    this.heldCount++;
    this.heldBytes += h.bytes;
  }

  /** Takes a held message out of every index (out of waitingFor only while it still waits: takeWaiters() took it out otherwise). */
  unhold(h: Held<M>): void {
    if (h.line !== '') {
      const queue = this.lines.get(h.line)!;
      const i = queue.indexOf(h);
      queue.splice(i, 1);
      if (queue.length === 0) this.lines.delete(h.line);
    }
    if (h.waitsChain) this.dropWaiter(h);
    if (h.order !== null) {
      const places = this.bySequence.get(h.chain);
      if (places !== undefined && places.get(h.order.sequence) === h) this.forgetPlace(this.bySequence, h.chain, places, h.order.sequence);
    }
    h.state.held.delete(h);
    this.heldCount--;
    this.heldBytes -= h.bytes;
  }

  /** The message held longest (oldest() just gave it) is held as if from `now`: it goes last. */
  renewOldest(h: Held<M>, now: number): void {
    if (this.order.peek() !== h) return;
    this.order.shift();
    h.at = now;
    this.order.push(h);
  }

  /** The message held longest, or undefined when none is. */
  oldest(): Held<M> | undefined {
    const order = this.order;
    while (order.size > 0 && order.peek().released) order.shift();
    return order.size > 0 ? order.peek() : undefined;
  }

  /** @internal Index sizes for bench/soak/tables.js (`order` counts released entries until they are skipped). */
  sizes(): { lines: number; waitingFor: number; bySequence: number; order: number } {
    const places = (index: Map<string, Map<number, unknown>>): number => {
      let n = 0;
      for (const p of index.values()) n += p.size;
      return n;
    };
    return { lines: this.lines.size, waitingFor: places(this.waitingFor), bySequence: places(this.bySequence), order: this.order.size };
  }
}
