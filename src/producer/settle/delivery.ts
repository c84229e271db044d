// Delivery-report accounting: which reports are ours (by the opaque each message was produced
// with, taken apart by settle/opaque.ts), the count in flight, and the send() promises a report
// or a disconnect settles.

import { toKafkaError } from '../../core/errors';
import { withLibrdkafkaCode } from '../../core/rdkafka-codes';
import type { KafkaError } from '../../core/errors';
import type { Link } from '../hold/key-handoffs';
import { open } from './opaque';
import type { DeliveryReport, Pending, ProducerLike } from '../types';

const hasOwn = Object.prototype.hasOwnProperty;

/** Opaque of our fire-and-forget messages on a wrapped producer, to tell its reports from the app's own. */
export const OURS = Object.freeze({ ours: true }) as unknown as Pending;

/** One delivery report of ours, as the producer passes it on (one object, reused: read it before the next report). */
export interface Settled {
  /** What 'delivery' listeners get: a send()'s with the caller's key and without our opaque. */
  report: any;
  failure: KafkaError | null;
  /** The handoff link the message was produced with, if it was marked. */
  link: Link | undefined;
}

export class Delivery {
  /** Handed to librdkafka, delivery not yet reported. */
  inflight = 0;
  /** send() promises handed over and not settled: rejected at disconnect. */
  private readonly unconfirmed = new Set<Pending>();

  /** send() calls handed over on the client library's produce() (engine 'client', or a wrapped producer) whose report has not come; the native engine's are in its slots. */
  get unconfirmedCount(): number {
    return this.unconfirmed.size;
  }

  /** What settle() returns, overwritten by each report: nothing allocated per report. */
  private readonly settled: Settled = { report: undefined, failure: null, link: undefined };

  constructor(
    /** Whether the producer owns its client (every report is ours). */
    private readonly owned: boolean,
    /** The opaque of fire-and-forget messages: none on a client we own, OURS on a wrapped one. */
    readonly fireAndForget: Pending | undefined,
    /** Whether the client emits delivery reports at all. */
    private readonly reports: boolean,
    /**
     * What the messages in flight settle, when the client keeps them (the native engine's
     * slots): then no set of its own is kept here (its upkeep weighed on send(): docs/performance.md).
     */
    private readonly inflightPendings?: () => Iterable<unknown>,
  ) {}

  /** Whether a report's opaque is one of ours (on a wrapped client the app's own go to the app). */
  isOurs(opaque: unknown): boolean {
    const o = open(opaque);
    return o.link !== undefined || o.sent || (o.group === undefined && o.pending === this.fireAndForget);
  }

  /** A message librdkafka took: one more report to wait for. */
  handedOver(pending: Pending | undefined): void {
    if (this.reports) this.inflight++;
    if (pending !== undefined && pending !== this.fireAndForget && this.inflightPendings === undefined) this.unconfirmed.add(pending);
  }

  /** Takes one delivery report: undefined when it is not ours, else its promise settled. */
  settle(err: any, report: any): Settled | undefined {
    const { link, pending, sent } = open(report?.opaque);
    // The report shows the opaque the message has without its link (node-rdkafka makes a
    // report object per message, and only ours reach here: set in place, not copied).
    if (link !== undefined) report.opaque = link.opaque;
    // On a wrapped producer, the app's own messages (any other opaque, or none) are not ours.
    if (!this.owned && link === undefined && pending !== this.fireAndForget && !sent) return undefined;
    // A send()'s report: the key as the caller gave it (librdkafka's is a Buffer), and not our opaque.
    if (sent) {
      report = { topic: report.topic, partition: report.partition, offset: report.offset, key: pending!.key, timestamp: report.timestamp, size: report.size };
    }
    this.inflight--;
    const failure = err ? toKafkaError(withLibrdkafkaCode(err), `delivery to ${report?.topic} [${report?.partition}]`) : null;
    if (pending && typeof pending.resolve === 'function') {
      this.unconfirmed.delete(pending);
      if (failure) pending.reject(failure);
      else pending.resolve(report as DeliveryReport);
    }
    const settled = this.settled;
    settled.report = report;
    settled.failure = failure;
    settled.link = link;
    return settled;
  }

  /**
   * A report taken apart by the native engine: one less in flight, and a send()'s promise
   * settled with `report` (`uncounted`: only forgotten, its caller is told elsewhere).
   */
  confirmed(pending: Pending | undefined, failure: KafkaError | null, report: DeliveryReport | undefined, uncounted = false): void {
    this.inflight--;
    if (uncounted || pending === undefined || pending === this.fireAndForget) return;
    if (failure) pending.reject(failure);
    else pending.resolve(report as DeliveryReport);
  }

  /** Rejects every send() handed over and not confirmed (at disconnect). */
  rejectUnconfirmed(err: Error): void {
    if (this.inflightPendings !== undefined) {
      for (const inflight of this.inflightPendings()) {
        const pending = inflight as Pending | undefined;
        if (pending !== undefined && pending !== this.fireAndForget && typeof pending.reject === 'function') pending.reject(err);
      }
    }
    for (const pending of this.unconfirmed) pending.reject(err);
    this.unconfirmed.clear();
  }

  /** Rejects a held message's send() (not a fire-and-forget one). */
  reject(pending: Pending | undefined, err: Error): void {
    if (pending && pending !== this.fireAndForget) pending.reject(err);
  }
}

/**
 * A wrapped producer's delivery reports of our messages are taken before its listeners see
 * them, and its application's never reach us: node-rdkafka hands each report to
 * this.emit('delivery-report', ...), looked up on the instance. Returns the undo,
 * for disconnect: it restores emit once none of ours is in flight (a late one would reach the
 * application), or at the report that ends them, `done()` telling.
 */
export function interceptReports(client: ProducerLike, delivery: Delivery, onReport: (err: any, report: any) => void, done: () => boolean): () => void {
  type Emitting = ProducerLike & { emit(event: string | symbol, ...args: any[]): boolean };
  const patched = client as Emitting;
  const emit = patched.emit;
  const hadOwn = hasOwn.call(patched, 'emit');
  const restore = (): void => {
    if (patched.emit !== intercepted) return;
    if (hadOwn) patched.emit = emit;
    else delete (patched as Partial<Emitting>).emit;
  };
  function intercepted(this: unknown, event: string | symbol, ...args: any[]): boolean {
    const report = args[1];
    if (event === 'delivery-report' && typeof report === 'object' && report !== null && delivery.isOurs(report.opaque)) {
      onReport(args[0], report);
      if (done() && delivery.inflight <= 0) restore();
      return true;
    }
    return emit.call(this, event, ...args);
  }
  patched.emit = intercepted;
  return () => {
    if (delivery.inflight <= 0) restore();
  };
}
