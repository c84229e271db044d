// One message's decision besides its partition: the core writes it to its decision record
// (D_* in assembly/abi.ts: assembly/decide.ts for a topic with state), decide() reads it once
// into the partitioner's one Decision object; a topic without state has its record written
// here (writeStaticDecision), so the record always describes the last message placed.

import { D_PARTITION, D_ORDER, D_ENTRY, D_WIDTH, D_ZERO, ORDER_NONE } from '../core/abi';

/**
 * What DynamicPartitioner.decide() decided for one message besides its partition, read once
 * per decision from the WebAssembly core's decision record (D_* in assembly/abi.ts). Each
 * partitioner has one, `partitioner.decision`, overwritten by each decide(): read its fields
 * before the next decide() (partition() and partitionBatch() leave it as it is).
 */
export interface Decision {
  /** The partition: what decide() returned. */
  readonly partition: number;
  /**
   * The order marker (docs/ordering.md): ORDER_NONE, or ORDER_ANCHOR / ORDER_MOVED (relocated
   * whole to one partition) / ORDER_SPREAD (split over several) / ORDER_RETURN for a message of
   * a key that is (or just was) hot. With spread: false, always ORDER_NONE.
   */
  readonly order: number;
  /**
   * The key's tracked-key entry, an index below trackedKeysBound that names the key while it is
   * tracked (a key that is or was just hot always is), or -1.
   */
  readonly entry: number;
  /** How many partitions the key is split over now: its width with ORDER_SPREAD, else 1. */
  readonly width: number;
  /**
   * Whether the key has a zero byte (a string key with U+0000, which node-rdkafka would cut):
   * 0 no, 1 yes, -1 not known (a key too long for the key region is not looked at).
   */
  readonly keyZero: number;
}

/** The writable Decision behind `partitioner.decision`: one object per partitioner, filled in place. */
export class DecisionRecord implements Decision {
  partition = -1;
  order = ORDER_NONE;
  entry = -1;
  width = 1;
  keyZero = -1;

  /** Fills this record from the core's decision record, at i32 index `at`. */
  read(i32: Int32Array, at: number): void {
    this.partition = i32[at + (D_PARTITION >> 2)];
    this.order = i32[at + (D_ORDER >> 2)];
    this.entry = i32[at + (D_ENTRY >> 2)];
    this.width = i32[at + (D_WIDTH >> 2)];
    this.keyZero = i32[at + (D_ZERO >> 2)];
  }
}

/**
 * The core's decision record, at i32 index `at`, for a message placed without state on
 * partition `p`: no marker, no entry, width 1, its key not looked at.
 */
export function writeStaticDecision(i32: Int32Array, at: number, p: number): void {
  i32[at + (D_PARTITION >> 2)] = p;
  i32[at + (D_ORDER >> 2)] = ORDER_NONE;
  i32[at + (D_ENTRY >> 2)] = -1;
  i32[at + (D_WIDTH >> 2)] = 1;
  i32[at + (D_ZERO >> 2)] = -1;
}
