// The engine's offset ledger, kept apart from the Dispatcher that schedules the calls
// (dispatch.ts): per partition, the unhandled offsets and the last commit, and from them and what
// the Resequencer holds, the safe offset. It keeps the marked ones' order headers for handled records.

import { partitionKey } from '../core/partition-key';
import type { OrderHeader } from '../partitioner/headers';
import type { PartitionOffset } from './dispatch-types';

export class OffsetLedger<M extends { topic: string; partition: number; offset: number }> {
  /** The message of a call made at once (Dispatcher.offer()) while the handler has it: unhandled, though in no set. */
  direct: M | undefined;
  private readonly names = new Map<string, string[]>();
  /** Unhandled offsets; a forgotten partition's set is replaced, so a task holding the old one changes nothing. */
  private readonly unhandled = new Map<string, Set<number>>();
  /** The order headers of the marked offsets among `unhandled`, by offset. */
  private readonly marked = new Map<string, Map<number, OrderHeader>>();
  /** The offset last committed (or being committed), and its record's text. */
  private readonly committedOffset = new Map<string, number>();
  private readonly committedRecord = new Map<string, string | undefined>();

  /** @param committable the lowest offset the Resequencer holds of a partition, if any */
  constructor(private readonly committable: (topic: string, partition: number) => number | undefined) {}

  /** partitionKey(topic, partition), made once. */
  tpName(topic: string, partition: number): string {
    let names = this.names.get(topic);
    if (names === undefined) this.names.set(topic, (names = []));
    return names[partition] ??= partitionKey(topic, partition);
  }

  /** A released message's offset is unhandled: its partition's set (a task keeps it). */
  add(tp: string, offset: number, order: OrderHeader | null): Set<number> {
    let unhandled = this.unhandled.get(tp);
    if (!unhandled) this.unhandled.set(tp, (unhandled = new Set()));
    unhandled.add(offset);
    if (order !== null) {
      let marked = this.marked.get(tp);
      if (!marked) this.marked.set(tp, (marked = new Map()));
      marked.set(offset, order);
    }
    return unhandled;
  }

  /** An offset of the set `unhandled` is handled or unreleased (`marked`: it has a header); false if `tp` was forgotten since. */
  remove(tp: string, unhandled: Set<number>, offset: number, marked: boolean): boolean {
    if (this.unhandled.get(tp) !== unhandled) return false;
    unhandled.delete(offset);
    if (marked) this.marked.get(tp)?.delete(offset);
    return true;
  }

  /** A partition's unhandled offsets, and the order headers of the marked ones among them. */
  unhandledOf(topic: string, partition: number): [Iterable<number>, Iterable<OrderHeader>] {
    const tp = this.tpName(topic, partition);
    const offsets = this.unhandled.get(tp) ?? [];
    const marked = this.marked.get(tp)?.values() ?? [];
    const d = this.direct;
    return d !== undefined && d.topic === topic && d.partition === partition ? [[...offsets, d.offset], marked] : [offsets, marked];
  }

  /** The offset that may be committed for a partition: below every message held or unhandled. */
  safeOffset(topic: string, partition: number): number | undefined {
    let offset = this.committable(topic, partition);
    const unhandled = this.unhandled.get(this.tpName(topic, partition));
    if (unhandled) for (const o of unhandled) if (offset === undefined || o < offset) offset = o;
    const d = this.direct;
    return d !== undefined && d.topic === topic && d.partition === partition && (offset === undefined || d.offset < offset) ? d.offset : offset;
  }

  /** The safe offsets to commit for `partitions` (`onlyMoved`: those whose offset or record changed), remembered as committed. */
  toCommit(partitions: Iterable<{ topic: string; partition: number }>, onlyMoved: boolean,
    recordOf?: (topic: string, partition: number, offset: number) => string | undefined): PartitionOffset[] {
    const offsets: PartitionOffset[] = [];
    for (const { topic, partition } of partitions) {
      const offset = this.safeOffset(topic, partition);
      if (offset === undefined) continue;
      const tp = this.tpName(topic, partition);
      // With handled records, a commit also goes when only the record changed (other members wait for it).
      const metadata = recordOf?.(topic, partition, offset);
      if (onlyMoved && this.committedOffset.get(tp) === offset && this.committedRecord.get(tp) === metadata) continue;
      offsets.push(metadata === undefined ? { topic, partition, offset } : { topic, partition, offset, metadata });
      this.committedOffset.set(tp, offset);
      this.committedRecord.set(tp, metadata);
    }
    return offsets;
  }

  /** A commit of `offsets` failed: unless a later one was made since, each is made again next time. */
  notCommitted(offsets: readonly PartitionOffset[]): void {
    for (const { topic, partition, offset } of offsets) {
      const tp = this.tpName(topic, partition);
      if (this.committedOffset.get(tp) !== offset) continue;
      this.committedOffset.delete(tp);
      this.committedRecord.delete(tp);
    }
  }

  /** Everything of a partition goes (it left: if it comes back, it starts from the committed offset). */
  forget(tp: string): void {
    this.unhandled.delete(tp);
    this.marked.delete(tp);
    this.committedOffset.delete(tp);
    this.committedRecord.delete(tp);
  }

  clear(): void {
    this.unhandled.clear();
    this.marked.clear();
    this.committedOffset.clear();
    this.committedRecord.clear();
  }

  /** Unhandled offsets in all, partitions with a set, and last commits kept (bench/soak/tables.js). */
  sizes(): { unhandled: number; unhandledPartitions: number; lastCommitted: number } {
    let unhandled = 0;
    for (const offsets of this.unhandled.values()) unhandled += offsets.size;
    return { unhandled, unhandledPartitions: this.unhandled.size, lastCommitted: this.committedOffset.size };
  }
}
