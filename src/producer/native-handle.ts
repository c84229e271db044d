// The native engine's librdkafka handle for a producer (native/src/addon.c): made from the
// configuration at construction (a bad setting throws there, as from node-rdkafka's
// constructor) and again at a connect() after a disconnect; connected by a metadata read, as
// node-rdkafka's connect() is; the calls it makes on the thread pool (metadata, flush) counted,
// so that closing it waits for them. NativeClient (native-client.ts) produces and reads its
// reports through `current`, and turns its events into node-rdkafka's.

import type { Config } from '../core/config';
import { configPairs, type NativeAddon, type NativeError } from '../core/native';

/** Each handle's configuration as the addon takes it (secrets included), for a handle made again after a disconnect. */
const CONFIGS = new WeakMap<object, [string[], string[]]>();

export class NativeHandle {
  /** The addon's handle: undefined once closed (until connect() makes it again). */
  current: object | undefined;
  private connected = false;
  /** Calls to the thread pool in flight (metadata, flush): close waits for them. */
  private jobs = 0;
  private readonly jobsDone: Array<() => void> = [];

  constructor(private readonly addon: NativeAddon, globalConfig: Config, topicConfig: Config,
    /** librdkafka's wake-up: reports are there to read. */
    private readonly wake: () => void,
    /** One of its events (statistics, an error, a log line, a failed delivery of a message without a slot: native/src/handle.c). */
    private readonly onEvent: (kind: number, a: unknown, b: unknown, c: unknown, d?: unknown, e?: unknown, f?: unknown) => void) {
    // Taken now (globalConfig is replaced by a copy with its secrets hidden once the client is
    // made), and kept off the object, where inspecting or serialising it would show them.
    CONFIGS.set(this, [configPairs(globalConfig), configPairs(topicConfig)]);
    this.open();
    // Until connect() the handle does not keep the process alive.
    this.addon.outq(this.current!, false);
  }

  private open(): void {
    const [global, topic] = CONFIGS.get(this)!;
    this.current = this.addon.create('producer', global, topic, this.wake, this.onEvent);
  }

  isConnected(): boolean {
    return this.current !== undefined && this.connected;
  }

  /** Makes the handle if it was closed (a bad setting: `cb(err)`), then reads metadata; `ready()` once connected, before `cb`. */
  connect(timeoutMs: number, ready: () => void, cb: (err: unknown) => void): void {
    if (this.current === undefined) {
      try {
        this.open();
      } catch (err) {
        cb(err);
        return;
      }
    }
    this.getMetadata({ timeout: timeoutMs }, (err) => {
      if (!err && this.current !== undefined) {
        this.connected = true;
        this.addon.outq(this.current, true);
        ready();
      }
      cb(err);
    });
  }

  getMetadata(options: { topic?: string; timeout?: number }, cb: (err: any, metadata: any) => void): void {
    const handle = this.current;
    if (handle === undefined) {
      cb(Object.assign(new Error('Producer is not connected'), { code: -172 }), undefined);
      return;
    }
    this.job((done) => this.addon.metadata(handle, options.timeout ?? 30_000, done, options.topic), cb);
  }

  /** librdkafka's flush (on the thread pool) of `handle`, this one's as it was when the flush began, for up to `timeoutMs`. */
  flush(handle: object, timeoutMs: number, cb: (err: any) => void): void {
    this.job((done) => this.addon.flush(handle, timeoutMs, done), cb);
  }

  private job(run: (done: (err: NativeError | null, value?: any) => void) => void, cb: (err: any, value?: any) => void): void {
    this.jobs++;
    run((err, value) => {
      this.jobs--;
      if (this.jobs === 0) for (const f of this.jobsDone.splice(0)) f();
      cb(err, value);
    });
  }

  /**
   * Closes an open handle once the calls on the thread pool are done (librdkafka's destroy on
   * the pool too), then `closed()`: what is still in librdkafka's queue is dropped.
   */
  close(closed: () => void): void {
    const handle = this.current;
    if (handle === undefined) return;
    const close = (): void => {
      this.current = undefined;
      this.connected = false;
      this.addon.close(handle, 0, () => closed());
    };
    if (this.jobs === 0) close();
    else this.jobsDone.push(close);
  }
}
