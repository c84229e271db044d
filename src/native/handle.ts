// The native engine's librdkafka handle (native/src/handle.c, its calls on the thread pool native/src/jobs.c), a producer's or a consumer's:
// made from the configuration at construction (a bad setting throws there, as from
// node-rdkafka's constructors) and again at a connect() after a disconnect; connected by a
// metadata read, as node-rdkafka's connect() is; the calls it makes on the thread pool
// (metadata, flush, committed offsets) counted, so that closing it waits for them.
// NativeClient (produce.ts) and NativeConsumer (consume.ts) work through `current` (the addon's
// handle object; `live` throws while closed), and turn its events into node-rdkafka's.

import type { Config } from '../core/config';
import { configPairs } from './addon';
import type { NativeAddon, NativeError, NativeEvent } from './contract';

/** Each handle's configuration as the addon takes it (secrets included), for a handle made again after a disconnect. */
const CONFIGS = new WeakMap<object, [string[], string[]]>();

export class NativeHandle {
  /** The addon's handle: undefined once closed (until connect() makes it again). */
  current: object | undefined;
  private connected = false;
  /** Calls to the thread pool in flight (metadata, flush): close waits for them. */
  private jobs = 0;
  private readonly jobsDone: Array<() => void> = [];

  constructor(private readonly addon: NativeAddon, private readonly kind: 'producer' | 'consumer', globalConfig: Config, topicConfig: Config,
    /** librdkafka's wake-up: reports (or messages, rebalances, logs) are there to read. */
    private readonly wake: () => void,
    /** One of its events (native/contract.js lists their kinds and arguments). */
    private readonly onEvent: (...event: NativeEvent) => void,
    /** Made at connect() only (its configuration may still change: `configure()`). */
    deferred = false) {
    // Taken now (globalConfig is replaced by a copy with its secrets hidden once the client is
    // made), and kept off the object, where inspecting or serialising it would show them.
    CONFIGS.set(this, [configPairs(globalConfig), configPairs(topicConfig)]);
    if (deferred) return;
    this.open();
    // Until connect() the handle does not keep the process alive.
    this.addon.keepAlive(this.current!, false);
  }

  /** Sets one setting of a handle not made yet (`value` undefined: leaves it out), for the next connect(). */
  configure(name: string, value: string | undefined): void {
    const [global, topic] = CONFIGS.get(this)!;
    const pairs: string[] = [];
    for (let i = 0; i < global.length; i += 2) if (global[i] !== name) pairs.push(global[i], global[i + 1]);
    if (value !== undefined) pairs.push(name, value);
    CONFIGS.set(this, [pairs, topic]);
  }

  private open(): void {
    const [global, topic] = CONFIGS.get(this)!;
    this.current = this.addon.create(this.kind, global, topic, this.wake, this.onEvent);
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
        this.addon.keepAlive(this.current, true);
        ready();
      }
      cb(err);
    });
  }

  getMetadata(options: { topic?: string; timeout?: number }, cb: (err: any, metadata: any) => void): void {
    const handle = this.current;
    if (handle === undefined) {
      cb(notConnected(this.kind), undefined);
      return;
    }
    this.job((done) => this.addon.metadata(handle, options.timeout ?? 30_000, done, options.topic), cb);
  }

  /** librdkafka's flush (on the thread pool) of `handle`, this one's as it was when the flush began, for up to `timeoutMs`. */
  flush(handle: object, timeoutMs: number, cb: (err: any) => void): void {
    this.job((done) => this.addon.flush(handle, timeoutMs, done), cb);
  }

  /** The handle, or node-rdkafka's error when it is closed. */
  get live(): object {
    if (this.current === undefined) throw notConnected(this.kind);
    return this.current;
  }

  /** A call on the thread pool, counted: close() waits for the calls under way. */
  job(run: (done: (err: NativeError | null, value?: any) => void) => void, cb: (err: any, value?: any) => void): void {
    this.jobs++;
    run((err, value) => {
      this.jobs--;
      if (this.jobs === 0) for (const f of this.jobsDone.splice(0)) f();
      cb(err, value);
    });
  }

  /**
   * Closes an open handle once the calls on the thread pool are done (librdkafka's destroy on
   * the pool too), then `closed()`: what is still in librdkafka's queue is dropped. `closing()`
   * runs as the close begins (the handle is then gone).
   */
  close(closed: () => void, closing?: () => void): void {
    const handle = this.current;
    if (handle === undefined) return;
    const close = (): void => {
      this.current = undefined;
      this.connected = false;
      this.addon.close(handle, 0, () => closed());
      closing?.();
    };
    if (this.jobs === 0) close();
    else this.jobsDone.push(close);
  }
}

/** node-rdkafka's error for a call on a client that is not connected (ERR__STATE). */
export function notConnected(kind: 'producer' | 'consumer'): Error {
  return Object.assign(new Error(kind === 'producer' ? 'Producer is not connected' : 'KafkaConsumer is not connected'), { code: -172 });
}
