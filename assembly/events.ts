// The event log: a 'hot' or 'cooled' event per change of a tracked key's state, in records of
// EVENT_SIZE bytes (abi.ts) that the TypeScript side drains after each call, their count in the
// cell CELL_EVENT_COUNT. Its capacity follows the table of tracked keys (configure.ts) so that
// no call can fill it: see EVENT_RESERVE in decide.ts.

import { arenaAlloc, arenaFree, arenaSize } from "./memory";
import { CELLS_SIZE, CELL_EVENT_COUNT, EVENT_SIZE, EVENT_KIND, EVENT_ENTRY, EVENT_BATCH_INDEX, EVENT_HOT } from "./abi";

/** Signals to the TS side, in a static cell block it reads without a call: fields CELL_* (abi.ts). */
export const CELLS: usize = memory.data(<i32>CELLS_SIZE, 16);
/** The records of the log. */
export let events: usize = 0;
let eventCapacity: i32 = 0;
/** Whether a 'hot' event was logged since the TS side last drained the log (or a batch cleared it). */
export let hotLogged: bool = false;
/** The index, in its batch call, of the message being decided (0 outside a batch): events carry it. */
export let batchIndex: i32 = 0;

/** Carves out a log of `capacity` records, from configure(). */
export function eventsConfigure(capacity: i32): void {
  eventCapacity = capacity;
  events = arenaAlloc(<usize>capacity * EVENT_SIZE);
}

/** The arena bytes of a log of `capacity` records. */
export function eventsBytes(capacity: i32): usize {
  return arenaSize(<usize>capacity * EVENT_SIZE);
}

/** A larger log of `capacity` records (the table of tracked keys grew), with the pending events. */
export function eventsGrow(capacity: i32): void {
  if (capacity <= eventCapacity) return;
  const old = events;
  events = arenaAlloc(<usize>capacity * EVENT_SIZE);
  memory.copy(events, old, <usize>pendingEvents() * EVENT_SIZE);
  arenaFree(old, <usize>eventCapacity * EVENT_SIZE);
  eventCapacity = capacity;
}

/** Events waiting for the TS side to drain them. */
// @ts-ignore: decorator
@inline
export function pendingEvents(): i32 {
  return load<i32>(CELLS + CELL_EVENT_COUNT);
}

/** Whether `reserve` more events are sure to fit. */
// @ts-ignore: decorator
@inline
export function eventRoom(reserve: i32): bool {
  return pendingEvents() <= eventCapacity - reserve;
}

export function setBatchIndex(i: i32): void {
  batchIndex = i;
}

/**
 * Logs an event of `kind` (EVENT_*) for entry `e`. The log is sized so that it cannot be full
 * here; if it ever were, the call traps (the TS side gets an InternalError) rather than lose an
 * event, which would leave the TS side's table of hot keys wrong for good.
 */
export function emit(kind: i32, e: i32): void {
  const count = load<i32>(CELLS + CELL_EVENT_COUNT);
  if (count >= eventCapacity) abort("event log full");
  const p = events + <usize>count * EVENT_SIZE;
  store<i32>(p + EVENT_KIND, kind);
  store<i32>(p + EVENT_ENTRY, e);
  store<i32>(p + EVENT_BATCH_INDEX, batchIndex);
  store<i32>(CELLS + CELL_EVENT_COUNT, count + 1);
  if (kind == EVENT_HOT) hotLogged = true;
}

export function clearHotLogged(): void {
  hotLogged = false;
}
