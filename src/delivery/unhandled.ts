// The Dispatcher's (src/delivery/dispatch.ts) offsets, per topic-partition (partitionKey): those
// released and not handled yet (waiting for a call, or in one), the order headers of the marked
// ones among them (for handled records), and the offset and record last committed (a periodic
// commit leaves out what did not move).

import type { OrderHeader } from '../partitioner/headers';

export class UnhandledOffsets {
  /** Offsets released but not yet handled. A partition's set is replaced when it is forgotten (a task holding the old one changes nothing). */
  private readonly pending = new Map<string, Set<number>>();
  /** The order headers of the marked offsets among `pending`, by offset. */
  private readonly marked = new Map<string, Map<number, OrderHeader>>();
  /** The offset last committed (or being committed), and its record's text. */
  private readonly committedOffset = new Map<string, number>();
  private readonly committedRecord = new Map<string, string | undefined>();

  /** A released message's offset is unhandled: its partition's set (a task keeps it). */
  add(tp: string, offset: number, order: OrderHeader | null): Set<number> {
    let pending = this.pending.get(tp);
    if (!pending) this.pending.set(tp, (pending = new Set()));
    pending.add(offset);
    if (order !== null) {
      let marked = this.marked.get(tp);
      if (!marked) this.marked.set(tp, (marked = new Map()));
      marked.set(offset, order);
    }
    return pending;
  }

  /** An offset of the set `pending` (of `tp`; `marked`: with an order header) is handled, or no longer released: false if the partition was forgotten since. */
  remove(tp: string, pending: Set<number>, offset: number, marked: boolean): boolean {
    if (this.pending.get(tp) !== pending) return false;
    pending.delete(offset);
    if (marked) this.marked.get(tp)?.delete(offset);
    return true;
  }

  /** A partition's offsets released and not handled yet, and the order headers of the marked ones among them. */
  of(tp: string): [Iterable<number>, Iterable<OrderHeader>] {
    return [this.pending.get(tp) ?? [], this.marked.get(tp)?.values() ?? []];
  }

  /** The lowest of `offset` (or undefined) and the partition's unhandled offsets. */
  lowest(tp: string, offset: number | undefined): number | undefined {
    const pending = this.pending.get(tp);
    if (pending) for (const o of pending) if (offset === undefined || o < offset) offset = o;
    return offset;
  }

  /** Whether `offset` with `record` is what was last committed of the partition. */
  committedAs(tp: string, offset: number, record: string | undefined): boolean {
    return this.committedOffset.get(tp) === offset && this.committedRecord.get(tp) === record;
  }

  /** `offset` with `record` is being committed. */
  committing(tp: string, offset: number, record: string | undefined): void {
    this.committedOffset.set(tp, offset);
    this.committedRecord.set(tp, record);
  }

  /** A commit of `offset` failed: unless a later one was made since, it is made again next time. */
  notCommitted(tp: string, offset: number): void {
    if (this.committedOffset.get(tp) !== offset) return;
    this.committedOffset.delete(tp);
    this.committedRecord.delete(tp);
  }

  /** Everything of a partition goes (it left: if it comes back, it starts from the committed offset). */
  forget(tp: string): void {
    this.pending.delete(tp);
    this.marked.delete(tp);
    this.committedOffset.delete(tp);
    this.committedRecord.delete(tp);
  }

  clear(): void {
    this.pending.clear();
    this.marked.clear();
    this.committedOffset.clear();
    this.committedRecord.clear();
  }

  /** Unhandled offsets in all, partitions with a set, and last commits kept (bench/soak/tables.js). */
  sizes(): { unhandled: number; unhandledPartitions: number; lastCommitted: number } {
    let unhandled = 0;
    for (const offsets of this.pending.values()) unhandled += offsets.size;
    return { unhandled, unhandledPartitions: this.pending.size, lastCommitted: this.committedOffset.size };
  }
}
