// The opaque a message is produced with, taken apart in one place. It is one of: none or the
// fire-and-forget opaque (settle/delivery.ts OURS: a produce()), a send()'s SendPending or, on the
// native engine, its CurrentSend until hand-over (take/send-promise.ts), a sendBatch() message's
// MemberPending (take/send-batch.ts), a group of send() calls in a native slot (settle/send-groups.ts);
// each of these may be inside a handoff Link (hold/key-handoffs.ts); on a wrapped producer, also
// the application's own. open() reads which, for every path that settles a message (a report, a
// refusal, a disconnect); SendGroups, the native engine's SlotTaker, joins a send() to its
// partition's group as the engine takes the message into its batch.

import type { Buffer } from 'node:buffer';
import type { Key } from '../../core/key';
import type { SlotTaker } from '../../native/produce';
import type { Slots } from '../../native/slots';
import { Link } from '../hold/key-handoffs';
import { CurrentSend } from '../take/send-promise';
import { SendGroup } from './send-groups';
import { SEND } from '../types';
import type { Pending } from '../types';

/** An opaque taken apart: one object, reused, so read it at once (before anything opens another). */
export interface Opened {
  /** The handoff link the message was produced in, if it has one. */
  link: Link | undefined;
  /** What its outcome settles (inside the link): a Pending, the fire-and-forget opaque, the application's own, or none; undefined for a group's member. */
  pending: Pending | undefined;
  /** A grouped send()'s group (its member index is its slot's). */
  group: SendGroup | undefined;
  /** Whether `pending` is a send()'s or a sendBatch() message's: its report carries the caller's key. */
  sent: boolean;
}

const opened: Opened = { link: undefined, pending: undefined, group: undefined, sent: false };

/** A message's opaque taken apart. */
export function open(opaque: unknown): Opened {
  let inner = opaque;
  if (inner instanceof Link) {
    opened.link = inner;
    inner = inner.opaque;
  } else {
    opened.link = undefined;
  }
  if (inner instanceof SendGroup) {
    opened.group = inner;
    opened.pending = undefined;
    opened.sent = false;
  } else {
    opened.group = undefined;
    opened.pending = inner as Pending | undefined;
    opened.sent = typeof inner === 'object' && inner !== null && (inner as Pending)[SEND] === true;
  }
  return opened;
}

/** What an opened opaque settles as a Pending: a group's member `member` is made one here (a refusal, a disconnect). */
export function settles(o: Opened, member: number, key: unknown): Pending | undefined {
  return o.group !== undefined ? o.group.member(member, key as Key | null) : o.pending;
}

/** The native engine's SlotTaker: a send()'s message (its CurrentSend, alone or in a link) joins its partition's group of the batch. */
export class SendGroups implements SlotTaker {
  /** Per partition (+1): the group of this batch's send() calls to it; which are set. */
  private readonly groups: Array<SendGroup | undefined> = [];
  private readonly grouped: number[] = [];
  /** The CurrentSend of the last send() joined to a group. */
  private joiner: CurrentSend | undefined;

  take(slots: Slots, opaque: unknown, topic: string, partition: number, size: number, key: Key | null | undefined, value: Buffer | null): number {
    const { link, pending } = open(opaque);
    if (!(pending instanceof CurrentSend)) return slots.take(opaque, topic, size, key, value, -1);
    // A send(): a member of its partition's group in this batch; a spread one's link goes with
    // the message, the group in the link.
    const group = this.groupOf(partition);
    if (link === undefined) return slots.take(group, topic, size, pending.key, value, this.join(pending, group));
    link.opaque = group;
    return slots.take(link, topic, size, pending.key, value, this.join(pending, group));
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
    const link = open(slots.opaques[id]).link;
    if (link !== undefined) link.opaque = joiner;
    joiner.left();
  }

  settles(opaque: unknown, member: number, key: unknown): unknown {
    return settles(open(opaque), member, key);
  }

  /** Makes `current`'s send() a member of `group`; its index. */
  private join(current: CurrentSend, group: SendGroup): number {
    const member = group.add();
    current.joined(group, member);
    this.joiner = current;
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
