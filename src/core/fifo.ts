// A first-in first-out queue on an array read from a head index: shift() costs the same however
// long the queue is, where Array.prototype.shift() moves every element once the array is large.
// The array is compacted once over half of it (and over 4,096 entries) has been taken.

export class Fifo<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The item `i` places from the oldest (0: the oldest); `i` must be below size. */
  at(i: number): T {
    return this.items[this.head + i] as T;
  }

  /** The oldest item; the queue must not be empty. */
  peek(): T {
    return this.items[this.head] as T;
  }

  /** Takes the oldest item out; the queue must not be empty. */
  shift(): T {
    const item = this.items[this.head] as T;
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Every item, oldest first; the queue is left empty. */
  takeAll(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }
}
