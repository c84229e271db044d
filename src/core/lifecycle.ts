// The lifecycle the package's clients go through — DynamicConsumer, KafkaJsDynamicConsumer,
// and the producers' shorter one (DynamicProducer, KafkaJsDynamicProducer: never running;
// disconnect() stops them for good from idle too) — and the one connect or stop under way,
// which any other call of the same gets: no two run at once, none is left unsettled.
//
//   idle → connecting → connected → running → stopping → idle (may connect again) or stopped (for good)
//            ↘ idle (the connect failed)
//   idle → stopping → stopped (a producer's, with stopIdle)

import { InternalError, StateError } from './errors';

export type Phase = 'idle' | 'connecting' | 'connected' | 'running' | 'stopping' | 'stopped';

/** The moves allowed from each phase: any other is a defect (an InternalError). */
const MOVES: Readonly<Record<Phase, readonly Phase[]>> = {
  // connected: a wrapped client connected already; running: a consumer whose client connects as it runs.
  idle: ['connecting', 'connected', 'running', 'stopping'],
  // stopped: a client that connects once, refused.
  connecting: ['connected', 'idle', 'stopped'],
  connected: ['running', 'stopping'],
  // connected or idle: the client's run could not begin after all.
  running: ['stopping', 'connected', 'idle'],
  stopping: ['idle', 'stopped'],
  stopped: [],
};

/** How a producer's lifecycle differs from a consumer's. */
export interface LifecycleOptions {
  /** A stop from idle (never connected, or its connect failed) runs `halt` too: a producer's disconnect() closes it either way. */
  readonly stopIdle?: boolean;
  /** connect() while a connect is under way gets that one (a consumer's is refused with a StateError). */
  readonly joinConnect?: boolean;
}

export class Lifecycle {
  private current: Phase = 'idle';
  private connecting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  /** `afterStop`: where a stop ends, 'idle' (the client may connect again) or 'stopped'. */
  constructor(
    private readonly afterStop: 'idle' | 'stopped',
    private readonly options: LifecycleOptions = {},
  ) {}

  get phase(): Phase {
    return this.current;
  }

  /** Moves to `next`: a move MOVES does not allow is a defect, thrown. */
  to(next: Phase): void {
    if (next !== this.current && !MOVES[this.current].includes(next)) throw new InternalError(`lifecycle: ${this.current} → ${next}`);
    this.current = next;
  }

  /**
   * From idle only (a StateError otherwise; with joinConnect, the connect under way while
   * connecting): `task` connects; the phase is 'connected' after it, 'idle' again if it fails
   * (unless the task moved it, e.g. to 'stopped').
   */
  connect(task: () => Promise<void>): Promise<void> {
    if (this.phase === 'connecting' && this.options.joinConnect) return this.connecting!;
    if (this.phase !== 'idle') return Promise.reject(new StateError(`connect() while ${this.phase}`));
    this.to('connecting');
    this.connecting = task().then(
      () => {
        if (this.phase === 'connecting') this.to('connected');
      },
      (err: unknown) => {
        if (this.phase === 'connecting') this.to('idle');
        throw err;
      },
    );
    return this.connecting;
  }

  /**
   * Nothing to do when stopped, or idle (unless stopIdle); after a connect under way, once it
   * ends; the stop under way to any other call; else 'stopping' and `halt(wasRunning, from)`
   * (`from`: the phase it stops from, e.g. whether a client was connected), which calls
   * ended() when it is done (before it tells anyone), or the phase moves on when it settles.
   */
  stop(halt: Halt): Promise<void> {
    switch (this.phase) {
      case 'idle':
        if (this.options.stopIdle) return this.begin(halt);
        return Promise.resolve();
      case 'stopped':
        // A halt that called done() may still be finishing: its stop until it settles.
        return this.stopping ?? Promise.resolve();
      case 'connecting': {
        // A failed connect left nothing to stop, unless stopIdle: then the stop goes on from idle.
        const again = (): Promise<void> => this.stop(halt);
        return this.connecting!.then(again, this.options.stopIdle ? again : () => undefined);
      }
      case 'stopping':
        return this.stopping!;
      default:
        return this.begin(halt);
    }
  }

  /** 'stopping', and `halt(wasRunning, from)` under way (the stop any other call gets). */
  private begin(halt: Halt): Promise<void> {
    const from = this.phase;
    this.to('stopping');
    // Set before any of halt() runs: a listener it calls may call stop() again.
    const stopping: Promise<void> = Promise.resolve()
      .then(() => halt(from === 'running', from))
      .finally(() => {
        if (this.phase === 'stopping') this.ended();
        else if (this.stopping === stopping) this.stopping = undefined;
      });
    this.stopping = stopping;
    return stopping;
  }

  /** The stop is done: idle or stopped, as the client's lifecycle ends. */
  ended(): void {
    this.to(this.afterStop);
    this.stopping = undefined;
  }

  /**
   * The client is closed, though halt still finishes (a producer's client disconnecting): the
   * phase is where the lifecycle ends, and stop() calls still get this stop until it settles
   * (a lifecycle that ends stopped).
   */
  done(): void {
    this.to(this.afterStop);
  }
}

/** A stop's work: `running`, it stops from running; `from`, the phase it stops from (idle, connected or running). */
export type Halt = (running: boolean, from: Phase) => Promise<void>;
