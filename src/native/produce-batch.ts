// One librdkafka producer handle of the native engine and the batch it is filling: messages
// copied into one buffer and typed-array tables by produce(), handed over in one native call
// (native/src/produce.c) at the end of the current turn, when the batch is full, or at once for
// a message near message.max.bytes (its refusal is then produce()'s answer). librdkafka's queue
// full: the rest of the batch stays here and goes at the next poll. NativeClient (produce.ts)
// holds one or more, each partition always on the same one, and the slots, reports and events
// they share.

import type { Buffer } from 'node:buffer';
import type { Key } from '../core/key';
import { ERR_QUEUE_FULL } from '../core/rdkafka-codes';
import { type NativeAddon, PRODUCED_TAKEN, PRODUCED_UNASSIGNED } from './contract';
import type { NativeHandle } from './handle';
import { ProduceRows, type RowHeaders } from './produce-rows';
import type { Slots } from './slots';

/** Messages per batch handed over in one call. */
const BATCH = 1024;

/**
 * How a message's opaque takes its slot, and what a slot's message settles: the producer's
 * (src/producer/settle/opaque.ts joins send() calls into groups); by default the opaque as it is.
 */
export interface SlotTaker {
  /** A slot for a message going to `partition` (-1: librdkafka's choice): its id. */
  take(slots: Slots, opaque: unknown, topic: string, partition: number, size: number, key: Key | null | undefined, value: Buffer | null): number;
  /** The batch was handed over: messages after it start afresh (new groups). */
  handedOver(): void;
  /** The message just taken under `id` was refused at once (produce()'s answer tells its caller). */
  refusedAtOnce(slots: Slots, id: number): void;
  /** What a slot's message settles (its opaque, or what stands for it), for a disconnect to tell its caller. */
  settles(opaque: unknown, member: number, key: unknown): unknown;
}

/** What the batches of one NativeClient share. */
export interface BatchOwner {
  readonly addon: NativeAddon;
  readonly slots: Slots;
  readonly taker: SlotTaker;
  /** Messages take no slot (librdkafka reports only failures): a refusal is told from the row's key. */
  readonly unslotted: boolean;
  /** message.max.bytes: a message near it is handed over at once. */
  readonly sizeLimit: number;
  /** Whether sendBatch() calls are in flight (each hand-over is then followed by a flush pulse). */
  hurrying(): boolean;
  /** Messages librdkafka refused for good at hand-over: [slot id, code, partition, row key] per message. */
  refused(topic: string, refused: unknown[]): void;
  /** librdkafka did not know the topic's partition count: the message went to its partitioner. */
  unassigned(topic: string): void;
  /** Polls again soon (a batch stopped by a full queue). */
  retry(): void;
}

export class HandleBatch {
  // The batch being filled: messages [start, count) of `topic` not handed over yet.
  private topic = '';
  private start = 0;
  private count = 0;
  /** Their bytes and rows. */
  private readonly rows = new ProduceRows(BATCH);
  private readonly partitions = new Int32Array(BATCH);
  private readonly ids = new Int32Array(BATCH);
  private readonly timestamps = new Float64Array(BATCH);
  private readonly results = new Int32Array(BATCH);
  /** With `unslotted`: the key of each row of the batch, for a refusal. */
  private readonly rowKeys: unknown[] = [];
  private submitQueued = false;
  /** The batch index whose refusal is produce()'s answer (produceNow), and that answer. */
  private answerAt = -1;
  private answer = 0;

  /** The NativeClient (a private field: kept out of what serialising the client walks, which it would close a circle of). */
  readonly #owner: BatchOwner;

  constructor(readonly handle: NativeHandle, owner: BatchOwner) {
    this.#owner = owner;
  }

  /** Messages taken and not handed to librdkafka yet (a batch its full queue stopped). */
  get batched(): number {
    return this.count - this.start;
  }

  /**
   * Takes one message into the batch: 0, or ERR_QUEUE_FULL when librdkafka's queue stopped the
   * batch and it has no room (the message is not taken), or librdkafka's refusal of a message
   * handed over at once for its size.
   */
  produce(topic: string, partition: number, value: Buffer | null, key: Key | null | undefined, timestamp: number | null | undefined, opaque: unknown, headers: RowHeaders | undefined): number {
    if (topic !== this.topic || this.count === BATCH) {
      if (this.start < this.count) this.submit();
      if (this.start < this.count) return ERR_QUEUE_FULL;
      this.topic = topic;
    }
    const owner = this.#owner;
    const i = this.count;
    const size = this.rows.write(i, value, key, headers);
    this.partitions[i] = partition;
    this.timestamps[i] = timestamp ?? 0;
    if (owner.unslotted) {
      this.ids[i] = -1;
      this.rowKeys[i] = key;
    } else {
      const valueLength = value === null || value === undefined ? 0 : value.length;
      this.ids[i] = owner.taker.take(owner.slots, opaque, topic, partition, valueLength, key, value);
    }
    this.count = i + 1;
    if (size > owner.sizeLimit) return this.produceNow(i);
    if (this.count === BATCH) this.submit();
    else if (!this.submitQueued) {
      this.submitQueued = true;
      queueMicrotask(this.submitLater);
    }
    return 0;
  }

  /**
   * A message librdkafka may refuse for its size: the batch goes now, and a refusal of this
   * message is produce()'s answer (as from node-rdkafka), not a report.
   */
  private produceNow(i: number): number {
    this.answerAt = i;
    this.answer = 0;
    try {
      this.submit();
    } finally {
      this.answerAt = -1;
    }
    // Stopped before it by a full queue, it waits in the batch like the rest: taken.
    return this.answer;
  }

  private readonly submitLater = (): void => {
    this.submitQueued = false;
    this.submit();
  };

  /** Hands the batch over; what librdkafka refuses for good gets a failed report, a full queue stops it until later. */
  submit(): void {
    const current = this.handle.current;
    if (current === undefined || this.start === this.count) return;
    const owner = this.#owner;
    const start = this.start;
    const topic = this.topic;
    // send() calls after this hand-over form new groups.
    owner.taker.handedOver();
    const rows = this.rows;
    const end = owner.addon.produce(current, topic, start, this.count, this.partitions, this.ids, rows.data, rows.layout,
      this.timestamps, rows.headerTable, this.results);
    // While sendBatch() calls are in flight, what was handed over leaves without waiting
    // linger.ms: a pulse of librdkafka's flushing state (native/src/hurry.c).
    if (end > start && owner.hurrying()) owner.addon.hurry(current);
    // Refusals are reported after the batch's state is settled: a report's handler may produce again.
    let refused: unknown[] | undefined;
    let unassigned = false;
    for (let i = start; i < end; i++) {
      const result = this.results[i];
      if (result === PRODUCED_TAKEN) continue;
      if (result === PRODUCED_UNASSIGNED) unassigned = true;
      else if (i === this.answerAt) {
        this.answer = result;
        if (this.ids[i] >= 0) {
          owner.taker.refusedAtOnce(owner.slots, this.ids[i]);
          owner.slots.release(this.ids[i]);
        }
      } else (refused ??= []).push(this.ids[i], result, this.partitions[i], owner.unslotted ? this.rowKeys[i] : undefined);
    }
    this.start = end;
    if (end === this.count) {
      this.start = this.count = 0;
      rows.clear();
    } else owner.retry();
    if (unassigned) owner.unassigned(topic);
    if (refused !== undefined) owner.refused(topic, refused);
  }
}
