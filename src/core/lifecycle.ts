// The lifecycle the package's clients go through — DynamicConsumer, KafkaJsDynamicConsumer,
// and DynamicProducer's shorter one (connected → stopping → stopped: src/producer/lifecycle.ts
// reads it) — and the one connect or stop under way, which any other call of the same gets:
// no two run at once, none is left unsettled.
//
//   idle → connecting → connected → running → stopping → idle (may connect again) or stopped (for good)
//            ↘ idle (the connect failed)

import { StateError } from './errors';

export type Phase = 'idle' | 'connecting' | 'connected' | 'running' | 'stopping' | 'stopped';

export class Lifecycle {
  phase: Phase = 'idle';
  private connecting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  /** `afterStop`: where a stop ends, 'idle' (the client may connect again) or 'stopped'. */
  constructor(private readonly afterStop: 'idle' | 'stopped') {}

  /**
   * From idle only (a StateError otherwise): `task` connects; the phase is 'connected' after it,
   * 'idle' again if it fails (unless the task moved it, e.g. to 'stopped').
   */
  connect(task: () => Promise<void>): Promise<void> {
    if (this.phase !== 'idle') return Promise.reject(new StateError(`connect() while ${this.phase}`));
    this.phase = 'connecting';
    this.connecting = task().then(
      () => {
        if (this.phase === 'connecting') this.phase = 'connected';
      },
      (err: unknown) => {
        if (this.phase === 'connecting') this.phase = 'idle';
        throw err;
      },
    );
    return this.connecting;
  }

  /**
   * Nothing to do when idle or stopped; after a connect under way, once it ends; the stop under
   * way to any other call; else 'stopping' and `halt(wasRunning)`, which calls ended() when it
   * is done (before it tells anyone), or the phase moves on when it settles.
   */
  stop(halt: (running: boolean) => Promise<void>): Promise<void> {
    switch (this.phase) {
      case 'idle':
      case 'stopped':
        return Promise.resolve();
      case 'connecting':
        return this.connecting!.then(() => this.stop(halt), () => undefined);
      case 'stopping':
        return this.stopping!;
      default: {
        const running = this.phase === 'running';
        this.phase = 'stopping';
        // Set before any of halt() runs: a listener it calls may call stop() again.
        this.stopping = Promise.resolve()
          .then(() => halt(running))
          .finally(() => {
            if (this.phase === 'stopping') this.ended();
          });
        return this.stopping;
      }
    }
  }

  /** The stop is done: idle or stopped, as the client's lifecycle ends. */
  ended(): void {
    this.phase = this.afterStop;
    this.stopping = undefined;
  }
}
