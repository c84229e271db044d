// Ordered handoffs of relocated keys (DynamicProducer). A relocated key's message that goes to
// another partition than its chain's previous marked message (a move, the return to its own
// partition, the first move after its anchor) is held here until the delivery report of that
// previous message gives its offset; it then goes with `after = <partition>:<offset>` in its
// order header, so a consumer of the new partition can wait for the old partition's consumer
// to have committed past it. Every later message of the same key waits behind it (FIFO per
// key), so none overtakes it. Split keys' messages never wait.
//
// With a gate (a LagMonitor attached to the producer: DynamicProducer.consumerProgress), a
// move whose predecessor's offset is known also waits here while the group's consumers of the
// old partition are predicted to need long to reach that offset: held here, the key's
// messages do not stop the new partition's consumer from committing past them meanwhile.
//
// Keys are named by their tracked-key entry (Decision.entry, from DynamicPartitioner.decide()): a key that is
// not tracked was never marked, and nothing of it waits. While messages of an entry are held
// here, the entry is kept (`keep`: DynamicPartitioner.hold()): freed and given to another key,
// its key's next messages would find no messages held before them, and overtake them.

import { ORDER_MOVED, ORDER_RETURN, ORDER_SPREAD } from '../../core/abi';
import { Fifo } from '../../core/fifo';
import { ORDER_HEADER, OrderFields } from '../../partitioner/headers';

const IN_FLIGHT = 0;
const DELIVERED = 1;
const FAILED = 2;

/**
 * One marked message in flight: the opaque it is produced with, so that its delivery report
 * gives its offset to the message that may wait for it (told from other opaques by instanceof).
 * A class: one is made per spread message, from a fixed shape.
 */
export class Link {
  /** Where it went: the partition chosen, then the one its delivery report names. */
  partition: number;
  offset = -1;
  state = IN_FLIGHT;

  constructor(
    /** The opaque the message has without the link (a send()'s promise handlers or group, or none). */
    public opaque: unknown,
    readonly entry: number,
    readonly order: number,
    partition: number,
  ) {
    this.partition = partition;
  }
}

/**
 * Whether a move whose predecessor is delivered at `offset` of `partition` of `topic` should
 * wait longer here (its key's first message gated `heldMs` ago).
 */
export type Gate = (topic: string, partition: number, offset: number, heldMs: number) => boolean;

/** A message held here: what the producer needs to produce it later. */
export interface HeldMessage {
  readonly topic: string;
  /** Its order header, completed with the offset of `after` when that is delivered. */
  readonly header: Record<string, string> | undefined;
  /** The message it waits for; undefined: it only waits behind earlier held ones of its key. */
  readonly after: Link | undefined;
}

export class KeyHandoffs<M extends HeldMessage> {
  /** Per tracked-key entry: its chain's last marked message. */
  private readonly last: Array<Link | undefined>;
  /** Per tracked-key entry: its held messages, oldest first. */
  private readonly queues = new Map<number, Fifo<M>>();
  /** Messages held now. */
  held = 0;
  /** When set: whether a move with a delivered predecessor waits longer (see above). */
  gate: Gate | undefined;
  /** Per entry whose first held message the gate holds: since when (Date.now()). */
  private readonly gated = new Map<number, number>();
  /** The entry and chain link the last track() replaced, for undo(). */
  private replacedEntry = 0;
  private replaced: Link | undefined;

  /**
   * `release` produces a held message whose turn came (in its key's order); `keep(entry, true)`
   * when the first message of an entry is held, `keep(entry, false)` when its last is gone.
   */
  constructor(entries: number, private readonly release: (message: M) => void, private readonly keep: (entry: number, held: boolean) => void) {
    this.last = new Array<Link | undefined>(entries);
  }

  /**
   * The message a marked message of `entry` with order marker `order`, going to `partition`,
   * must wait for: its chain's previous marked message when that went to another partition and
   * its offset is not known yet. Returns undefined when it need not wait; when the offset is
   * known, `header` is completed with it at once.
   */
  waitFor(entry: number, order: number, topic: string, partition: number, header: Record<string, string>): Link | undefined {
    const previous = this.last[entry];
    if (previous === undefined || previous.partition === partition || previous.state === FAILED) return undefined;
    // The first spread message after a move (the key went from relocated to split): the move may
    // have waited here while later marked messages of this producer went to its partition, so
    // its sequence is no longer below theirs there, and a consumer could not tell it handled by
    // sequence (docs/ordering.md, "What a record holds"): it names the move's offset instead.
    if (order === ORDER_SPREAD && previous.order === ORDER_MOVED) {
      if (previous.state !== DELIVERED) return previous;
      complete(header, previous);
      return undefined;
    }
    // A relocated key's move, or its return after being relocated (a split key's return, like
    // its other spread messages, has no single predecessor a consumer could wait for).
    if (order !== ORDER_MOVED && (order !== ORDER_RETURN || previous.order === ORDER_SPREAD)) return undefined;
    if (previous.state === DELIVERED) {
      if (this.gate !== undefined && !this.busy(entry) && this.gate(topic, previous.partition, previous.offset, 0)) {
        this.gated.set(entry, Date.now());
        return previous;
      }
      complete(header, previous);
      return undefined;
    }
    return previous;
  }

  /** A Link for the marked message of `entry` just placed: its chain's last from now on. */
  track(entry: number, order: number, partition: number, opaque: unknown): Link {
    const link = new Link(opaque, entry, order, partition);
    this.replacedEntry = entry;
    this.replaced = this.last[entry];
    this.last[entry] = link;
    return link;
  }

  /** Takes the last track() back (its message was refused at once, never sent). */
  undo(): void {
    this.last[this.replacedEntry] = this.replaced;
  }

  /** Keys with messages held. */
  get keys(): number {
    return this.queues.size;
  }

  /** Whether messages of `entry` are held (a new one of the key waits behind them). */
  busy(entry: number): boolean {
    return entry >= 0 && this.queues.has(entry);
  }

  hold(entry: number, message: M): void {
    const queue = this.queues.get(entry);
    if (queue === undefined) {
      const fresh = new Fifo<M>();
      fresh.push(message);
      this.queues.set(entry, fresh);
      this.keep(entry, true);
    } else {
      queue.push(message);
    }
    this.held++;
  }

  /**
   * The delivery report of a linked message (offset -1: it failed): held messages of its key
   * whose turn came are produced, those waiting for it with its offset in their header (or,
   * when it failed, with its partition only).
   */
  settled(link: Link, partition: number, offset: number): void {
    if (offset >= 0) {
      link.partition = partition;
      link.offset = offset;
      link.state = DELIVERED;
    } else {
      link.state = FAILED;
    }
    this.releaseFrom(link.entry);
  }

  /** Held messages of `entry` are produced in order up to the first whose predecessor is in flight. */
  private releaseFrom(entry: number): void {
    const queue = this.queues.get(entry);
    if (queue === undefined) return;
    // Taken off the queue before it is produced: producing it may settle a link (a message
    // refused at once), which comes back here for the same key (and finds a new queue once
    // this one is empty).
    while (queue.size > 0) {
      const m = queue.peek();
      if (m.after !== undefined) {
        if (m.after.state === IN_FLIGHT) break;
        if (m.after.state === DELIVERED) {
          if (this.gate !== undefined && this.gateHolds(entry, m)) break;
          complete(m.header!, m.after);
        }
      }
      queue.shift();
      if (this.gated.size > 0) this.gated.delete(entry);
      this.held--;
      if (queue.size === 0) {
        this.queues.delete(entry);
        this.keep(entry, false);
      }
      this.release(m);
    }
  }

  /**
   * Whether the gate holds `m` (the first held message of `entry`, its predecessor delivered).
   * An entry the gate lets go leaves `gated` with its message (releaseFrom).
   */
  private gateHolds(entry: number, m: M): boolean {
    const now = Date.now();
    const since = this.gated.get(entry) ?? now;
    if (!this.gate!(m.topic, m.after!.partition, m.after!.offset, now - since)) return false;
    this.gated.set(entry, since);
    return true;
  }

  /** Keys whose messages the gate holds now. */
  get gatedKeys(): number {
    return this.gated.size;
  }

  /** Asks the gate again for every key it holds (its answer may have changed): those it lets go are produced. */
  recheck(): void {
    if (this.gated.size === 0) return;
    for (const entry of Array.from(this.gated.keys())) this.releaseFrom(entry);
  }

  /** Takes every held message out (a disconnect that could not wait for them). */
  take(): M[] {
    const out: M[] = [];
    for (const [entry, queue] of this.queues) {
      for (const m of queue.takeAll()) out.push(m);
      this.keep(entry, false);
    }
    this.queues.clear();
    this.gated.clear();
    this.held = 0;
    return out;
  }
}

/** `after = <partition>` in the header (its last field) becomes `<partition>:<offset>`. */
function complete(header: Record<string, string>, previous: Link): void {
  if (header instanceof OrderFields) {
    header.complete(previous.partition, previous.offset);
    return;
  }
  const text = header[ORDER_HEADER];
  header[ORDER_HEADER] = text.slice(0, text.lastIndexOf(';') + 1) + previous.partition + ':' + previous.offset;
}
