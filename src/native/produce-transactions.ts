// The native engine's transactional calls, under node-rdkafka's Producer's names, on a producer's one handle (a
// transactional.id allows one): each on libuv's thread pool (native/src/jobs.c), its error carrying librdkafka's
// classes of it (NativeError). A commit or an abort first hands over what the client has batched, so that each
// message is in the transaction it was produced in; after either, the reports they brought are read.

import { columns, metadataOf } from './consume';
import { JOB_TXN_ABORT, JOB_TXN_BEGIN, JOB_TXN_COMMIT, JOB_TXN_INIT, type NativeAddon } from './contract';
import { type NativeHandle, notConnected } from './handle';

/** How often a batch a full queue stopped is tried again while a commit waits for it (ms). */
const RETRY_MS = 1;

/** What the calls need of the producer's client (NativeClient). */
export interface BatchingClient {
  submitAll(): void;
  readonly batched: number;
  poll(): void;
}

export class NativeTransactions {
  // Private fields, not properties: inspecting or serialising the client (which holds this) shows no cycle, nor its handle.
  readonly #addon: NativeAddon;
  readonly #handle: NativeHandle;
  readonly #client: BatchingClient;

  constructor(addon: NativeAddon, handle: NativeHandle, client: BatchingClient) {
    this.#addon = addon;
    this.#handle = handle;
    this.#client = client;
  }

  initTransactions(timeoutMs: number, cb: (err: any) => void): void {
    this.call(JOB_TXN_INIT, timeoutMs, false, cb);
  }

  beginTransaction(cb: (err: any) => void): void {
    this.call(JOB_TXN_BEGIN, 0, false, cb);
  }

  commitTransaction(timeoutMs: number, cb: (err: any) => void): void {
    this.call(JOB_TXN_COMMIT, timeoutMs, true, cb);
  }

  abortTransaction(timeoutMs: number, cb: (err: any) => void): void {
    this.call(JOB_TXN_ABORT, timeoutMs, true, cb);
  }

  /**
   * Offsets (each with its metadata) into the open transaction, with the group metadata of
   * `consumer`: a native consumer's handle (its generation and member id, KIP-447), or, for a
   * consumer of another client, `groupId` alone (the broker then checks no generation).
   */
  sendOffsetsToTransaction(offsets: Array<{ topic: string; partition: number; offset: number; metadata?: string | Buffer }>, consumer: { handle: object | null; groupId: string }, timeoutMs: number, cb: (err: any) => void): void {
    const current = this.#handle.current;
    if (current === undefined) {
      setImmediate(() => cb(notConnected('producer')));
      return;
    }
    const [topics, partitions, offs] = columns(offsets, true);
    const metadata = metadataOf(offsets) ?? offsets.map(() => undefined);
    try {
      this.#handle.job((done) => this.#addon.sendOffsets(current, consumer.handle, consumer.groupId, topics, partitions, offs!, metadata, timeoutMs, done), cb);
    } catch (err) {
      setImmediate(() => cb(err));
    }
  }

  private call(job: number, timeoutMs: number, handOver: boolean, cb: (err: any) => void): void {
    const run = (): void => {
      const current = this.#handle.current;
      if (current === undefined) cb(notConnected('producer'));
      else this.#handle.job((done) => this.#addon.transaction(current, job, timeoutMs, done), (err) => {
        // The reports of the messages the commit flushed (or the abort purged) are there to read.
        this.#client.poll();
        cb(err);
      });
    };
    if (!handOver) {
      run();
      return;
    }
    this.#client.submitAll();
    const deadline = Date.now() + timeoutMs;
    const wait = (): void => {
      if (this.#client.batched === 0) run();
      else if (Date.now() > deadline) cb(Object.assign(new Error('Local: Timed out'), { code: -185 }));
      else {
        this.#client.poll();
        setTimeout(wait, RETRY_MS);
      }
    };
    wait();
  }
}
