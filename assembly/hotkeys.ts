// The heavy-hitter table: a fixed pool of entries for the keys whose sketch estimate crossed
// the admission level, each with an exact decayed count from then on and its spread state.
// Entries keep their index for life (the TS side maps an index to the key it names). An
// entry the TS side marks held (messages of its key wait in the producer's ordered handoff,
// which finds them by entry) is never freed while marked: neither the sweep nor admission
// takes it, so the key's later messages find its entry, and wait behind them. An
// entry is one 64-byte record (one cache line: a message of a tracked key touches one), and
// a separate open-addressing index (twice the pool, linear probing, backward-shift deletion)
// of (lane A, entry) pairs finds an entry by (topic, lane A, lane B) — a 64-bit fingerprint
// per topic — comparing lane A in the index before it reads an entry.

import { arenaAlloc, arenaFree, arenaSize } from "./memory";
import {
  ENTRY_SHIFT, E_COUNT, E_LANE_A, E_LANE_B, E_TOPIC, E_STATE, E_WIDTH, STATE_FREE, STATE_CANDIDATE,
} from "./abi";

export let capacity: i32 = 0;
let indexMask: u32 = 0;

export let entries: usize = 0; // records of 1 << ENTRY_SHIFT bytes, fields E_* (abi.ts)
let index: usize = 0;           // (u32 lane A, i32 entry + 1 or 0 for an empty slot) pairs
let freeList: usize = 0;        // i32 stack of free entries
let freeCount: i32 = 0;
let held: usize = 0;            // u8 per entry: 1 while the TS side holds messages of its key (hold())

/** Index slots for a pool of `count` entries: a power of two, at least twice the pool. */
function slotsFor(count: i32): u32 {
  let slots: u32 = 2;
  while (slots < <u32>count * 2) slots <<= 1;
  return slots;
}

/** The arena bytes of a pool of `count` entries: records, index, free list and held flags. */
export function hotkeysBytes(count: i32): usize {
  const n = <usize>count;
  return arenaSize(n << ENTRY_SHIFT) + arenaSize(<usize>slotsFor(count) << 3) + arenaSize(n << 2) + arenaSize(n);
}

export function hotkeysConfigure(count: i32): void {
  capacity = count;
  const slots = slotsFor(count);
  indexMask = slots - 1;
  const n = <usize>count;
  entries = arenaAlloc(n << ENTRY_SHIFT);
  index = arenaAlloc(<usize>slots << 3);
  freeList = arenaAlloc(n << 2);
  for (let i = 0; i < count; i++) store<i32>(freeList + (<usize>i << 2), count - 1 - i);
  freeCount = count;
  held = arenaAlloc(n);
  memory.fill(held, 0, n);
}

/**
 * Enlarges the pool to `count` entries. Entries keep their index (and their records: copied);
 * the new ones are free, taken after the entries free now; the index is rebuilt.
 */
export function hotkeysGrow(count: i32): void {
  if (count <= capacity) return;
  const oldEntries = entries;
  const oldIndex = index;
  const oldFree = freeList;
  const oldHeld = held;
  const old = capacity;
  const oldSlots = <usize>indexMask + 1;
  const slots = slotsFor(count);
  const n = <usize>count;
  entries = arenaAlloc(n << ENTRY_SHIFT);
  memory.copy(entries, oldEntries, <usize>old << ENTRY_SHIFT);
  index = arenaAlloc(<usize>slots << 3);
  indexMask = slots - 1;
  freeList = arenaAlloc(n << 2);
  held = arenaAlloc(n);
  memory.copy(held, oldHeld, <usize>old);
  memory.fill(held + <usize>old, 0, n - <usize>old);
  // The new entries at the bottom of the stack (the lowest index taken first), the free ones above.
  const added = count - old;
  for (let i = 0; i < added; i++) store<i32>(freeList + (<usize>i << 2), count - 1 - i);
  memory.copy(freeList + (<usize>added << 2), oldFree, <usize>freeCount << 2);
  freeCount += added;
  capacity = count;
  for (let e = 0; e < old; e++) {
    if (geti(E_STATE, e) == STATE_FREE) continue;
    let s = home(geti(E_TOPIC, e), <u32>geti(E_LANE_A, e), <u32>geti(E_LANE_B, e));
    while (load<i32>(slotAt(s), 4) != 0) s = (s + 1) & indexMask;
    store<u32>(slotAt(s), <u32>geti(E_LANE_A, e));
    store<i32>(slotAt(s), e + 1, 4);
  }
  arenaFree(oldEntries, <usize>old << ENTRY_SHIFT);
  arenaFree(oldIndex, oldSlots << 3);
  arenaFree(oldFree, <usize>old << 2);
  arenaFree(oldHeld, <usize>old);
}

/** Marks entry e held or not (see above). */
export function setHeld(e: i32, on: bool): void {
  store<u8>(held + <usize>e, on ? 1 : 0);
}

/** Whether entry e is held: it may not be freed. */
// @ts-ignore: decorator
@inline export function isHeld(e: i32): bool { return load<u8>(held + <usize>e) != 0; }

// @ts-ignore: decorator
@inline export function geti(field: usize, e: i32): i32 { return load<i32>(entries + (<usize>e << ENTRY_SHIFT) + field); }
// @ts-ignore: decorator
@inline export function seti(field: usize, e: i32, v: i32): void { store<i32>(entries + (<usize>e << ENTRY_SHIFT) + field, v); }
// @ts-ignore: decorator
@inline export function getCount(e: i32): f64 { return load<f64>(entries + (<usize>e << ENTRY_SHIFT) + E_COUNT); }
// @ts-ignore: decorator
@inline export function setCount(e: i32, v: f64): void { store<f64>(entries + (<usize>e << ENTRY_SHIFT) + E_COUNT, v); }
// @ts-ignore: decorator
@inline export function getf(field: usize, e: i32): f64 { return load<f64>(entries + (<usize>e << ENTRY_SHIFT) + field); }
// @ts-ignore: decorator
@inline export function setf(field: usize, e: i32, v: f64): void { store<f64>(entries + (<usize>e << ENTRY_SHIFT) + field, v); }

// @ts-ignore: decorator
@inline
function home(topic: i32, a: u32, b: u32): u32 {
  return (a ^ (b * 0x9e3779b1) ^ (<u32>topic * 0x85ebca77)) & indexMask;
}

// @ts-ignore: decorator
@inline function slotAt(s: u32): usize { return index + (<usize>s << 3); }

/** The entry of a key, or -1. */
export function find(topic: i32, a: u32, b: u32): i32 {
  let s = home(topic, a, b);
  let v = load<i32>(slotAt(s), 4);
  while (v != 0) {
    if (load<u32>(slotAt(s)) == a) {
      const e = v - 1;
      if (geti(E_LANE_B, e) == <i32>b && geti(E_TOPIC, e) == topic) return e;
    }
    s = (s + 1) & indexMask;
    v = load<i32>(slotAt(s), 4);
  }
  return -1;
}

/** A new STATE_CANDIDATE entry for a key known to be absent, or -1 when the pool is full. */
export function insert(topic: i32, a: u32, b: u32, count: f64): i32 {
  if (freeCount == 0) return -1;
  const e = load<i32>(freeList + (<usize>(--freeCount) << 2));
  memory.fill(entries + (<usize>e << ENTRY_SHIFT), 0, <usize>1 << ENTRY_SHIFT);
  seti(E_TOPIC, e, topic);
  seti(E_LANE_A, e, <i32>a);
  seti(E_LANE_B, e, <i32>b);
  setCount(e, count);
  seti(E_STATE, e, STATE_CANDIDATE);
  seti(E_WIDTH, e, 1);
  let s = home(topic, a, b);
  while (load<i32>(slotAt(s), 4) != 0) s = (s + 1) & indexMask;
  store<u32>(slotAt(s), a);
  store<i32>(slotAt(s), e + 1, 4);
  return e;
}

/** Frees an entry and closes the gap it leaves in its probe run. */
export function remove(e: i32): void {
  let s = home(geti(E_TOPIC, e), <u32>geti(E_LANE_A, e), <u32>geti(E_LANE_B, e));
  while (load<i32>(slotAt(s), 4) != e + 1) s = (s + 1) & indexMask;
  // Backward-shift deletion: move later members of the run into the hole when their home
  // position does not lie cyclically in (hole, their slot].
  let hole = s;
  let next = (s + 1) & indexMask;
  for (;;) {
    const v = load<i32>(slotAt(next), 4);
    if (v == 0) break;
    const o = v - 1;
    const h = home(geti(E_TOPIC, o), <u32>geti(E_LANE_A, o), <u32>geti(E_LANE_B, o));
    if (((next - h) & indexMask) >= ((next - hole) & indexMask)) {
      store<u64>(slotAt(hole), load<u64>(slotAt(next)));
      hole = next;
    }
    next = (next + 1) & indexMask;
  }
  store<u64>(slotAt(hole), 0);
  seti(E_STATE, e, STATE_FREE);
  store<i32>(freeList + (<usize>(freeCount++) << 2), e);
}

/** Entries in use. */
export function used(): i32 {
  return capacity - freeCount;
}

export function full(): bool {
  return freeCount == 0;
}
