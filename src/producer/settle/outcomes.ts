// What becomes of each message the producer handed over, whichever way the news comes: a
// delivery report of the client library ('delivery-report', or a wrapped producer's report of
// ours, intercepted: settle/delivery.ts), a report of the native engine read as arguments (no
// report object unless a send() or a 'delivery' listener takes one), or a refusal for good, at
// hand-over (hand-over/hand-over.ts) or later from the native engine's batch or the backlog's
// retry. Each outcome: its opaque taken apart (settle/opaque.ts), the topic's counters
// (place/metadata.ts), the caller told (its promise, produce()'s exception, or a 'delivery'
// event), a marked message's handoff link settled (hold/key-handoffs.ts: the key's next move may
// go), the backlog drained (hold/backlog.ts) and the calls waiting for room woken (take/room.ts).

import type { KafkaError } from '../../core/errors';
import { toKafkaError } from '../../core/errors';
import type { Key } from '../../core/key';
import type { KafkaLibrary } from '../../core/library';
import type { Backlog } from '../hold/backlog';
import type { Delivery } from './delivery';
import type { KeyHandoffs } from '../hold/key-handoffs';
import { ERR_UNKNOWN_FAILURE, ERR_UNKNOWN_PARTITION, ERR_UNKNOWN_TOPIC, type HandOver } from '../hand-over/hand-over';
import type { Metadata } from '../place/metadata';
import type { Room } from '../take/room';
import { open, settles } from './opaque';
import type { DeliveryReport, Pending, Queued, Waiting } from '../types';

/** What the producer's events are to the outcomes (functions: no reference back to the producer). */
export interface OutcomesHost {
  /** Whether 'delivery' has listeners. */
  listening(): boolean;
  /** Emits 'delivery'. */
  tell(failure: KafkaError | null, report: unknown): void;
}

export interface OutcomesParts {
  readonly host: OutcomesHost;
  /** The client library, for the names of librdkafka's error codes. */
  readonly library: KafkaLibrary | undefined;
  /** Whether the client emits delivery reports (without, the native engine reports only failures). */
  readonly reports: boolean;
  readonly delivery: Delivery;
  readonly metadata: Metadata;
  readonly handoffs: KeyHandoffs<Waiting> | undefined;
  readonly backlog: Backlog<Queued>;
  /** The calls waiting for room, woken as a report frees it. */
  readonly room: Room;
  readonly handOver: HandOver;
}

function librdkafkaMessage(code: number, library: KafkaLibrary | undefined): string {
  const name = Object.entries(library?.CODES?.ERRORS ?? {}).find(([, v]) => v === code)?.[0];
  return name ? `${name} (${code})` : `librdkafka error ${code}`;
}

export class Outcomes {
  private readonly host: OutcomesHost;
  private readonly library: KafkaLibrary | undefined;
  private readonly reports: boolean;
  private readonly delivery: Delivery;
  private readonly metadata: Metadata;
  private readonly handoffs: KeyHandoffs<Waiting> | undefined;
  private readonly backlog: Backlog<Queued>;
  private readonly room: Room;
  private readonly handOver: HandOver;

  constructor(parts: OutcomesParts) {
    this.host = parts.host;
    this.library = parts.library;
    this.reports = parts.reports;
    this.delivery = parts.delivery;
    this.metadata = parts.metadata;
    this.handoffs = parts.handoffs;
    this.backlog = parts.backlog;
    this.room = parts.room;
    this.handOver = parts.handOver;
  }

  /** A delivery report of the client library (`report`: node-rdkafka's object). */
  delivered(err: any, report: any): void {
    const settled = this.delivery.settle(err, report);
    if (settled === undefined) return;
    const { failure, link } = settled;
    report = settled.report;
    const metadata = this.metadata;
    const info = report?.topic === metadata.lastName ? metadata.last : metadata.topics.get(report?.topic);
    if (failure) {
      if (info) info.failed++;
      if (failure.librdkafkaCode === ERR_UNKNOWN_PARTITION || failure.librdkafkaCode === ERR_UNKNOWN_TOPIC) {
        if (report?.topic) this.metadata.request(report.topic, true);
      }
      this.host.tell(failure, report);
    } else {
      if (info) info.delivered++;
      this.host.tell(null, report);
    }
    if (link !== undefined) {
      this.handoffs!.settled(link, report.partition, failure ? -1 : report.offset);
      if (this.room.waiting > 0) this.room.wake();
    }
    if (this.backlog.holding && !this.backlog.scheduledDrain) this.backlog.drain();
    else if (this.backlog.owing) this.backlog.drainedIfDue();
  }

  /**
   * A delivery report of the native engine, as arguments (no report object unless a send()
   * or a 'delivery' listener takes one): the same accounting as delivered().
   */
  nativeReport(opaque: unknown, code: number, topic: string, partition: number, offset: number, timestamp: number, size: number, key: unknown, value: Buffer | null | undefined, member: number): void {
    // A grouped send() (settle/send-groups.ts) has its caller's key in `key`, kept by the engine.
    const { link, pending, group, sent } = open(opaque);
    const failure = code === 0 ? null : toKafkaError({ code, message: librdkafkaMessage(code, this.library) }, `delivery to ${topic} [${partition}]`);
    if (!this.reports) {
      // Reports off: librdkafka reports only what it could not deliver, and its caller is told.
      if (failure) this.host.tell(failure, { topic, partition, offset, key: key as Key, value, timestamp, size });
      return;
    }
    const listening = this.host.listening();
    const report: DeliveryReport | undefined = sent || listening || group !== undefined
      ? (sent || group !== undefined || value === undefined
        ? { topic, partition, offset, key: sent ? pending!.key : (key as Key | null), timestamp, size }
        // dr_msg_cb: node-rdkafka's reports carry the value.
        : { topic, partition, offset, key: key as Key | null, value, timestamp, size } as DeliveryReport)
      : undefined;
    this.delivery.confirmed(pending, failure, report);
    if (group !== undefined) group.settle(member, failure ?? report!);
    const metadata = this.metadata;
    const info = topic === metadata.lastName ? metadata.last : metadata.topics.get(topic);
    if (failure) {
      if (info) info.failed++;
      if (code === ERR_UNKNOWN_PARTITION || code === ERR_UNKNOWN_TOPIC) this.metadata.request(topic, true);
    } else if (info) info.delivered++;
    if (listening) this.host.tell(failure, report);
    if (link !== undefined) {
      this.handoffs!.settled(link, partition, failure ? -1 : offset);
      if (this.room.waiting > 0) this.room.wake();
    }
    if (this.backlog.holding && !this.backlog.scheduledDrain) this.backlog.drain();
    else if (this.backlog.owing) this.backlog.drainedIfDue();
  }

  /**
   * A message the native engine handed over with its batch and librdkafka refused for good (no
   * report follows): as a refusal at produce(), its send() rejects or 'delivery' tells.
   */
  nativeRefused(opaque: unknown, code: number, topic: string, partition: number, key: unknown, member: number): void {
    const o = open(opaque);
    const link = o.link;
    const pending = settles(o, member, key);
    if (this.reports) this.delivery.confirmed(pending, null, undefined, true);
    if (link !== undefined) this.handoffs!.settled(link, -1, -1);
    this.failed(code, topic, partition, key as Key, pending);
    if (this.backlog.owing) setImmediate(() => this.backlog.drainedIfDue());
  }

  /** A message taken earlier and refused for good now: its successors go on, its caller is told. */
  refused(code: number, m: Queued): void {
    if (m.link !== undefined) this.handoffs!.settled(m.link, -1, -1);
    this.failed(code, m.topic, m.partition, m.key, m.pending);
    // No report follows it: an owed 'drain' is looked at once the release under way is done.
    if (this.backlog.owing) setImmediate(() => this.backlog.drainedIfDue());
  }

  /**
   * A message librdkafka refused for good as its own call handed it over (place/placement.ts):
   * a send()'s promise rejects, produce() throws the failure.
   */
  refusedAtOnce(code: number, topic: string, pending: Pending | undefined): true {
    const failure = this.failure(code, topic);
    if (pending !== undefined && pending !== this.delivery.fireAndForget) pending.reject(failure);
    else throw failure;
    return true;
  }

  /** A message librdkafka refused for good after its call returned: its promise rejects, or 'delivery' tells. */
  failed(code: number, topic: string, partition: number, key: Key | null | undefined, pending: Pending | undefined): void {
    const failure = this.failure(code, topic);
    if (pending !== undefined && pending !== this.delivery.fireAndForget) pending.reject(failure);
    else this.host.tell(failure, { topic, partition, offset: -1, key: key as any });
  }

  /** librdkafka's refusal `code` as a KafkaError, counted against its topic. */
  private failure(code: number, topic: string): KafkaError {
    const cause = code === ERR_UNKNOWN_FAILURE ? this.handOver.lastError : { code, message: librdkafkaMessage(code, this.library) };
    const failure = toKafkaError(cause, `produce to ${topic}`);
    const info = this.metadata.topics.get(topic);
    if (info) info.failed++;
    return failure;
  }
}
