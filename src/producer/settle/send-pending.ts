// send()'s promise and the opaque its message is produced with: a SendPending holds the
// promise's handlers and the caller's key, and goes along with the message (place/placement.ts,
// hand-over/hand-over.ts) until its outcome settles it (settle/outcomes.ts, settle/delivery.ts). sendBatch()'s
// messages have theirs in settle/send-batch.ts.

import type { Key } from '../../core/key';
import { SEND } from '../types';
import type { DeliveryReport, Pending } from '../types';

/** A send()'s promise handlers and key: the opaque its message goes with. */
export class SendPending implements Pending {
  resolve!: (report: DeliveryReport) => void;
  reject!: (err: Error) => void;
  constructor(public key: Key | null) {}
}
// The mark on the prototype: one property fewer on each of them.
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
