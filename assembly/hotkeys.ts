// The heavy-hitter table: a fixed pool of entries for the keys whose sketch estimate crossed
// the admission level, each with an exact decayed count from then on and its spread state.
// Entries keep their index for life (the TS side maps an index to the key it names); a
// separate open-addressing index (twice the pool, linear probing, backward-shift deletion)
// finds an entry by (topic, lane A, lane B) — a 64-bit fingerprint per topic.

import { arenaAlloc } from "./memory";

export const FREE: i32 = 0;
export const CANDIDATE: i32 = 1;
export const HOT: i32 = 2;
/** Hot at a lower share because its normal partition was overloaded (spread.ts); >= HOT is hot. */
export const RELIEF: i32 = 3;

export let capacity: i32 = 0;
let indexMask: u32 = 0;

// Entry fields, one array each (struct of arrays: the TS side reads them as typed arrays).
export let eTopic: usize = 0;   // i32
export let eLaneA: usize = 0;   // u32
export let eLaneB: usize = 0;   // u32
export let eCount: usize = 0;   // f64, decayed, in weight units
export let eState: usize = 0;   // i32: FREE | CANDIDATE | HOT | RELIEF
export let eWidth: usize = 0;   // i32: how many partitions a hot key may use
export let eStep: usize = 0;    // i32: stride through the partitions, coprime with eSize
export let eSize: usize = 0;    // i32: the partition count eStep (and the scan window) were made for
export let eReturn: usize = 0;  // i32: 1 when the key cooled and its next message owes a RETURN marker
export let eScanIndex: usize = 0; // i32: where the next scan window of a wide key starts, as an index
export let eScanAt: usize = 0;    // i32: ... and as the partition at that index
export let eCurrent: usize = 0;   // i32: the partition of a hot key's current run
export let eRunLeft: usize = 0;   // i32: messages left in that run (0: choose again)
let index: usize = 0;           // i32: entry + 1, or 0 for an empty index slot
let freeList: usize = 0;        // i32 stack of free entries
let freeCount: i32 = 0;

export function hotkeysConfigure(entries: i32): void {
  capacity = entries;
  let slots: u32 = 2;
  while (slots < <u32>entries * 2) slots <<= 1;
  indexMask = slots - 1;
  const n = <usize>entries;
  eTopic = arenaAlloc(n << 2);
  eLaneA = arenaAlloc(n << 2);
  eLaneB = arenaAlloc(n << 2);
  eCount = arenaAlloc(n << 3);
  eState = arenaAlloc(n << 2);
  eWidth = arenaAlloc(n << 2);
  eStep = arenaAlloc(n << 2);
  eSize = arenaAlloc(n << 2);
  eReturn = arenaAlloc(n << 2);
  eScanIndex = arenaAlloc(n << 2);
  eScanAt = arenaAlloc(n << 2);
  eCurrent = arenaAlloc(n << 2);
  eRunLeft = arenaAlloc(n << 2);
  index = arenaAlloc(<usize>slots << 2);
  freeList = arenaAlloc(n << 2);
  for (let i = 0; i < entries; i++) store<i32>(freeList + (<usize>i << 2), entries - 1 - i);
  freeCount = entries;
}

// @ts-ignore: decorator
@inline export function geti(field: usize, e: i32): i32 { return load<i32>(field + (<usize>e << 2)); }
// @ts-ignore: decorator
@inline export function seti(field: usize, e: i32, v: i32): void { store<i32>(field + (<usize>e << 2), v); }
// @ts-ignore: decorator
@inline export function getCount(e: i32): f64 { return load<f64>(eCount + (<usize>e << 3)); }
// @ts-ignore: decorator
@inline export function setCount(e: i32, v: f64): void { store<f64>(eCount + (<usize>e << 3), v); }

// @ts-ignore: decorator
@inline
function home(topic: i32, a: u32, b: u32): u32 {
  return (a ^ (b * 0x9e3779b1) ^ (<u32>topic * 0x85ebca77)) & indexMask;
}

/** The entry of a key, or -1. */
export function find(topic: i32, a: u32, b: u32): i32 {
  let s = home(topic, a, b);
  let v = load<i32>(index + (<usize>s << 2));
  while (v != 0) {
    const e = v - 1;
    if (geti(eLaneA, e) == <i32>a && geti(eLaneB, e) == <i32>b && geti(eTopic, e) == topic) return e;
    s = (s + 1) & indexMask;
    v = load<i32>(index + (<usize>s << 2));
  }
  return -1;
}

/** A new CANDIDATE entry for a key known to be absent, or -1 when the pool is full. */
export function insert(topic: i32, a: u32, b: u32, count: f64): i32 {
  if (freeCount == 0) return -1;
  const e = load<i32>(freeList + (<usize>(--freeCount) << 2));
  seti(eTopic, e, topic);
  seti(eLaneA, e, <i32>a);
  seti(eLaneB, e, <i32>b);
  setCount(e, count);
  seti(eState, e, CANDIDATE);
  seti(eWidth, e, 1);
  seti(eSize, e, 0);
  seti(eReturn, e, 0);
  seti(eRunLeft, e, 0);
  let s = home(topic, a, b);
  while (load<i32>(index + (<usize>s << 2)) != 0) s = (s + 1) & indexMask;
  store<i32>(index + (<usize>s << 2), e + 1);
  return e;
}

/** Frees an entry and closes the gap it leaves in its probe run. */
export function remove(e: i32): void {
  let s = home(geti(eTopic, e), <u32>geti(eLaneA, e), <u32>geti(eLaneB, e));
  while (load<i32>(index + (<usize>s << 2)) != e + 1) s = (s + 1) & indexMask;
  // Backward-shift deletion: move later members of the run into the hole when their home
  // position does not lie cyclically in (hole, their slot].
  let hole = s;
  let next = (s + 1) & indexMask;
  for (;;) {
    const v = load<i32>(index + (<usize>next << 2));
    if (v == 0) break;
    const o = v - 1;
    const h = home(geti(eTopic, o), <u32>geti(eLaneA, o), <u32>geti(eLaneB, o));
    if (((next - h) & indexMask) >= ((next - hole) & indexMask)) {
      store<i32>(index + (<usize>hole << 2), v);
      hole = next;
    }
    next = (next + 1) & indexMask;
  }
  store<i32>(index + (<usize>hole << 2), 0);
  seti(eState, e, FREE);
  store<i32>(freeList + (<usize>(freeCount++) << 2), e);
}

export function full(): bool {
  return freeCount == 0;
}
