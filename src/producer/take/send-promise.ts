// The promise a send() call gets back when its message is taken, and the opaque the message goes
// with until its outcome settles that promise (settle/outcomes.ts, settle/delivery.ts). A
// SendPending holds the promise's handlers and the caller's key. On the native engine a call's
// opaque is first the producer's one CurrentSend: the engine joins its message to a group of
// the batch at hand-over (settle/send-groups.ts, settle/opaque.ts), a part that holds the message
// instead gives it a SendPending of its own (own(), place/placement.ts), a refusal at once records
// its error; end() gives the call's promise from whichever happened. sendBatch()'s messages
// have theirs in take/send-batch.ts.

import type { Key } from '../../core/key';
import type { SendGroup } from '../settle/send-groups';
import { SEND } from '../types';
import type { DeliveryReport, Pending } from '../types';

/** A send()'s promise handlers and key: the opaque its message goes with. */
export class SendPending implements Pending {
  resolve!: (report: DeliveryReport) => void;
  reject!: (err: Error) => void;
  constructor(public key: Key | null) {}
}
// SEND on the prototype: one property fewer on each of them.
Object.defineProperty(SendPending.prototype, SEND, { value: true });

/** The SendPending a send()'s promise is being made for: its executor is one function, not a closure per call. */
let making: SendPending;
function takeHandlers(resolve: (report: DeliveryReport) => void, reject: (err: Error) => void): void {
  making.resolve = resolve;
  making.reject = reject;
}

/** The promise `pending` settles: its handlers are set on it before this returns. */
export function promiseOf(pending: SendPending): Promise<DeliveryReport> {
  making = pending;
  return new Promise<DeliveryReport>(takeHandlers);
}

const NONE = 0;
const GROUPED = 1;
const OWN = 2;
const FAILED = 3;

/**
 * The opaque of the send() being placed on the native engine (one per producer, used by one
 * call at a time): the engine joins its message to a group, a part that holds the message gives
 * it a SendPending of its own (own()), a refusal records its error. A group's member keeps one
 * promise and one reaction alive until its report, where a promise of its own keeps also two
 * resolving functions, their context and a holder (docs/native.md).
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
