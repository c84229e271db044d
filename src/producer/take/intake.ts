// The entry of the send path: DynamicProducer's produce(), send() and sendBatch(). A message is
// taken while the producer's phase is 'connected' (src/core/lifecycle.ts): not before connect(),
// nor once disconnect() began ('stopping', then 'stopped'); while maxQueued messages are held
// (the memory bound), a call waits for room first (take/room.ts). The promise a call gets is
// made here (take/send-promise.ts for send(), take/send-batch.ts for sendBatch()), then its
// message goes on to be placed (place/placement.ts), and from there held or handed over.

import { InvalidArgTypeError, StateError } from '../../core/errors';
import type { Key } from '../../core/key';
import type { Lifecycle } from '../../core/lifecycle';
import { SendBatch, MemberPending } from './send-batch';
import { checkMessage } from './input';
import type { NativeClient } from '../../native/produce';
import type { Placement } from '../place/placement';
import { CurrentSend, SendPending, promiseOf } from './send-promise';
import type { Room } from './room';
import type { DeliveryReport, Headers, OutgoingMessage, Pending, Value } from '../types';

export { traceSends } from './traced-sends';

export interface IntakeParts {
  /** The producer's lifecycle, whose phase is read. */
  readonly state: Lifecycle;
  /** Whether the client emits delivery reports: send() and sendBatch() need them. */
  readonly reports: boolean;
  /** A wrapped HighLevelProducer: its value and key are checked after its serializers (place/placement.ts). */
  readonly highLevel: boolean;
  /** The calls waiting for room while maxQueued messages are held. */
  readonly room: Room;
  readonly placement: Placement;
  /** The native engine's client, told of batches that should not linger. */
  readonly native: NativeClient | undefined;
  /** A deferred produce() that failed (the producer's 'error'). */
  error(err: unknown): void;
}

export class Intake {
  private readonly state: Lifecycle;
  private readonly reports: boolean;
  private readonly highLevel: boolean;
  private readonly room: Room;
  private readonly placement: Placement;
  private readonly native: NativeClient | undefined;
  private readonly error: (err: unknown) => void;
  /** Why messages are refused though the producer is connected: a transactional producer outside a transaction (transactions.ts). */
  outside: string | undefined;
  /** On the native engine: the opaque of the send() being placed, whose promise is its group's (take/send-promise.ts). */
  private readonly current: CurrentSend | undefined;

  constructor(parts: IntakeParts) {
    this.state = parts.state;
    this.reports = parts.reports;
    this.highLevel = parts.highLevel;
    this.room = parts.room;
    this.placement = parts.placement;
    this.native = parts.native;
    this.error = parts.error;
    this.current = parts.native !== undefined ? new CurrentSend() : undefined;
    this.outside = undefined;
  }

  /** DynamicProducer.produce(). */
  produce(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined): boolean {
    if (this.room.waiting > 0 || this.room.holding) {
      // send() calls are waiting for room (or a transaction ends): this message goes behind them, in call order.
      this.check(topic, value, key, headers, timestamp);
      this.room.wait(() => {
        try {
          this.enqueue(topic, value, key, headers, timestamp, undefined);
        } catch (err) {
          this.error(err);
        }
      });
      return false;
    }
    return this.enqueue(topic, value, key, headers, timestamp, undefined);
  }

  /** DynamicProducer.send(). */
  send(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined): Promise<DeliveryReport> {
    if (!this.reports) {
      return Promise.reject(new StateError('send() needs delivery reports: this producer has dr_cb and dr_msg_cb off (use produce())'));
    }
    const current = this.current;
    if (current !== undefined && !current.busy && this.state.phase === 'connected' && !this.room.full) {
      // The native engine's common case: the promise is its group's, or one of its own if the message is held.
      current.begin(key ?? null);
      try {
        this.enqueue(topic, value, key, headers, timestamp, current);
      } catch (err) {
        current.reject(err as Error);
      }
      return current.end();
    }
    const pending = new SendPending(key ?? null);
    const promise = promiseOf(pending);
    if (this.state.phase === 'connected' && !this.room.full) {
      // The common case: connected, room, no closure made.
      try {
        this.enqueue(topic, value, key, headers, timestamp, pending);
      } catch (err) {
        pending.reject(err as Error);
      }
      return promise;
    }
    const attempt = (): void => {
      const phase = this.state.phase;
      if (phase === 'stopped') {
        pending.reject(new StateError('this producer was disconnected'));
        return;
      }
      if (phase === 'stopping') {
        pending.reject(new StateError('this producer is disconnecting'));
        return;
      }
      if (this.room.full) {
        this.room.wait(attempt);
        return;
      }
      try {
        this.enqueue(topic, value, key, headers, timestamp, pending);
      } catch (err) {
        pending.reject(err as Error);
      }
    };
    attempt();
    return promise;
  }

  /** DynamicProducer.sendBatch(). */
  sendBatch(topic: string, messages: readonly OutgoingMessage[]): Promise<DeliveryReport[]> {
    if (!this.reports) {
      return Promise.reject(new StateError('sendBatch() needs delivery reports: this producer has dr_cb and dr_msg_cb off (use produce())'));
    }
    try {
      if (!Array.isArray(messages)) throw new InvalidArgTypeError('messages', 'an array of { value, key?, headers?, timestamp? }', messages);
      for (let i = 0; i < messages.length; i++) {
        const m = messages[i];
        if (typeof m !== 'object' || m === null) throw new InvalidArgTypeError(`messages[${i}]`, 'an object { value, key?, headers?, timestamp? }', m);
        this.check(topic, m.value, m.key, m.headers, m.timestamp);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<DeliveryReport[]>((resolve, reject) => {
      // Its messages go without waiting linger.ms: the caller handed a whole batch (docs/native.md).
      const native = messages.length > 0 ? this.native : undefined;
      native?.hurry(1);
      const batch = new SendBatch(messages.length, resolve, reject, () => native?.hurry(-1));
      let i = 0;
      const attempt = (): void => {
        for (; i < messages.length; i++) {
          const m = messages[i];
          const member = new MemberPending(batch, i, m.key ?? null);
          const phase = this.state.phase;
          if (phase === 'stopping' || phase === 'stopped') {
            member.reject(new StateError(phase === 'stopped' ? 'this producer was disconnected' : 'this producer is disconnecting'));
            continue;
          }
          if (this.room.full) {
            this.room.wait(attempt);
            return;
          }
          try {
            this.enqueue(topic, m.value, m.key, m.headers, m.timestamp, member);
          } catch (err) {
            member.reject(err as Error);
          }
        }
      };
      attempt();
    });
  }

  /** The checks enqueue() makes, for a message whose enqueue is deferred. */
  private check(topic: unknown, value: unknown, key: unknown, headers: unknown, timestamp: unknown): void {
    const phase = this.state.phase;
    if (phase !== 'connected') throw new StateError(phase === 'stopping' || phase === 'stopped' ? 'this producer is disconnecting' : 'connect() first');
    // While a transaction ends for a consumer (the room holds), a message waits for the next: refused only if none opens.
    if (this.outside !== undefined && !this.room.holding) throw new StateError(this.outside);
    checkMessage(topic, value, key, headers, timestamp, this.highLevel);
  }

  /** A message taken by a connected producer (place/placement.ts); a StateError otherwise. */
  private enqueue(topic: string, value: Value, key: Key | null | undefined, headers: Headers | undefined, timestamp: number | null | undefined, pending: Pending | undefined): boolean {
    const phase = this.state.phase;
    if (phase !== 'connected') {
      throw new StateError(phase === 'stopped' ? 'this producer was disconnected' : phase === 'stopping' ? 'this producer is disconnecting' : 'connect() first');
    }
    if (this.outside !== undefined) throw new StateError(this.outside);
    return this.placement.enqueue(topic, value, key, headers, timestamp, pending);
  }
}
