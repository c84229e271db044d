// send() calls settled in groups, on the native engine. The send() calls whose messages go
// into the engine's batch together for one partition form a SendGroup (src/native/produce.ts):
// each call's promise is the group's promise followed by `take`, and the group's promise
// resolves once every member has its outcome (the reactions of one promise run in the order
// they were added, so take's k-th run is member k's). A call then keeps one promise and one
// reaction alive until its report, where a promise of its own keeps also two resolving
// functions, their context and a holder: with many calls in flight, that garbage is most of
// send()'s cost (docs/performance.md). A member waits at most for the others of its partition's
// batch, which librdkafka sends together.
//
// The call's opaque until the engine takes the message is CurrentSend, one per producer: a
// message that is held instead (the backlog, a handoff, its topic's count) is given a
// SendPending of its own at that point (Placement, own()), and one refused at once records its
// error. Intake reads which of the three happened when the call returns.
//
// SendGroups is how the engine's messages take their slots (the engine's SlotTaker,
// src/native/produce.ts): a CurrentSend's message joins its partition's group of the batch.
// settledBy() takes a slot's opaque apart (its handoff link, a group's member), for every path
// that settles one.

import type { Buffer } from 'node:buffer';
import type { Key } from '../../core/key';
import type { SlotTaker } from '../../native/produce';
import type { Slots } from '../../native/slots';
import { MemberPending, type Settles } from './send-batch';
import { Link } from '../hold/key-handoffs';
import { SendPending, promiseOf } from './send-pending';
import { SEND } from '../types';
import type { DeliveryReport, Pending } from '../types';

export class SendGroup implements Settles {
  /**
   * Per member: its report or its error once it has one (undefined before, and once taken);
   * made at the first outcome, when the group has all its members (no array grown per member).
   */
  private outcomes: Array<DeliveryReport | Error | undefined> | undefined;
  /** Members, and those without an outcome. */
  private size = 0;
  private left = 0;
  /** Members whose promise is `take`'s, made in member order (the rest, if any, have one of their own). */
  private inOrder = 0;
  private ordered = true;
  /** `take`'s next member. */
  next = 0;
  /** Whether every member has its outcome: a group takes no member after. */
  done = false;
  private resolve!: (group: SendGroup) => void;
  private readonly settledAll = new Promise<SendGroup>((resolve) => {
    this.resolve = resolve;
  });

  /** A new member: its index. */
  add(): number {
    this.left++;
    return this.size++;
  }

  /** Takes back the last member, before its promise was made (its message was refused at once). */
  drop(): void {
    this.size--;
    this.left--;
    if (this.outcomes !== undefined && this.outcomes.length > this.size) this.outcomes.length = this.size;
  }

  /** Member `member`'s promise: made once per member, in member order (else a reaction of its own). */
  promiseOf(member: number): Promise<DeliveryReport> {
    if (this.ordered && member === this.inOrder) {
      this.inOrder++;
      return this.settledAll.then(take);
    }
    this.ordered = false;
    return this.settledAll.then((group) => group.outcomeOf(member));
  }

  /** Member `member`'s outcome; a second one is ignored (a report after a disconnect settled it). */
  settle(member: number, outcome: DeliveryReport | Error, _failed?: boolean): void {
    let outcomes = this.outcomes;
    if (outcomes === undefined) outcomes = this.outcomes = new Array(this.size);
    if (this.done || outcomes[member] !== undefined) return;
    outcomes[member] = outcome;
    if (--this.left === 0) {
      this.done = true;
      this.resolve(this);
    }
  }

  /** The member as a Pending, for the paths that settle one (a refusal, a disconnect): made only there. */
  member(member: number, key: Key | null): Pending {
    return new MemberPending(this, member, key);
  }

  /** Member `member`'s report, or its error thrown; forgotten here. */
  outcomeOf(member: number): DeliveryReport {
    const outcomes = this.outcomes!;
    const outcome = outcomes[member];
    outcomes[member] = undefined;
    if (outcome instanceof Error) throw outcome;
    return outcome as DeliveryReport;
  }
}

/** The promise reaction of the members in order: the next one's outcome. */
function take(group: SendGroup): DeliveryReport {
  return group.outcomeOf(group.next++);
}

const NONE = 0;
const GROUPED = 1;
const OWN = 2;
const FAILED = 3;

/**
 * The opaque of the send() being placed (one per producer, used by one call at a time): the
 * native engine joins its message to a group, a part that holds the message gives it a
 * SendPending of its own (own()), a refusal records its error.
 */
export class CurrentSend implements Pending {
  readonly [SEND] = true as const;
  /** The call's key as the caller gave it, for its report. */
  key: Key | null = null;
  /** Whether a call is under way (a send() made meanwhile, from an event listener, takes the plain path). */
  busy = false;
  private state = NONE;
  private group: SendGroup | undefined;
  private index = -1;
  private own$: SendPending | undefined;
  private promise$: Promise<DeliveryReport> | undefined;
  private error: Error | undefined;

  /** A call begins. */
  begin(key: Key | null): void {
    this.busy = true;
    this.key = key;
    this.state = NONE;
  }

  /** The engine took the message as member `index` of `group`. */
  joined(group: SendGroup, index: number): void {
    this.state = GROUPED;
    this.group = group;
    this.index = index;
  }

  /** The engine gave the message back at once (refused): no member any more. */
  left(): void {
    this.group?.drop();
    this.state = NONE;
    this.group = undefined;
  }

  /** A SendPending of the call's own, for a part that holds the message. */
  own(): SendPending {
    if (this.state === OWN) return this.own$!;
    const pending = new SendPending(this.key);
    this.promise$ = promiseOf(pending);
    this.state = OWN;
    this.own$ = pending;
    return pending;
  }

  resolve(): void {
    throw new Error('a send() is settled by its group or its own SendPending');
  }

  /** Refused at once (or a fault): the call's promise rejects with `err`. */
  reject(err: Error): void {
    if (this.state === OWN) this.own$!.reject(err);
    else if (this.state === GROUPED) this.group!.settle(this.index, err);
    else {
      this.state = FAILED;
      this.error = err;
    }
  }

  /** The call ends: its promise. */
  end(): Promise<DeliveryReport> {
    this.busy = false;
    const state = this.state;
    this.state = NONE;
    if (state === GROUPED) {
      const group = this.group!;
      this.group = undefined;
      return group.promiseOf(this.index);
    }
    if (state === OWN) {
      const promise = this.promise$!;
      this.own$ = undefined;
      this.promise$ = undefined;
      return promise;
    }
    const err = state === FAILED ? this.error! : new Error('send(): the message was neither taken nor refused');
    this.error = undefined;
    return Promise.reject(err);
  }
}

/**
 * What a message's opaque settles: inside its handoff link (hold/key-handoffs.ts) if it has one, a
 * grouped send() as its member `member`.
 */
export function settledBy(opaque: unknown, member: number, key: unknown): Pending | undefined {
  const inner = opaque instanceof Link ? opaque.opaque : opaque;
  return inner instanceof SendGroup ? inner.member(member, key as Key | null) : (inner as Pending | undefined);
}

/** The native engine's SlotTaker: a send()'s message (its CurrentSend, alone or in a link) joins its partition's group of the batch. */
export class SendGroups implements SlotTaker {
  /** Per partition (+1): the group of this batch's send() calls to it; which are set. */
  private readonly groups: Array<SendGroup | undefined> = [];
  private readonly grouped: number[] = [];
  /** The CurrentSend of the last send() joined to a group. */
  private joiner: CurrentSend | undefined;

  take(slots: Slots, opaque: unknown, topic: string, partition: number, size: number, key: Key | null | undefined, value: Buffer | null): number {
    if (opaque instanceof CurrentSend) {
      // A send(): a member of its partition's group in this batch.
      const group = this.groupOf(partition);
      return slots.take(group, topic, size, opaque.key, value, this.join(opaque, group));
    }
    if (opaque instanceof Link && opaque.opaque instanceof CurrentSend) {
      // A spread send(): its link goes with the message, the group in the link.
      const later = opaque.opaque;
      const group = this.groupOf(partition);
      opaque.opaque = group;
      return slots.take(opaque, topic, size, later.key, value, this.join(later, group));
    }
    return slots.take(opaque, topic, size, key, value, -1);
  }

  /** send() calls after this hand-over form new groups. */
  handedOver(): void {
    const grouped = this.grouped;
    for (let k = 0; k < grouped.length; k++) this.groups[grouped[k]] = undefined;
    grouped.length = 0;
  }

  /** A send() refused at once (the message just taken, slot `id`) leaves its group: its caller is told by the refusal. */
  refusedAtOnce(slots: Slots, id: number): void {
    const joiner = this.joiner;
    if (slots.members[id] < 0 || joiner === undefined) return;
    const opaque = slots.opaques[id];
    if (opaque instanceof Link) opaque.opaque = joiner;
    joiner.left();
  }

  settles(opaque: unknown, member: number, key: unknown): unknown {
    return settledBy(opaque, member, key);
  }

  /** Makes `later`'s send() a member of `group`; its index. */
  private join(later: CurrentSend, group: SendGroup): number {
    const member = group.add();
    later.joined(group, member);
    this.joiner = later;
    return member;
  }

  /** The group of this batch's send() calls to `partition` (-1: librdkafka's choice). */
  private groupOf(partition: number): SendGroup {
    let group = this.groups[partition + 1];
    if (group === undefined || group.done) {
      group = new SendGroup();
      if (this.groups[partition + 1] === undefined) this.grouped.push(partition + 1);
      this.groups[partition + 1] = group;
    }
    return group;
  }
}
