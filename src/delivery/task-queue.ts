// The Dispatcher's waiting room (dispatch.ts): released messages waiting for a handler call,
// as tasks in lanes (one per key or partition, by ordering) whose calls never overlap and come
// in release order, and one FIFO for the tasks of no lane. next() starts the task released
// first among the FIFO's head and, from a min-heap, the first task of each idle lane.

import { Fifo } from '../core/fifo';
import type { Release, ConsumedMessage } from './resequencer-types';
import { keyText } from './message-order';

/** A released message waiting for, or in, a handler call. */
export interface Task<M extends ConsumedMessage> {
  release: Release<M>;
  /** Release order. */
  readonly seq: number;
  /** Its turn among the tasks that may start: release order, but a message that waited to be released goes before those that did not. */
  readonly rank: number;
  /** Its topic-partition (partitionKey). */
  readonly tp: string;
  /** Its partition's set of unhandled offsets when it was released (a later set: it was forgotten). */
  readonly unhandled: Set<number>;
  /** The calls it may not overlap; undefined: none (or one call at a time, whose FIFO keeps the order anyway). */
  lane: Lane<M> | undefined;
  /** The tasks after it in its lane handed to the same batch handler call (batch calls only). */
  group: Task<M>[] | undefined;
}

/** The tasks of one key or partition: one of them in a handler call at a time, in release order. */
interface Lane<M extends ConsumedMessage> {
  readonly name: string;
  /** Its waiting tasks, in release order. */
  readonly tasks: Fifo<Task<M>>;
  busy: boolean;
}

/** A min-heap of tasks by release order: the first task of each lane that may start. */
class ReadyHeap<M extends ConsumedMessage> {
  private items: Task<M>[] = [];

  peek(): Task<M> | undefined {
    return this.items[0];
  }

  push(task: Task<M>): void {
    const a = this.items;
    let i = a.push(task) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent].rank <= task.rank) break;
      a[i] = a[parent];
      i = parent;
    }
    a[i] = task;
  }

  pop(): Task<M> | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1].rank < a[l].rank ? l + 1 : l;
        if (a[c].rank >= last.rank) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    return top;
  }

  clear(): void {
    this.items = [];
  }
}

/** A message's lane name by key: its topic's and key's. */
export function keyLane(m: ConsumedMessage): string {
  return `${m.topic}\u0000${keyText(m.key)}`;
}

/** Whether a message has a key (a key's lane; else a message of no lane, by key). */
export const hasKey = (m: ConsumedMessage): boolean => m.key !== null && m.key !== undefined;

/**
 * The 'unowned' rule by key: a message left out here (its partition left, or its call ended
 * unhandled) is handled later by its next owner, so the key's next message kept here and the
 * left one's chain successor go flagged 'unowned', as the resequencer flags a predecessor
 * another member owns; what follows those is in order after them. A chain place is producer
 * and sequence alone: a producer's sequences count its marked messages over all keys.
 */
export class LeftOut {
  /** Keys with a message left out and none kept since. */
  private keys: Set<string> | undefined;
  /** Chain places of the marked messages left out whose successor has not come since. */
  private links: Set<string> | undefined;

  /** Whether a message kept from now on may still be flagged. */
  get open(): boolean {
    return (this.keys !== undefined && this.keys.size > 0) || (this.links !== undefined && this.links.size > 0);
  }

  /** A message of `key` is left out. */
  leave(key: string, r: Release<ConsumedMessage>): void {
    (this.keys ??= new Set()).add(key);
    if (r.order !== null) (this.links ??= new Set()).add(`${r.order.producerId}\u0000${r.order.sequence}`);
  }

  /** A message of `key` is kept, after those left out: returned flagged when the rule says so. */
  kept<M extends ConsumedMessage>(key: string, r: Release<M>): Release<M> {
    const first = this.keys !== undefined && this.keys.delete(key);
    const successor = r.order !== null && this.links !== undefined && this.links.delete(`${r.order.producerId}\u0000${r.order.previous}`);
    return (first || successor) && r.ordered ? { ...r, ordered: false, reason: 'unowned' } : r;
  }
}

export class TaskQueue<M extends ConsumedMessage> {
  /** Lanes with a task waiting or in a call, by name. */
  private readonly lanes = new Map<string, Lane<M>>();
  /** Tasks that may start now: the first waiting task of each idle lane, by release order... */
  private readonly ready = new ReadyHeap<M>();
  /** ...and the tasks of no lane, in release order. */
  private readonly loose = new Fifo<Task<M>>();
  private count = 0;
  private seq = 0;
  /** Ranks of the messages that waited: below every release order, in their own release order. */
  private waitedRank = Number.MIN_SAFE_INTEGER;

  /** Tasks waiting (not in a call). */
  get waiting(): number {
    return this.count;
  }

  /** Whether a waiting task may start now (one of no lane, or the first of an idle lane). */
  get startable(): boolean {
    return this.loose.size > 0 || this.ready.peek() !== undefined;
  }

  /** Waiting tasks of the lane of `task` (in a call, or resting after a failed one): 0 when it has none. */
  waitingBehind(task: Task<M>): number {
    return task.lane === undefined ? 0 : task.lane.tasks.size;
  }

  /** Whether a lane exists (a message released now must then join its lane, even with one call at a time). */
  get laned(): boolean {
    return this.lanes.size > 0;
  }

  /** Lanes with a task waiting or in a call. */
  get laneCount(): number {
    return this.lanes.size;
  }

  /**
   * Queues a released message: in its lane (by partition, or by key when it has one) when `laned`,
   * else in the FIFO. One that `waited` (held, released later) starts before those that did not,
   * once its lane lets it: what waits for it, here or on another member, waits no longer than it must.
   */
  add(release: Release<M>, tp: string, unhandled: Set<number>, laned: boolean, byPartition: boolean, waited = false): void {
    const lane = laned ? this.laneOf(release.message, tp, byPartition) : undefined;
    const seq = this.seq++;
    const task: Task<M> = { release, seq, rank: waited ? this.waitedRank++ : seq, tp, unhandled, lane, group: undefined };
    this.count++;
    if (lane === undefined) this.loose.push(task);
    else {
      lane.tasks.push(task);
      if (!lane.busy && lane.tasks.size === 1) this.ready.push(task);
    }
  }

  /** A task whose call began before it was queued (Dispatcher.callNow()): its lane is busy from now on. */
  started(release: Release<M>, tp: string, unhandled: Set<number>, laned: boolean, byPartition: boolean): Task<M> {
    const lane = laned ? this.laneOf(release.message, tp, byPartition) : undefined;
    if (lane !== undefined) {
      lane.busy = true;
      if (lane.tasks.size > 0) this.readyAgain();
    }
    const seq = this.seq++;
    return { release, seq, rank: seq, tp, unhandled, lane, group: undefined };
  }

  /** A message's lane (made when it has none): its partition's, its key's, or none (no key). */
  private laneOf(m: M, tp: string, byPartition: boolean): Lane<M> | undefined {
    if (!byPartition && !hasKey(m)) return undefined;
    const name = byPartition ? tp : keyLane(m);
    let lane = this.lanes.get(name);
    if (lane === undefined) this.lanes.set(name, (lane = { name, tasks: new Fifo<Task<M>>(), busy: false }));
    return lane;
  }

  /** The task to start now, or undefined: its lane is busy from now on; with `batchLimit`, its lane's next tasks join its group. */
  take(batchLimit: number): Task<M> | undefined {
    const task = this.next();
    if (task === undefined) return undefined;
    this.count--;
    const lane = task.lane;
    if (batchLimit > 0) task.group = [];
    if (lane !== undefined) {
      lane.busy = true;
      lane.tasks.shift();
      while (batchLimit > 0 && lane.tasks.size > 0 && task.group!.length + 1 < batchLimit) {
        task.group!.push(lane.tasks.shift());
        this.count--;
      }
    }
    return task;
  }

  private next(): Task<M> | undefined {
    const loose = this.loose.size > 0 ? this.loose.peek() : undefined;
    const laned = this.ready.peek();
    if (loose !== undefined && (laned === undefined || loose.rank < laned.rank)) return this.loose.shift();
    return laned === undefined ? undefined : this.ready.pop();
  }

  /**
   * `task` (in a call, of no lane: one call at a time made none) gets its lane now, busy, and every waiting task of no
   * lane its own: what follows it in its lane waits behind it, the other lanes may start meanwhile (a call resting after
   * a failure). From now on released messages join lanes too, until every lane is empty again.
   */
  laneNow(task: Task<M>, byPartition: boolean): void {
    if (task.lane !== undefined) return;
    const lane = this.laneOf(task.release.message, task.tp, byPartition);
    if (lane === undefined) return;
    lane.busy = true;
    task.lane = lane;
    this.laneLoose(byPartition);
    this.readyAgain();
  }

  /** The waiting tasks of no lane go into their lanes (made now), each lane in release order. */
  private laneLoose(byPartition: boolean): void {
    const touched = new Set<Lane<M>>();
    for (const task of this.loose.takeAll()) {
      const lane = this.laneOf(task.release.message, task.tp, byPartition);
      if (lane === undefined) this.loose.push(task);
      else {
        task.lane = lane;
        lane.tasks.push(task);
        touched.add(lane);
      }
    }
    for (const lane of touched) {
      for (const task of lane.tasks.takeAll().sort((a, b) => a.seq - b.seq)) lane.tasks.push(task);
    }
  }

  /** A task's call is over: its lane's next task may start. */
  finished(task: Task<M>): void {
    const lane = task.lane;
    if (lane === undefined) return;
    lane.busy = false;
    if (lane.tasks.size > 0) this.ready.push(lane.tasks.peek());
    else this.lanes.delete(lane.name);
  }

  /** `task` of a key ended unhandled here: the key's next waiting message and its chain successor go flagged 'unowned' (LeftOut). */
  unownedAfter(task: Task<M>): void {
    const name = keyLane(task.release.message);
    const lane = task.lane ?? this.lanes.get(name);
    const left = new LeftOut();
    left.leave(name, task.release);
    if (task.group !== undefined) for (const t of task.group) left.leave(name, t.release);
    if (lane !== undefined) {
      for (let i = 0; i < lane.tasks.size && left.open; i++) {
        const other = lane.tasks.at(i);
        other.release = left.kept(name, other.release);
      }
      return;
    }
    // One call at a time, no lanes: the key's next messages are among the loose ones.
    for (let i = 0; i < this.loose.size && left.open; i++) {
      const other = this.loose.at(i);
      if (hasKey(other.release.message) && keyLane(other.release.message) === name) other.release = left.kept(name, other.release);
    }
  }

  /** The tasks waiting behind `task` (in a call) of its key, taken out of the queue in release order. */
  takeKey(task: Task<M>): Task<M>[] {
    const name = keyLane(task.release.message);
    const lane = task.lane ?? this.lanes.get(name);
    let taken: Task<M>[];
    if (lane !== undefined) {
      // Its lane is busy (task is in a call): none of its tasks is among the ready ones.
      taken = lane.tasks.takeAll();
    } else {
      // One call at a time, no lanes: the key's next messages are among the loose ones.
      taken = [];
      for (const other of this.loose.takeAll()) {
        if (hasKey(other.release.message) && keyLane(other.release.message) === name) taken.push(other);
        else this.loose.push(other);
      }
    }
    for (const t of taken) t.lane = undefined;
    this.count -= taken.length;
    return taken;
  }

  /**
   * The tasks of partitions `gone` leave the queue (returned). By key, the first task kept behind
   * a dropped one, and a dropped one's chain successor, go flagged 'unowned' (LeftOut) rather
   * than wait for the group's commit past it, which could let two members wait for each other.
   * Given `takenBack`, the tasks behind a dropped one go there instead, unflagged, in release
   * order, to be held again until the group's handled records show what left handled.
   */
  drop(gone: ReadonlySet<string>, byKey: boolean, takenBack?: Task<M>[]): Task<M>[] {
    const removed: Task<M>[] = [];
    const keep = (task: Task<M>): boolean => {
      if (!gone.has(task.tp)) return true;
      removed.push(task);
      return false;
    };
    // One call at a time made no lanes: made now, to find what is behind a dropped message.
    if (byKey) this.laneLoose(false);
    for (const lane of this.lanes.values()) {
      const left = byKey ? new LeftOut() : undefined;
      let behind = false;
      for (const task of lane.tasks.takeAll()) {
        if (!keep(task)) {
          left?.leave(lane.name, task.release);
          behind = true;
        } else if (behind && byKey && takenBack !== undefined) {
          task.lane = undefined;
          takenBack.push(task);
        } else {
          if (left?.open) task.release = left.kept(lane.name, task.release);
          lane.tasks.push(task);
        }
      }
      if (!lane.busy && lane.tasks.size === 0) this.lanes.delete(lane.name);
    }
    for (const task of this.loose.takeAll()) if (keep(task)) this.loose.push(task);
    this.readyAgain();
    return removed;
  }

  /** The ready heap made again (the first task of each idle lane), and the count of waiting tasks. */
  private readyAgain(): void {
    this.ready.clear();
    let waiting = this.loose.size;
    for (const lane of this.lanes.values()) {
      waiting += lane.tasks.size;
      if (!lane.busy && lane.tasks.size > 0) this.ready.push(lane.tasks.peek());
    }
    this.count = waiting;
  }

  /** Every waiting task goes (returned), and every lane. */
  clear(): Task<M>[] {
    const removed = this.loose.takeAll();
    for (const lane of this.lanes.values()) for (const task of lane.tasks.takeAll()) removed.push(task);
    this.lanes.clear();
    this.ready.clear();
    this.count = 0;
    return removed;
  }
}
