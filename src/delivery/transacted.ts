// A consumer's commits made in a producer's transaction (its `transaction` option: exactly once). Each is made
// behind the engine's barrier: no handler call starts and those under way end, so that the transaction holds
// what the handlers produced and, for the same messages, their offsets (with their handled records) — every
// offset that moved, on every partition, whichever commit (periodic, on revoke, the last) asked for it.
//
// A transaction commits only offsets that say exactly what was handled: with handled records, none shortened
// (a message handled above its partition's offset and left out of the record would be handled, and its output
// written, again after a restart). While one would be, a periodic commit waits for a later interval (up to
// DEFER_MAX_MS), a commit on revoke or the last one aborts instead. Without handled records (a port that
// carries none) the offsets alone are committed: what was handled above them is handled again after an
// abort, a crash or a rebalance (docs/exactly-once.md).
//
// A commit that fails for a while is made again; one the transaction cannot survive (abortable), and any
// transaction in which a handler call failed (what the failed call produced is in it) or whose calls did
// not end within the barrier's wait (revokeTimeoutMs: what they produce cannot be told apart), is aborted: every
// partition is then read again from its committed offset (rewind), and what was handled since is handled
// again. A fatal failure (the producer fenced) ends the run. The last commit of a failed run aborts.

import { type KafkaError, TransactionError, toKafkaError } from '../core/errors';
import type { PartitionOffset } from './dispatch-types';
import type { CommitKind, TransactionSink } from './port';

/** How long periodic commits may wait for offsets that say exactly what was handled before the transaction aborts (ms). */
const DEFER_MAX_MS = 10_000;
/** How often a commit that failed for a while is made again, and how long apart (ms). */
const RETRIES = 3;
const RETRY_MS = 100;

/** What the transactions did (metrics().transactions). */
export interface TransactionCounts {
  committed: number;
  aborted: number;
  /** Aborts because a handler call failed in the transaction. */
  abortedForHandlers: number;
  /** Commits made again after a failure for a while. */
  retried: number;
  /** Periodic commits put off: a record would have been shortened. */
  deferred: number;
  /** Aborts because a record would have been shortened at a commit that could not wait (revoke, the last, DEFER_MAX_MS). */
  abortedInexact: number;
  /** The last commit's duration, barrier included (ms), and the median and 99th percentile of the last COMMIT_TIMES. */
  lastCommitMs: number;
  commitMsP50: number;
  commitMsP99: number;
}

/** How many commits' durations the percentiles are of. */
const COMMIT_TIMES = 1024;

export interface TransactedHooks {
  /** Runs `act` once no handler call is under way, none starting until it settles (Delivery.barrier); `first` before the wait. */
  barrier<T>(act: () => Promise<T>, first?: () => Promise<void>): Promise<T>;
  /** The offsets of every partition this consumer commits, and whether they say exactly what was handled. */
  offsets(): { offsets: PartitionOffset[]; exact: boolean };
  /** A handler call failed since the last call of this (what it produced may be in the transaction). */
  takeFailedCall(): boolean;
  /** Handler calls are still under way (the barrier gave up waiting): what they produce cannot be told apart. */
  callsUnderWay(): boolean;
  /** The run failed: its last transaction aborts. */
  failing(): boolean;
  /** Every partition owned is read again from its committed offset (after an abort). */
  rewind(): Promise<void>;
  /** The offsets did not commit: they go again (their ledger says so). */
  notCommitted(offsets: PartitionOffset[]): void;
  /** A failure the run cannot go on after (fenced): it stops with it. */
  fatal(error: KafkaError | TransactionError): void;
  warn(error: KafkaError | TransactionError): void;
}

export class Transacted {
  private readonly counts$ = { committed: 0, aborted: 0, abortedForHandlers: 0, retried: 0, deferred: 0, abortedInexact: 0, lastCommitMs: 0 };
  /** The last COMMIT_TIMES commits' durations (ms), a ring. */
  private readonly times = new Float64Array(COMMIT_TIMES);
  /** Since when the open transaction's commits were put off (0: they were not). */
  private deferredSince = 0;
  /** The transaction's ends, one after another. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly sink: TransactionSink,
    private readonly hooks: TransactedHooks,
  ) {}

  /** What the transactions did, with the percentiles of their commits' durations. */
  get counts(): TransactionCounts {
    const n = Math.min(this.counts$.committed, COMMIT_TIMES);
    const sorted = this.times.slice(0, n).sort();
    const at = (q: number): number => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.floor(q * n))]);
    return { ...this.counts$, commitMsP50: at(0.5), commitMsP99: at(0.99) };
  }

  get intervalMs(): number {
    return this.sink.intervalMs;
  }

  /**
   * Ends the open transaction with the offsets of every partition this consumer commits (owned, and revoking), read
   * behind the barrier: the offsets committed, or undefined.
   * A failure is said as Commits says its own (a 'warning'; thrown by the last commit), a fatal one ends the run.
   */
  end(kind: CommitKind): Promise<PartitionOffset[] | undefined> {
    const run = this.turn.then(() => this.endNow(kind));
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async endNow(kind: CommitKind): Promise<PartitionOffset[] | undefined> {
    const since = performance.now();
    const last = kind === 'final';
    // Behind the barrier, what was handled and what its calls produced are this transaction's; the calls that
    // start after it produce for the next (the sink holds their messages), going on while this one commits.
    const cut = await this.hooks.barrier(async (): Promise<{ offsets: PartitionOffset[]; go: boolean }> => {
      // Read now, not as given when this end was asked for: an abort since may have taken back what they say was handled.
      const read = this.hooks.offsets();
      const offsets = read.offsets;
      if (this.hooks.takeFailedCall() || this.hooks.callsUnderWay() || (last && this.hooks.failing())) {
        if (!this.hooks.failing()) this.counts$.abortedForHandlers++;
        await this.abort(offsets, last);
        return { offsets, go: false };
      }
      if (!read.exact) {
        const now = Date.now();
        if (this.deferredSince === 0) this.deferredSince = now;
        if (kind === 'periodic' && now - this.deferredSince < DEFER_MAX_MS) {
          this.counts$.deferred++;
          this.hooks.notCommitted(offsets);
          return { offsets, go: false };
        }
        this.counts$.abortedInexact++;
        await this.abort(offsets, last);
        return { offsets, go: false };
      }
      this.sink.hold();
      return { offsets, go: true };
    });
    if (!cut.go) return undefined;
    const { offsets } = cut;
    for (let attempt = 0; ; attempt++) {
      try {
        // Held meanwhile: a retry commits this transaction still without what the new calls produced.
        await this.sink.commit(offsets, !last);
        this.sink.release();
        this.deferredSince = 0;
        const took = performance.now() - since;
        this.times[this.counts$.committed % COMMIT_TIMES] = took;
        this.counts$.committed++;
        this.counts$.lastCommitMs = took;
        return offsets;
      } catch (err) {
        const failure = this.sink.failure(err);
        if (failure === 'retriable' && attempt < RETRIES) {
          this.counts$.retried++;
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
          continue;
        }
        const error = errorOf(err, 'transaction commit');
        if (failure === 'fatal') {
          this.sink.release();
          return this.fatal(offsets, error, last);
        }
        this.hooks.warn(error);
        await this.abortUnderWay(offsets, last);
        if (last) throw error;
        return undefined;
      }
    }
  }

  /**
   * A commit failed while calls went on: no call starts; what they produced, held, goes into the doomed transaction,
   * which the abort throws away (what their calls awaited fails). A call made again meanwhile (handlerRetries) produces
   * into a transaction begun at once for it, aborted in turn once every call has ended: then every partition is read
   * again and the next transaction begins. Their failures were those transactions'.
   */
  private async abortUnderWay(offsets: PartitionOffset[], last: boolean): Promise<void> {
    this.hooks.notCommitted(offsets);
    this.deferredSince = 0;
    let failed: AbortFailure | undefined;
    await this.hooks.barrier(async () => {
      this.hooks.takeFailedCall();
      if (last || this.fatallyFailed(failed)) return;
      failed ??= await this.abortOnce(false);
      // Read again even when an abort failed: what the doomed transaction handled must not count as handled.
      if (!this.fatallyFailed(failed)) await this.rewind(() => this.sink.begin());
    }, async () => {
      this.sink.release();
      failed = await this.abortOnce(!last);
    });
    if (failed !== undefined) this.failedAbort(offsets, failed, last);
  }

  /** Aborts the open transaction (the next begins unless `last`) and, while the run goes on, reads every partition again. */
  private async abort(offsets: PartitionOffset[], last: boolean): Promise<void> {
    this.hooks.notCommitted(offsets);
    this.deferredSince = 0;
    const failed = await this.abortOnce(!last);
    if (failed !== undefined && this.failedAbort(offsets, failed, last)) return;
    if (!last) await this.rewind();
  }

  /** One abort of the sink's (`next`: then a begin), counted: its failure, if any, classified as it came. */
  private async abortOnce(next: boolean): Promise<AbortFailure | undefined> {
    try {
      await this.sink.abort(next);
      this.counts$.aborted++;
      return undefined;
    } catch (err) {
      return Object.assign(errorOf(err, 'transaction abort'), { [FATAL]: this.sink.failure(err) === 'fatal' });
    }
  }

  private fatallyFailed(failed: AbortFailure | undefined): boolean {
    return failed?.[FATAL] === true;
  }

  /** A failed abort: fatal (or the last) ends the run, and true; else a 'warning'. */
  private failedAbort(offsets: PartitionOffset[], failed: AbortFailure, last: boolean): boolean {
    if (this.fatallyFailed(failed) || last) {
      this.fatal(offsets, failed, last);
      return true;
    }
    this.hooks.warn(failed);
    return false;
  }

  /** Every partition read again (then `then`); read on from where it was, what an abort took back would never be handled again: a failure stops the run. */
  private async rewind(then?: () => Promise<void>): Promise<void> {
    try {
      await this.hooks.rewind();
      await then?.();
    } catch (err) {
      this.hooks.fatal(errorOf(err, 'rewind after an aborted transaction'));
    }
  }

  private fatal(offsets: PartitionOffset[], error: KafkaError | TransactionError, last: boolean): undefined {
    this.hooks.notCommitted(offsets);
    if (last) throw error;
    this.hooks.fatal(error);
    return undefined;
  }
}

/** Marks an abort's failure the sink judged fatal (judged on the error as it came, before errorOf()). */
const FATAL = Symbol('fatal');
type AbortFailure = (KafkaError | TransactionError) & { [FATAL]?: boolean };

/** The producer's TransactionError as it is (its `kind` says what happened), anything else as a KafkaError. */
function errorOf(err: unknown, context: string): KafkaError | TransactionError {
  return err instanceof TransactionError ? err : toKafkaError(err, context);
}
