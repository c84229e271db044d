// What the Dispatcher (dispatch.ts) does with a message whose handler call failed: the verdict (call again after a
// backoff, write it to the dead-letter topic, skip it, or stop the run), by the application's onFailure or by the
// retries and the deadLetter option; the backoff's wait; and, per message, its failed attempts and what was decided,
// kept while the message may come again (a transaction's abort reads it again: the verdict then applies at once).

import { CallbackError, type DeadLetterError, type HandlerError, InvalidValueError } from '../core/errors';
import type { ConsumedMessage } from './resequencer-types';

/** Why a run stops on a message: the handler's retries used up, its dead-letter writes failed too long, or onFailure's answer. */
export type FailedRunError = HandlerError | DeadLetterError | InvalidValueError | CallbackError;

/** What becomes of a message whose handler call failed. */
export type FailureVerdict = 'retry' | 'skip' | 'deadLetter' | 'stop';

const VERDICTS: ReadonlySet<unknown> = new Set<FailureVerdict>(['retry', 'skip', 'deadLetter', 'stop']);

/** The application's say on a failed call: `attempts` counts the message's failed calls so far. */
export type OnFailure<P> = (message: P, error: HandlerError, attempts: number) => FailureVerdict | Promise<FailureVerdict>;

/** How failed calls are judged and retried: set once, with the consumer. */
export interface FailureSettings<M extends ConsumedMessage> {
  /** Without onFailure: a message is handed to the handler again this many times, then dead-lettered (or the run stops). */
  readonly retries: number;
  /** The first retry's wait (ms); each next one doubles it, up to `retryBackoffMaxMs`, then a random part of it is taken off. */
  readonly retryBackoffMs: number;
  readonly retryBackoffMaxMs?: number;
  /** The application's verdict (its message as the handler gets it). */
  readonly onFailure?: (message: M, error: HandlerError, attempts: number) => unknown;
  /** A dead-letter topic is configured. */
  readonly deadLetter: boolean;
  /** How long a message may stay parked on a dead-letter write that fails before the run stops (ms). */
  readonly maxParkMs?: number;
}

/** What failed of a message, while it may come again. */
export interface Failure {
  /** Its handler calls that failed. */
  attempts: number;
  /** What was decided after the last of them. */
  verdict: FailureVerdict;
  /** Not handed out again before this (Date.now() ms). */
  notBefore: number;
  /** Since when its dead-letter writes fail (Date.now() ms; 0: none failed). */
  parkedSince: number;
  /** Its dead-letter writes that failed. */
  writes: number;
  /** The handler's last failure on it. */
  error: HandlerError;
}

/** At most this many messages' failures are remembered; past it the oldest is forgotten (it counts from 1 again). */
const MAX_REMEMBERED = 10_000;

/** The default cap of the backoff (ms). */
export const RETRY_BACKOFF_MAX_MS = 30_000;
/** The default bound of a park (ms). */
export const MAX_PARK_MS = 60_000;

/** What the failure handling did (metrics().failures). */
export interface FailureCounts {
  /** Handler calls made again after a failure. */
  retries: number;
  /** Messages written to the dead-letter topic (acknowledged). */
  deadLettered: number;
  /** Messages skipped (onFailure's 'skip'): handled without a successful call. */
  skipped: number;
  /** Dead-letter writes that failed (each parked its message for a while). */
  deadLetterFailures: number;
  /** Messages parked now: their dead-letter write failed, their key waits. */
  parked: number;
}

export class FailurePolicy<M extends ConsumedMessage> {
  readonly counts: FailureCounts = { retries: 0, deadLettered: 0, skipped: 0, deadLetterFailures: 0, parked: 0 };
  /** By message (topic-partition and offset): what failed of it. */
  private readonly failures = new Map<string, Failure>();
  readonly maxParkMs: number;
  private readonly backoffMaxMs: number;

  constructor(private readonly settings: FailureSettings<M>) {
    this.maxParkMs = settings.maxParkMs ?? MAX_PARK_MS;
    this.backoffMaxMs = Math.max(settings.retryBackoffMs, settings.retryBackoffMaxMs ?? RETRY_BACKOFF_MAX_MS);
  }

  /** Messages with a failure remembered (0 on the hot path: nothing to look up). */
  get size(): number {
    return this.failures.size;
  }

  /** The wait before the call after `attempts` failed ones: exponential, capped, less up to a fifth of it at random (jitter). */
  backoff(attempts: number): number {
    const base = this.settings.retryBackoffMs;
    if (base === 0) return 0;
    const full = Math.min(this.backoffMaxMs, base * 2 ** Math.min(attempts - 1, 52));
    return Math.round(full * (1 - Math.random() / 5));
  }

  /**
   * The verdict on `message` after its `attempts`-th failed call: the application's (onFailure), else a retry while
   * retries are left, then the dead-letter topic where there is one, else a stop. An answer that is none of the four,
   * or a 'deadLetter' without a dead-letter topic, is an InvalidValueError; onFailure throwing, a CallbackError (thrown or
   * rejected with: the run stops with it).
   */
  verdict(message: M, error: HandlerError, attempts: number): FailureVerdict | Promise<FailureVerdict> {
    const onFailure = this.settings.onFailure;
    if (onFailure === undefined) return attempts <= this.settings.retries ? 'retry' : this.settings.deadLetter ? 'deadLetter' : 'stop';
    let answer: unknown;
    try {
      answer = onFailure(message, error, attempts);
    } catch (cause) {
      return Promise.reject(new CallbackError('options.onFailure', cause));
    }
    if (answer !== null && typeof answer === 'object' && typeof (answer as Promise<unknown>).then === 'function') {
      return (answer as Promise<unknown>).then((a) => this.checked(a), (cause) => {
        throw new CallbackError('options.onFailure', cause);
      });
    }
    return this.checked(answer);
  }

  /** onFailure's answer, or an InvalidValueError: none of the four, or 'deadLetter' without a dead-letter topic. */
  private checked(answer: unknown): FailureVerdict {
    if (answer === 'deadLetter' && !this.settings.deadLetter) throw new InvalidValueError("options.onFailure's answer (no options.deadLetter)", ['retry', 'skip', 'stop'], answer);
    if (!VERDICTS.has(answer)) throw new InvalidValueError("options.onFailure's answer", [...VERDICTS] as string[], answer);
    return answer as FailureVerdict;
  }

  /** What failed of the message at `offset` of partition `tp`, if it failed and may come again. */
  of(tp: string, offset: number): Failure | undefined {
    return this.failures.get(`${tp}\u0000${offset}`);
  }

  /** Remembers what failed of a message (the oldest remembered forgotten past MAX_REMEMBERED). */
  remember(tp: string, offset: number, failure: Failure): void {
    const name = `${tp}\u0000${offset}`;
    this.failures.delete(name);
    this.failures.set(name, failure);
    if (this.failures.size > MAX_REMEMBERED) {
      const oldest = this.failures.keys().next().value as string;
      if (this.failures.get(oldest)!.parkedSince > 0) this.counts.parked--;
      this.failures.delete(oldest);
    }
  }

  /** The message is done with (handled, skipped or dead-lettered): its failures are forgotten. */
  forget(tp: string, offset: number): void {
    const name = `${tp}\u0000${offset}`;
    const failure = this.failures.get(name);
    if (failure === undefined) return;
    if (failure.parkedSince > 0) this.counts.parked--;
    this.failures.delete(name);
  }

  /** A dead-letter write of the message failed: parked from now (if not since earlier); whether it stayed parked maxParkMs. */
  parked(failure: Failure, now: number): boolean {
    this.counts.deadLetterFailures++;
    failure.writes++;
    if (failure.parkedSince === 0) {
      failure.parkedSince = now;
      this.counts.parked++;
    }
    return now - failure.parkedSince >= this.maxParkMs;
  }

  /** Partition `tp` left (or is forgotten): what failed of its messages is forgotten too. */
  forgetPartition(tp: string): void {
    const prefix = `${tp}\u0000`;
    for (const name of this.failures.keys()) if (name.startsWith(prefix)) this.forget(tp, Number(name.slice(prefix.length)));
  }

  /** The run ended: nothing is remembered (the next run reads from the committed offsets, counting from 1). */
  clear(): void {
    this.failures.clear();
    this.counts.parked = 0;
  }
}
