// Where the TS side reads the WebAssembly core's state: indexes into the core's typed arrays
// (i32 or f64, as each field is) of the cells, the decision record, the event log and the
// fields of the first topic and tracked-key entry records; the layouts are in
// assembly/abi.ts (mirrored in src/core/abi.ts). Record i of a kind is at its first record's
// index + i × its stride.

import type { Core } from '../core/wasm';
import {
  CELL_EVENT_COUNT, EVENT_SIZE, TOPIC_SHIFT, T_TOTAL, T_LOAD_TOTAL, T_MESSAGES, T_WEIGHT, T_PAGE,
  ENTRY_SHIFT, E_TOPIC, E_COUNT, E_STATE, E_WIDTH, E_SIZE, E_RETURN,
} from '../core/abi';

// Record strides in typed-array elements.
export const EVENT_I32 = EVENT_SIZE >> 2;
export const TOPIC_F64 = (1 << TOPIC_SHIFT) >> 3;
export const TOPIC_I32 = (1 << TOPIC_SHIFT) >> 2;
export const ENTRY_I32 = (1 << ENTRY_SHIFT) >> 2;
export const ENTRY_F64 = (1 << ENTRY_SHIFT) >> 3;

export class Regions {
  /** i32: the number of events in the log. */
  readonly eventCell: number;
  /** i32: the decision record (D_*). */
  readonly decisionAt: number;
  // The first topic record's fields (T_*); a slot's record is TOPIC_F64 / TOPIC_I32 further per slot.
  readonly topicTotal: number;
  readonly topicLoadTotal: number;
  readonly topicMessages: number;
  readonly topicWeight: number;
  readonly topicPage: number;
  // The event log and the first entry's fields (E_*): they move when the shared tables grow (moved()).
  events = 0;
  entryTopic = 0;
  entryCount = 0;
  entryWidth = 0;
  entryChain = 0;
  entryState = 0;
  entrySize = 0;

  constructor(private readonly core: Core) {
    const x = core.exports;
    this.eventCell = (x.cellsPtr() + CELL_EVENT_COUNT) >> 2;
    this.decisionAt = x.decisionPtr() >> 2;
    const topics = x.topicRecordsPtr();
    this.topicTotal = (topics + T_TOTAL) >> 3;
    this.topicLoadTotal = (topics + T_LOAD_TOTAL) >> 3;
    this.topicMessages = (topics + T_MESSAGES) >> 3;
    this.topicWeight = (topics + T_WEIGHT) >> 3;
    this.topicPage = (topics + T_PAGE) >> 2;
    this.moved();
  }

  /** Reads where the entries and the event log are (again: the shared tables grew). */
  moved(): void {
    const x = this.core.exports;
    this.events = x.eventsPtr() >> 2;
    const entries = x.entriesPtr();
    this.entryTopic = (entries + E_TOPIC) >> 2;
    this.entryCount = (entries + E_COUNT) >> 3;
    this.entryWidth = (entries + E_WIDTH) >> 2;
    this.entryChain = (entries + E_RETURN) >> 2;
    this.entryState = (entries + E_STATE) >> 2;
    this.entrySize = (entries + E_SIZE) >> 2;
  }

  /** The f64 index of slot `slot`'s page: its loads, then maxPartitions penalties (assembly/topics.ts). */
  pageOf(slot: number): number {
    return this.core.i32[this.topicPage + slot * TOPIC_I32] >> 3;
  }

  /** Slot `slot`'s decayed count on the key clock (T_TOTAL). */
  topicTotalOf(slot: number): number {
    return this.core.f64[this.topicTotal + slot * TOPIC_F64];
  }

  /** Slot `slot`'s decayed count on the load clock (T_LOAD_TOTAL). */
  topicLoadTotalOf(slot: number): number {
    return this.core.f64[this.topicLoadTotal + slot * TOPIC_F64];
  }

  /** The topic slot of tracked entry `entry` (E_TOPIC). */
  slotOfEntry(entry: number): number {
    return this.core.i32[this.entryTopic + entry * ENTRY_I32];
  }
}
