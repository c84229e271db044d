// Polling the client for delivery reports: on a timer (pollIntervalMs), or, with pollIntervalMs
// 0, left to the application, with a watch that takes over if nothing polls while reports are due.

import { PRODUCER_DEFAULTS } from '../../core/options';
import type { ProducerLike } from '../types';

const hasOwn = Object.prototype.hasOwnProperty;

/** pollIntervalMs 0: how long our messages may wait with nothing polling before we poll ourselves. */
const NO_POLL_CHECK_MS = 1000;

export class Polling {
  private timer: NodeJS.Timeout | undefined;
  private undo: (() => void) | undefined;

  constructor(private readonly client: ProducerLike, private readonly poll: () => void, private readonly inflight: () => number) {}

  /** Polls every `intervalMs`. */
  every(intervalMs: number): void {
    this.timer = setInterval(this.poll, intervalMs);
    this.timer.unref();
  }

  /**
   * pollIntervalMs 0: the application polls the client. If nothing calls its poll() for a
   * whole NO_POLL_CHECK_MS while our messages await their reports, no report ever comes and
   * send() never settles: warn once (process warning KDP_NO_POLL), and poll from here on.
   */
  watch(): void {
    const client = this.client;
    const poll = client.poll;
    const hadOwn = hasOwn.call(client, 'poll');
    let polled = false;
    let waiting = false;
    function counting(this: unknown, ...args: unknown[]): unknown {
      polled = true;
      return (poll as (...a: unknown[]) => unknown).apply(this, args);
    }
    client.poll = counting;
    this.undo = () => {
      if (client.poll !== counting) return;
      if (hadOwn) client.poll = poll;
      else delete (client as Partial<ProducerLike>).poll;
    };
    this.timer = setInterval(() => {
      const inflight = this.inflight();
      const stuck = waiting && !polled && inflight > 0;
      waiting = inflight > 0;
      polled = false;
      if (!stuck) return;
      clearInterval(this.timer);
      process.emitWarning(`DynamicProducer: ${inflight} messages await delivery reports, and nothing polled the producer for ${NO_POLL_CHECK_MS} ms ` +
        `(pollIntervalMs is 0): polling it every ${PRODUCER_DEFAULTS.pollIntervalMs} ms from now on. Call setPollInterval() on it, or pass pollIntervalMs.`,
      { type: 'DynamicProducerWarning', code: 'KDP_NO_POLL' });
      this.every(PRODUCER_DEFAULTS.pollIntervalMs);
    }, NO_POLL_CHECK_MS);
    this.timer.unref();
  }

  /** Stops the timer; the client's poll() is its own again. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.undo?.();
    this.undo = undefined;
  }
}
