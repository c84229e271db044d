// PlatformaticDynamicConsumer's direct calls (src/platformatic/consumer.ts): a message the
// Resequencer lets through on its own, unmarked, while the Dispatcher has nothing waiting and
// no call under way, is handed to the handler here, past the Dispatcher's queue and its
// bookkeeping (a handler that returns at once leaves nothing to keep). The first call that does
// not simply return — a promise, or a throw — ends this path for the run: that call is kept here
// (retried as the Dispatcher retries one: handlerRetries times, retryBackoffMs apart, then the
// run stops with the HandlerError), what is released meanwhile waits here behind it, and once it
// is over everything goes to the Dispatcher. While a call or a waiting message is here, commits
// of its partition stay below it (floor()).

import type { Dispatcher, HandledInfo } from '../consumer/dispatch';
import type { Release } from '../consumer/resequencer';
import { HandlerError } from '../core/errors';
import type { PlatformaticConsumed } from './consumer-types';

/** What the handler gets with an unmarked message (the same object each time, frozen). */
const UNMARKED: HandledInfo = Object.freeze({ ordered: true, outOfOrder: false, order: null });

export interface DirectHooks {
  handle(message: PlatformaticConsumed, info: HandledInfo): void | Promise<void>;
  /** Whether the message's partition is still this consumer's (a failed call of a revoked one is left to its next owner). */
  owns(message: PlatformaticConsumed): boolean;
  /** The run goes on (a retry is made only then). */
  running(): boolean;
  handlerError(error: HandlerError, message: PlatformaticConsumed): void;
  fail(error: HandlerError): void;
}

export class DirectCalls {
  /** Calls may be made here (until the first that does not simply return). */
  private open = true;
  /** The call kept here, and the releases waiting behind it. */
  private call: Release<PlatformaticConsumed> | null = null;
  private parked: Release<PlatformaticConsumed>[] = [];
  /** Bumped by reset(): a call of an earlier run changes nothing when it ends. */
  private generation = 0;

  constructor(
    private readonly dispatch: Dispatcher<PlatformaticConsumed>,
    private readonly retries: number,
    private readonly retryBackoffMs: number,
    private readonly hooks: DirectHooks,
  ) {}

  /** Nothing is kept here. */
  get idle(): boolean {
    return this.call === null && this.parked.length === 0;
  }

  /** Released messages waiting here behind a call kept here. */
  get waiting(): number {
    return this.parked.length;
  }

  /** Released messages: to the handler here, behind a call kept here, or to the Dispatcher. */
  take(released: Release<PlatformaticConsumed>[]): void {
    if (this.call !== null) {
      for (const r of released) this.parked.push(r);
      return;
    }
    if (!this.open || released.length !== 1 || released[0].order !== null || this.dispatch.busy) {
      this.dispatch.accept(released);
      return;
    }
    this.run(released[0], 1, this.generation);
  }

  private run(r: Release<PlatformaticConsumed>, attempts: number, generation: number): void {
    let result: void | Promise<void>;
    try {
      result = this.hooks.handle(r.message, UNMARKED);
    } catch (cause) {
      this.failed(r, attempts, generation, cause);
      return;
    }
    if (result !== null && typeof result === 'object' && typeof (result as Promise<void>).then === 'function') {
      this.keep(r);
      (result as Promise<void>).then(() => this.over(r, generation), (cause) => this.failed(r, attempts, generation, cause));
    } else this.over(r, generation);
  }

  /** A call that did not simply return: kept here until it is over; the Dispatcher takes the rest of the run. */
  private keep(r: Release<PlatformaticConsumed>): void {
    this.open = false;
    this.call = r;
  }

  private failed(r: Release<PlatformaticConsumed>, attempts: number, generation: number, cause: unknown): void {
    if (generation !== this.generation) return;
    this.keep(r);
    const { topic, partition, offset } = r.message;
    const error = new HandlerError(topic, partition, offset, attempts, cause);
    this.hooks.handlerError(error, r.message);
    // Stopping, or revoked: read again by its next owner.
    if (!this.hooks.running() || !this.hooks.owns(r.message)) {
      this.over(r, generation);
      return;
    }
    if (attempts > this.retries) {
      this.hooks.fail(error);
      return;
    }
    setTimeout(() => {
      if (generation !== this.generation) return;
      if (this.hooks.running() && this.hooks.owns(r.message)) this.run(r, attempts + 1, generation);
      else this.over(r, generation);
    }, this.retryBackoffMs);
  }

  /** A call is over (`r`, when it was kept here: what waited behind it goes to the Dispatcher). */
  private over(r: Release<PlatformaticConsumed>, generation: number): void {
    if (generation !== this.generation || this.call !== r) return;
    this.call = null;
    const parked = this.parked;
    this.parked = [];
    if (parked.length > 0) this.dispatch.accept(parked);
  }

  /** The lowest offset of `topic`/`partition` kept here (the call, or a message behind it); undefined when none. */
  floor(topic: string, partition: number): number | undefined {
    let low: number | undefined;
    const note = (r: Release<PlatformaticConsumed>): void => {
      const m = r.message;
      if (m.partition === partition && m.topic === topic && (low === undefined || m.offset < low)) low = m.offset;
    };
    if (this.call !== null) note(this.call);
    for (const r of this.parked) note(r);
    return low;
  }

  /** Partitions leave: what waits here of them is dropped (their next owner reads it again); a marked one no longer counts as released. */
  drop(leaving: ReadonlySet<string>, name: (m: PlatformaticConsumed) => string): void {
    if (this.parked.length === 0) return;
    this.parked = this.parked.filter((r) => {
      if (!leaving.has(name(r.message))) return true;
      if (r.order !== null) this.dispatch.resequencer.unreleased(r.message, r.order);
      return false;
    });
  }

  /** Resolves once no call is kept here, or after `timeoutMs`. */
  async finish(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.call !== null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** The run ended: nothing is kept (a call still under way is not waited for), and the next run may call here again. */
  reset(): void {
    this.generation++;
    this.call = null;
    this.parked = [];
    this.open = true;
  }
}
