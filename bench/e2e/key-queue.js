'use strict';
// The static peer's concurrency model in bench:e2e (--handler-ms with --concurrency): the plain
// KafkaConsumer's messages go to the handler up to `limit` calls at once, never two of one key,
// each key's messages in the order they were consumed (messages without a key are independent),
// the keys that may start taken in the order they became ready. Per partition, the offset that
// may be stored for the auto commit stays below the lowest message not handled yet, as
// DynamicConsumer commits. Written here, without the package's Dispatcher, as an application
// would write it around node-rdkafka.

class KeyQueue {
  /**
   * handle(message) → Promise: one call. handled(message, offset): after each call, with the
   * offset its partition may now store (undefined when that did not move).
   */
  constructor(limit, handle, handled) {
    this.limit = limit;
    this.handle = handle;
    this.handled = handled;
    /** Per key: its messages not handled yet, the first under way or ready. */
    this.lanes = new Map();
    /** Keys whose first message may start, in the order they became ready (from readyHead on). */
    this.ready = [];
    this.readyHead = 0;
    this.running = 0;
    this.size = 0;
    /** Per partition: offsets consumed in order (from head on: not all handled), and the handled ones among them. */
    this.partitions = new Map();
    this.waiters = [];
  }

  /** A consumed message (node-rdkafka's: key a Buffer or null, partition, offset). */
  add(message) {
    this.size++;
    let p = this.partitions.get(message.partition);
    if (p === undefined) this.partitions.set(message.partition, (p = { offsets: [], head: 0, done: new Set() }));
    p.offsets.push(message.offset);
    // A message without a key is a lane of its own.
    const key = message.key === null || message.key === undefined ? message : message.key.toString('latin1');
    const lane = this.lanes.get(key);
    if (lane !== undefined) lane.push(message);
    else {
      this.lanes.set(key, [message]);
      this.ready.push(key);
    }
    this.pump();
  }

  pump() {
    while (this.running < this.limit && this.readyHead < this.ready.length) {
      const key = this.ready[this.readyHead++];
      if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
        this.ready = this.ready.slice(this.readyHead);
        this.readyHead = 0;
      }
      this.running++;
      const message = this.lanes.get(key)[0];
      // A handler that throws is the bench's fault: it is reported, as any crash of the worker.
      Promise.resolve(this.handle(message)).then(() => this.done(key, message));
    }
  }

  done(key, message) {
    this.running--;
    this.size--;
    const lane = this.lanes.get(key);
    lane.shift();
    if (lane.length > 0) this.ready.push(key);
    else this.lanes.delete(key);
    this.handled(message, this.advance(message));
    for (const w of this.waiters.filter((x) => this.size <= x.size)) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve();
    }
    this.pump();
  }

  /** The message's partition: its offset handled; the offset to store if the lowest not handled moved. */
  advance(message) {
    const p = this.partitions.get(message.partition);
    p.done.add(message.offset);
    const from = p.head;
    while (p.head < p.offsets.length && p.done.delete(p.offsets[p.head])) p.head++;
    if (p.head === from) return undefined;
    const offset = p.head < p.offsets.length ? p.offsets[p.head] : p.offsets[p.head - 1] + 1;
    if (p.head === p.offsets.length) {
      p.offsets.length = 0;
      p.head = 0;
    } else if (p.head > 1024 && p.head * 2 > p.offsets.length) {
      p.offsets = p.offsets.slice(p.head);
      p.head = 0;
    }
    return offset;
  }

  /** Resolves once at most `size` messages are added and not handled. */
  below(size) {
    if (this.size <= size) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ size, resolve }));
  }
}

module.exports = { KeyQueue };
