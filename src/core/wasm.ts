// Loads the WebAssembly core (assembly/, built to build/kdp.wasm) once, synchronously, at
// require time, and gives typed access to its exports and to the regions of its memory
// described in assembly/memory.ts. The numbers both sides agree on are in ./abi (generated
// from assembly/abi.ts).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InternalError } from './errors';
import { KEY_CAPACITY, BATCH_CAPACITY } from './abi';

/** The numeric exports of assembly/index.ts. */
export interface CoreExports {
  readonly memory: { readonly buffer: ArrayBuffer; grow(deltaPages: number): number };
  keysPtr(): number;
  lengthsPtr(): number;
  resultsPtr(): number;
  hash(family: number, length: number): number;
  partition(algorithm: number, length: number, partitions: number): number;
  hashPartition(family: number, hash: number, partitions: number): number;
  partitionBatch(algorithm: number, count: number, partitions: number): void;
  streamStart(family: number, totalLength: number): void;
  streamUpdate(length: number): void;
  streamFinish(length: number): number;
  // Hot-key detection and spreading (assembly/configure.ts, decide.ts and the modules they use).
  /** Sets up hot-key detection from the parameters written at paramsPtr() (P_* in ./abi); once. */
  configure(): void;
  paramsPtr(): number;
  decide(topic: number, algorithm: number, length: number, partitions: number): number;
  decideBatch(topic: number, algorithm: number, from: number, count: number, partitions: number): number;
  topicReset(topic: number, partitions: number): void;
  topicResize(topic: number, partitions: number): void;
  tick(factor: number, loadFactor: number): void;
  runTick(): void;
  account(topic: number, partition: number): void;
  /** Keeps tracked entry `entry` on its own partition while it is tracked (spreadable() said no). */
  pin(entry: number): void;
  /** Messages of tracked entry `entry`'s key wait in the producer (1) or no longer (0): while they do, the entry is never freed. */
  hold(entry: number, held: number): void;
  currentWeight(topic: number): number;
  currentLoadWeight(topic: number): number;
  /** The number of topics with state; true when the shared tables grew (regions moved, the memory may have grown: refreshViews). */
  setTopicsWithState(count: number): boolean;
  /** The shared tables' factor over the options' sizes now. */
  tableScale(): number;
  trackedKeysCapacity(): number;
  /** The most entries the table of tracked keys reaches. */
  trackedKeysBound(): number;
  /** The most bytes of memory the instance can take. */
  memoryBound(): number;
  estimate(topic: number, length: number): number;
  recentMessages(topic: number): number;
  spreadStep(length: number, partitions: number): number;
  // Where the regions the TS side reads start; their records' layout is in ./abi.
  cellsPtr(): number;
  /** The decision record, written by decide(), each key of decideBatch() and account(): D_* in ./abi. */
  decisionPtr(): number;
  eventsPtr(): number;
  topicRecordsPtr(): number;
  entriesPtr(): number;
  trackedKeys(): number;
  refusedAdmissions(): number;
}

/** One instance of the core with views over its memory. */
export interface Core {
  readonly exports: CoreExports;
  // The views are made again when the memory grows (refreshViews): read them from here at each use.
  /** Byte view of the whole memory, as a Buffer (for its fast utf8 write). */
  bytes: Buffer;
  i32: Int32Array;
  u32: Uint32Array;
  f64: Float64Array;
  /** Byte offset of the key region and its size. */
  readonly keys: number;
  readonly keyCapacity: number;
  /** Int32 index (not byte offset) of the batch lengths and results tables. */
  readonly lengths: number;
  readonly results: number;
  readonly batchCapacity: number;
}

const compiled = new WebAssembly.Module(readFileSync(join(__dirname, '..', 'kdp.wasm')));

/**
 * A new instance of the core: its own memory, so its state is its own. `setup` runs before
 * the views are made (it may grow the memory, as `configure` does).
 */
export function instantiate(setup?: (exports: CoreExports) => void): Core {
  const exports = new WebAssembly.Instance(compiled, {
    env: {
      abort(): never {
        throw new InternalError('WebAssembly core aborted');
      },
    },
  }).exports as unknown as CoreExports;
  setup?.(exports);
  const buffer = exports.memory.buffer;
  return {
    exports,
    bytes: Buffer.from(buffer),
    i32: new Int32Array(buffer),
    u32: new Uint32Array(buffer),
    f64: new Float64Array(buffer),
    keys: exports.keysPtr(),
    keyCapacity: KEY_CAPACITY,
    lengths: exports.lengthsPtr() >> 2,
    results: exports.resultsPtr() >> 2,
    batchCapacity: BATCH_CAPACITY,
  };
}

/** Makes `core`'s views again if its memory grew (a grown WebAssembly memory detaches the old buffer); true if it did. */
export function refreshViews(core: Core): boolean {
  const buffer = core.exports.memory.buffer;
  if (core.bytes.buffer === buffer) return false;
  core.bytes = Buffer.from(buffer);
  core.i32 = new Int32Array(buffer);
  core.u32 = new Uint32Array(buffer);
  core.f64 = new Float64Array(buffer);
  return true;
}

/** The instance behind the stateless functions of hash.ts. */
export const shared: Core = instantiate();
