// The Dispatcher's (dispatch.ts) failed handler calls: each judged (failures.ts), then called again after a backoff,
// written to the dead-letter topic, skipped, or the run stopped. While a call waits (its backoff, or a dead-letter write
// that failed: parked), its lane waits with it and nothing else does: it holds no handler slot, no barrier or revoke
// waits for it, and its lane's waiting messages do not count against maxPending (up to maxPending more).
//
// Under a transaction (transacted.ts) the failed call's output is in the open transaction, which aborts: the call rests
// until its message is read again, then what was decided for it applies at once (after what is left of its backoff).

import { DeadLetterError, type HandlerError } from '../core/errors';
import type { Ordering } from './dispatch-types';
import { type DeadLetterHeaders, originHeaders } from './dead-letters';
import { type FailedRunError, type Failure, type FailureCounts, FailurePolicy, type FailureSettings, type FailureVerdict } from './failures';

export type { FailedRunError };
import { type BlockedKey, type ConsumedMessage, keyLabel } from './resequencer-types';
import type { Task } from './task-queue';


/** What the Dispatcher is to its failed calls. */
export interface FailedCallsHost<M extends ConsumedMessage> {
  /** Bumped by halt(): what waits from before changes nothing. */
  readonly generation: number;
  owned(task: Task<M>): boolean;
  /** Gives the task a lane of its own now, where it has none and its order needs one (TaskQueue.laneNow()). */
  laneNow(task: Task<M>): void;
  /** Calls the handler with the task again (its `attempts`-th call). */
  call(task: Task<M>, attempts: number, generation: number): void;
  /** The task's call is over (`handled`: its offsets count as handled). */
  done(task: Task<M>, generation: number, handled: boolean): void;
  /** Nothing more is handed out; the run stops with `error` (the task unhandled). */
  stop(task: Task<M>, error: FailedRunError): void;
  /** Starts what may start. */
  pump(): void;
  /** What holds reading back changed (a resting lane's waiting messages no longer do). */
  progress(): void;
}

/** What a consumer's failures do outside the Dispatcher: the dead-letter writes, and what is said of them. */
export interface FailureHooks<M> {
  /** Writes the messages to the dead-letter topic with their added headers (the consumer's DeadLetterSink). */
  deadLetter?(messages: M[], added: DeadLetterHeaders[]): Promise<void>;
  /** The messages were written to the dead-letter topic (acknowledged). */
  deadLettered?(messages: M[], error: HandlerError): void;
  /** A dead-letter write failed: the message stays parked (a warning). */
  parked?(error: DeadLetterError): void;
  /** Something a failed call or write did may be in the open transaction: it must abort. */
  spoiled?(): void;
}

/** How failed calls are judged, written and waited for: the Dispatcher's settings (dispatch.ts DispatchSettings). */
export interface FailedCallsSettings<M extends ConsumedMessage> extends Omit<FailureSettings<M>, 'deadLetter'> {
  readonly ordering: Ordering;
  /** The dead-letter topic, if there is one (written through hooks.deadLetter). */
  readonly deadLetterTopic?: string;
  /** Commits go into a transaction: a failed call's output aborts it, and its message is read again. */
  readonly transactional?: boolean;
}

/** A waiting call: resting (`timer`, or none: until read again), then `act` once a slot is free. */
interface Rest {
  timer: NodeJS.Timeout | undefined;
  readonly act: () => void;
  /** It holds no handler slot meanwhile (the Dispatcher counts it apart). */
  readonly freed: boolean;
  /** It waits to be read again (no timer). */
  readonly untimed: boolean;
  /** When it began (ms). */
  readonly since: number;
}

export class FailedCalls<M extends ConsumedMessage> {
  readonly policy: FailurePolicy<M>;
  /** Calls resting after a failure. */
  private readonly resting = new Map<Task<M>, Rest>();
  /** Calls whose rest is over, waiting for a handler slot, in the order their rests ended. */
  private readonly again: Array<{ task: Task<M>; act: () => void }> = [];
  /** Of the Dispatcher's running calls, those that hold no handler slot now (resting freed, or again). */
  freed = 0;
  /** Resting calls that wait to be read again (no timer). */
  private untimed = 0;

  /** A failed call's output is in a transaction that aborts: what waits for it to be read again does not count as under way. */
  readonly transactional: boolean;
  private readonly deadLetterTopic: string | undefined;
  private readonly ordering: Ordering;

  constructor(
    private readonly host: FailedCallsHost<M>,
    settings: FailedCallsSettings<M>,
    private readonly hooks: FailureHooks<M>,
  ) {
    this.policy = new FailurePolicy({ ...settings, deadLetter: settings.deadLetterTopic !== undefined });
    this.transactional = settings.transactional === true;
    this.deadLetterTopic = settings.deadLetterTopic;
    this.ordering = settings.ordering;
  }

  get counts(): FailureCounts {
    return this.policy.counts;
  }

  /** Calls resting, or waiting for a slot after their rest. */
  get waitingCalls(): number {
    return this.resting.size + this.again.length;
  }

  /**
   * Of those, the calls not under way for a barrier or a revoke. Under a transaction only those that wait to be read
   * again: a retry after its backoff is made in place within the transaction it failed in, as any call under way, so
   * that the abort that follows comes once it has ended (what it produces goes with the doomed transaction).
   */
  get notUnderWay(): number {
    return this.transactional ? this.untimed : this.resting.size + this.again.length;
  }

  /** Messages waiting behind resting calls in their lanes (`behind`: a lane's). */
  blockedBehind(behind: (task: Task<M>) => number): number {
    if (this.resting.size === 0) return 0;
    let n = 0;
    for (const task of this.resting.keys()) n += behind(task);
    return n;
  }

  /** The next call whose rest is over, to start now in a free slot (the Dispatcher's pump()). */
  takeAgain(): (() => void) | undefined {
    const next = this.again.shift();
    if (next === undefined) return undefined;
    this.freed--;
    return next.act;
  }

  /** The task is read again (a transaction's abort) with failures remembered: what was decided applies, after its backoff. */
  resume(task: Task<M>, failure: Failure, generation: number): void {
    const act = (): void => this.act(task, failure, generation);
    const wait = failure.notBefore - Date.now();
    if (wait > 0) this.rest(task, generation, wait, act);
    else act();
  }

  /** A handler call of `task` failed (its `attempts`-th) with `cause`. */
  failed(task: Task<M>, attempts: number, generation: number, error: HandlerError): void {
    let verdict: FailureVerdict | Promise<FailureVerdict>;
    try {
      verdict = this.policy.verdict(task.release.message, error, attempts);
    } catch (err) {
      this.host.stop(task, err as FailedRunError);
      return;
    }
    if (typeof verdict === 'string') this.judged(task, attempts, generation, error, verdict);
    else {
      verdict.then((v) => this.judged(task, attempts, generation, error, v), (err: FailedRunError) => {
        if (this.live(task, generation)) this.host.stop(task, err);
      });
    }
  }

  /** Whether the task's call still counts (not halted, its partitions still here); else it ends unhandled. */
  private live(task: Task<M>, generation: number): boolean {
    if (generation === this.host.generation && this.host.owned(task)) return true;
    this.host.done(task, generation, false);
    return false;
  }

  private judged(task: Task<M>, attempts: number, generation: number, error: HandlerError, verdict: FailureVerdict): void {
    if (!this.live(task, generation)) return;
    if (verdict === 'stop') {
      this.host.stop(task, error);
      return;
    }
    const offset = task.release.message.offset;
    const earlier = this.policy.of(task.tp, offset);
    const failure: Failure = { attempts, verdict, notBefore: 0, parkedSince: earlier?.parkedSince ?? 0, writes: earlier?.writes ?? 0, error };
    if (verdict === 'retry') failure.notBefore = Date.now() + this.policy.backoff(attempts);
    this.policy.remember(task.tp, offset, failure);
    // A retry is made in place after its backoff (under a transaction too, which then aborts, as before). Anything else
    // under a transaction waits for the abort that the failed call's output brings to read the message again (resume()):
    // a dead letter or a skip goes into a transaction of its own.
    if (verdict === 'retry') this.rest(task, generation, failure.notBefore - Date.now(), () => this.act(task, failure, generation));
    else if (this.transactional) this.rest(task, generation, undefined, () => this.act(task, failure, generation));
    else this.act(task, failure, generation);
  }

  /** What was decided for the task's message, now. */
  private act(task: Task<M>, failure: Failure, generation: number): void {
    switch (failure.verdict) {
      case 'retry':
        this.policy.counts.retries++;
        this.host.call(task, failure.attempts + 1, generation);
        return;
      case 'deadLetter':
        this.write(task, failure, generation);
        return;
      default:
        this.policy.counts.skipped += 1 + (task.group?.length ?? 0);
        this.forget(task);
        this.host.done(task, generation, true);
    }
  }

  /** The task's messages to the dead-letter topic: handled once the write is acknowledged, else parked and written again. */
  private write(task: Task<M>, failure: Failure, generation: number): void {
    const tasks = task.group === undefined ? [task] : [task, ...task.group];
    const messages = tasks.map((t) => t.release.message);
    const added = messages.map((m) => originHeaders(m.topic, m.partition, m.offset, failure.error, failure.attempts));
    let written: Promise<void>;
    try {
      written = this.hooks.deadLetter!(messages, added);
    } catch (err) {
      written = Promise.reject(err);
    }
    written.then(() => {
      this.policy.counts.deadLettered += tasks.length;
      this.forget(task);
      // Said before its key's next message is handed out; handled even after a stop (the stop's last commit may then pass it).
      this.hooks.deadLettered?.(messages, failure.error);
      this.host.done(task, generation, true);
    }, (err) => {
      this.hooks.spoiled?.();
      if (!this.live(task, generation)) return;
      const now = Date.now();
      const over = this.policy.parked(failure, now);
      const { topic, partition, offset } = task.release.message;
      const error = new DeadLetterError(this.deadLetterTopic ?? '', topic, partition, offset, now - failure.parkedSince, failure.error, err);
      this.hooks.parked?.(error);
      if (over) {
        this.policy.forget(task.tp, offset);
        this.host.stop(task, error);
        return;
      }
      // The last write comes when the park's bound is reached.
      failure.notBefore = now + Math.min(this.policy.backoff(failure.writes), this.policy.maxParkMs - (now - failure.parkedSince));
      this.policy.remember(task.tp, offset, failure);
      this.rest(task, generation, this.transactional ? undefined : failure.notBefore - now, () => this.write(task, failure, generation));
    });
  }

  /** The messages of the task are done with: their failures forgotten. */
  private forget(task: Task<M>): void {
    this.policy.forget(task.tp, task.release.message.offset);
    if (task.group !== undefined) for (const t of task.group) this.policy.forget(t.tp, t.release.message.offset);
  }

  /**
   * The task's lane waits `ms` (undefined: until its message is read again), then `act` runs in a handler slot. Meanwhile it
   * holds none: its lane keeps its order without it (or it has no order to keep).
   */
  private rest(task: Task<M>, generation: number, ms: number | undefined, act: () => void): void {
    // One that waits for no time keeps its slot; one that waits lets it go, its lane waiting with it (made now if need be).
    const waits = ms === undefined || ms > 0;
    if (waits && this.ordering !== 'none') this.host.laneNow(task);
    const freed = waits && this.frees(task);
    const rest: Rest = { timer: undefined, act, freed, untimed: ms === undefined, since: Date.now() };
    if (freed) this.freed++;
    if (rest.untimed) this.untimed++;
    this.resting.set(task, rest);
    // No wait (retryBackoffMs 0): again once the microtasks of now have run, as a call that ends at once.
    if (ms !== undefined && ms <= 0) queueMicrotask(() => this.wake(task, generation));
    else if (ms !== undefined) rest.timer = setTimeout(() => this.wake(task, generation), ms);
    if (freed) this.host.pump();
    this.host.progress();
  }

  /** Whether a resting task may let its handler slot go (see rest()). */
  private frees(task: Task<M>): boolean {
    if (task.lane !== undefined || this.ordering === 'none') return true;
    return this.ordering === 'key' && (task.release.message.key === null || task.release.message.key === undefined);
  }

  private wake(task: Task<M>, generation: number): void {
    const rest = this.resting.get(task);
    if (rest === undefined) return;
    this.resting.delete(task);
    if (rest.freed) this.freed--;
    if (rest.untimed) this.untimed--;
    if (!this.live(task, generation)) return;
    // In the next free slot, first among what waits (its own, if it held it), unless a barrier holds every call back.
    this.freed++;
    this.again.push({ task, act: rest.act });
    this.host.pump();
  }

  /**
   * Resting or waiting calls `which` picks are over, unhandled (halt(): every one; a partition leaving or read again:
   * theirs). Their failures are kept: read again, the message goes on from what was decided.
   */
  cancel(which: (task: Task<M>) => boolean, generation: number): void {
    if (this.resting.size === 0 && this.again.length === 0) return;
    const over: Task<M>[] = [];
    for (const [task, rest] of this.resting) {
      if (!which(task)) continue;
      clearTimeout(rest.timer);
      this.resting.delete(task);
      if (rest.freed) this.freed--;
      if (rest.untimed) this.untimed--;
      over.push(task);
    }
    for (let i = this.again.length - 1; i >= 0; i--) {
      if (!which(this.again[i].task)) continue;
      over.push(this.again[i].task);
      this.again.splice(i, 1);
      this.freed--;
    }
    for (const task of over) this.host.done(task, generation, false);
  }

  /** The run ended: nothing remembered. */
  clear(): void {
    this.policy.clear();
  }

  /** The keys whose failed calls rest now: after a failed write to the dead-letter topic (parked) or before a retry, with how long. */
  restingKeys(now: number): BlockedKey[] {
    const keys: BlockedKey[] = [];
    for (const [task, rest] of this.resting) {
      const m = task.release.message;
      const parkedSince = this.policy.of(task.tp, m.offset)?.parkedSince ?? 0;
      keys.push({ topic: m.topic, key: keyLabel(m.key), reason: parkedSince > 0 ? 'parked' : 'retry', waitedMs: now - (parkedSince > 0 ? parkedSince : rest.since) });
    }
    return keys;
  }
}

