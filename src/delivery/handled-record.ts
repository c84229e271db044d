// The handled record a consumer commits with each partition's offset (Kafka's commit metadata):
// what it has handled above the committed offset, which other members need to release a spread
// key's messages whose predecessor is on this partition, and a partition's next owner to hand
// out again no more than was in flight. records.ts writes and reads them; their bytes are
// record-format.ts's; the format, its sizes and why a record fits the broker's limit under any
// backlog are docs/ordering.md's ("Format and size").

import { answerBytes, type HandledRecord, offsetBytes, recordText, runsOf, textLength, varintSize } from './record-format';

export { decodeRecord, encodeRecord, type HandledRecord, RECORD_MAX_PRODUCERS, RECORD_PREFIX } from './record-format';

/** The broker's default offset.metadata.max.bytes (4,096), less the NUL written after the text. */
export const RECORD_MAX_CHARS = 4095;

/** The most bytes a record's text of `maxChars` characters holds. */
function bytesWithin(maxChars: number): number {
  return Math.floor((maxChars - textLength(0)) / 4) * 3;
}

/**
 * A record as text within `maxChars`: whole when it fits, else shortened to what fits and is
 * still true (`shortened`). What other members need is kept first: every producer with every
 * unhandled marked message, and as many unhandled offsets as fit (`known` cut at the first one
 * left out: a next owner hands out again what was handled above it). When even the answers do
 * not fit, no offsets, and each producer's lowest runs of unhandled marked messages (its `told`
 * cut below the first run left out: its later sequences wait for a later record). Either cut is
 * below the lowest of what it leaves out, so a member waiting on it waits for something that
 * waits for less (docs/ordering.md, "Guarantee in a group").
 */
export function fitRecord(record: HandledRecord, maxChars: number): { text: string; shortened: boolean } {
  const { offset, end, unhandled } = record;
  const known = record.known ?? end;
  const runs = runsOf(record.marked);
  const answers = answerBytes(record.producers, runs);
  const head = (k: number) => varintSize(end - offset) + varintSize(end - k);
  const whole = offsetBytes(offset, known, unhandled);
  const most = bytesWithin(maxChars);
  if (head(known) + whole.length + answers.length <= most) return { text: recordText(offset, end, known, whole, answers), shortened: false };
  const kept = offsetsKept(offset, known, unhandled, (k) => most - answers.length - head(k));
  if (kept >= 0) {
    const cut = kept < unhandled.length ? unhandled[kept] : known;
    const part = unhandled.slice(0, kept);
    return { text: recordText(offset, end, cut, offsetBytes(offset, cut, part), answers), shortened: true };
  }
  // No offsets told: (offset, offset) as gaps is 2 bytes.
  const room = most - head(offset) - 2;
  const none = offsetBytes(offset, offset, []);
  const byProducer = record.producers.map((_, i) => runs.filter((r) => r.producer === i));
  for (let from = 0; from <= record.producers.length; from++) {
    // The `perProducer` lowest runs of each producer from `from` on (the most recently read).
    const answersWith = (perProducer: number) => {
      const producers = record.producers.slice(from).map((p, i) => {
        const left = byProducer[from + i][perProducer];
        return { id: p.id, read: p.read, told: left === undefined ? p.told ?? p.read : left.first - 1 };
      });
      const keptRuns = byProducer.slice(from).flatMap((list, i) => list.slice(0, perProducer).map((r) => ({ ...r, producer: i })));
      return answerBytes(producers, keptRuns);
    };
    if (answersWith(0).length > room) continue;
    let low = 0;
    let high = Math.max(0, ...byProducer.map((list) => list.length));
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (answersWith(mid).length <= room) low = mid;
      else high = mid - 1;
    }
    return { text: recordText(offset, end, offset, none, answersWith(low)), shortened: true };
  }
  return { text: recordText(offset, end, offset, none, answerBytes([], [])), shortened: true };
}

/**
 * The most of a record's unhandled offsets (the lowest) that fit in `room(known)` bytes with
 * `known` the first one left out; -1 when not even none does. Found from sizes alone: a large
 * record is made on every commit.
 */
function offsetsKept(offset: number, known: number, unhandled: readonly number[], room: (known: number) => number): number {
  const n = unhandled.length;
  const above = n > 0 && unhandled[0] === offset ? 1 : 0;
  let kept = -1;
  let gaps = 0; // the varints of the gaps between the offsets kept above `offset`
  let last = offset;
  for (let k = 0; k <= n; k++) {
    if (k > 0 && k - 1 >= above) {
      gaps += varintSize(unhandled[k - 1] - last - 1);
      last = unhandled[k - 1];
    }
    const cut = k < n ? unhandled[k] : known;
    const gapBytes = 1 + varintSize(Math.max(0, k - above)) + gaps;
    const bitmapBytes = 1 + Math.ceil(Math.max(0, cut - offset - 1) / 8);
    const size = Math.min(bitmapBytes, gapBytes);
    if (size <= room(cut)) kept = k;
    else if (size > room(offset) + 8) break; // both only grow with k (and a head varies by 8 bytes at most)
  }
  return kept;
}

/** A record read back: whether an offset, or a producer's marked message on this partition, is handled. */
export class RecordView {
  /** Offsets in [offset, known) not unhandled are handled. */
  readonly known: number;
  private readonly unhandledSet: Set<number>;
  private readonly told = new Map<string, number>();
  private readonly markedSet = new Set<string>();

  constructor(readonly record: HandledRecord) {
    this.known = record.known ?? record.end;
    this.unhandledSet = new Set(record.unhandled);
    for (const p of record.producers) this.told.set(p.id, p.told ?? p.read);
    for (const m of record.marked) this.markedSet.add(`${record.producers[m.producer].id}:${m.sequence}`);
  }

  /** Whether the message at `offset` is handled (false: unhandled, not read yet, or not told). */
  handledOffset(offset: number): boolean {
    return offset < this.record.offset || (offset < this.known && !this.unhandledSet.has(offset));
  }

  /** Whether producer `id`'s marked message `sequence`, read at `offset` here, is handled: by its offset where that is told, else by sequence. */
  handledAt(offset: number, id: string, sequence: number): boolean {
    return offset < this.known ? this.handledOffset(offset) : offset < this.record.end && this.handledSequence(id, sequence);
  }

  /**
   * Whether producer `id`'s marked message `sequence`, known to be on this partition, is handled:
   * it or a later one of that producer was read here (a producer's messages reach a partition in
   * send order) and it is not unhandled. One never written counts as handled then: it will not come.
   */
  handledSequence(id: string, sequence: number): boolean {
    const told = this.told.get(id);
    return told !== undefined && sequence <= told && !this.markedSet.has(`${id}:${sequence}`);
  }

  /**
   * Whether it shows a chained message's predecessor handled: at its offset where the header
   * names one (a handoff: read there, and handled by its offset, or by its sequence where the
   * offsets are not told), else by producer and sequence.
   */
  handles(order: { readonly producerId: string; readonly previous: number; readonly afterOffset: number }): boolean {
    return order.afterOffset >= 0 ? this.handledAt(order.afterOffset, order.producerId, order.previous) : this.handledSequence(order.producerId, order.previous);
  }

  /**
   * Whether it shows a chained message's predecessor read there and not handled yet: it is
   * coming, as a message released here waits for the calls before it.
   */
  awaitsHandling(order: { readonly producerId: string; readonly previous: number; readonly afterOffset: number }): boolean {
    const o = order.afterOffset;
    if (o >= 0 && o < this.known) return o >= this.record.offset && this.unhandledSet.has(o);
    if (o >= this.record.end) return false;
    const told = this.told.get(order.producerId);
    return told !== undefined && order.previous <= told && this.markedSet.has(`${order.producerId}:${order.previous}`);
  }

  /** Highest sequence of `id` told on the partition, undefined when none. */
  toldOf(id: string): number | undefined {
    return this.told.get(id);
  }
}
